"""The built-in evidence parsers, registered lazily: each is a ``"module:ATTR"`` string imported
only when ``--evidence`` is given. The probe parser comes first: a probe file is also a rig spec."""

from __future__ import annotations

from rigcheck.core.engine.hookspecs import RegisterEvidenceParser, hookimpl


@hookimpl
def rigcheck_evidence_parsers(register: RegisterEvidenceParser) -> None:
    from rigcheck.evidence.parsers import BUILTIN_PARSERS

    register("rigcheck.evidence.parsers.rigcheck_probe:PARSER")
    for reference in BUILTIN_PARSERS:
        register(reference)
