"""How an estimate with a range is judged against a workload's target (the BW rules' policy).

An estimate comes as a range (low, default, high) from the efficiency factors of
``specs/rules/throughput.yaml``. A target is missed for sure only when even the optimistic end of the
range misses it, so that a fail is never the estimator's pessimism; when only the default misses it, the
plan is at risk and the finding warns.
"""

from __future__ import annotations

from typing import Any

from rigcheck.core.engine.findings import Finding
from rigcheck.core.engine.rules import Rule


def against_target(
    rule: Rule, message: str, *, optimistic_misses: bool, default_misses: bool, fix: str, **where: Any
) -> Finding:
    """``rule``'s finding for an estimate against a target: fail when even the optimistic end of the
    estimate misses it, warn (saying it is met only at the optimistic end) when the default misses it,
    pass otherwise. ``where`` holds the finding's location, evidence, subject and related pointers; the
    fix is given only to a fail or a warning."""
    if optimistic_misses:
        return rule.failed(message, fix=fix, **where)
    if default_misses:
        return rule.warned(f"{message} is met only at the optimistic end", fix=fix, **where)
    return rule.passed(message, **where)
