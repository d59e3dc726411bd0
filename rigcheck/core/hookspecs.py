"""The rigcheck plugin API: hook specifications (pluggy project name ``"rigcheck"``).

A plugin is a module (or object) with functions marked ``@rigcheck.hookimpl`` whose names and
arguments match the hooks below. Installed packages expose plugins through the ``rigcheck``
entry-point group::

    # pyproject.toml of a plugin package
    [project.entry-points.rigcheck]
    rack_power = "rigcheck_rack_power"

rigcheck's own checkers are registered through these same hooks (``rigcheck.plugins``).

Every hook receives a ``register`` callback instead of returning values (the pattern of llm and
tox): a plugin calls it once per thing it adds, and rigcheck records which plugin added what, so
that a fault is reported against the right plugin.

Compatibility: hooks and their arguments are versioned by ``rigcheck.__plugin_api__``. Within one
major version, hooks are only added, and a hook only gains arguments that implementations may
leave out (pluggy passes an implementation only the arguments it names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    from rigcheck.core.catalog import GpuSpec
    from rigcheck.core.checker import Checker

PROJECT = "rigcheck"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class RegisterChecker(Protocol):
    def __call__(self, checker: Checker) -> None: ...


class RegisterCatalogEntry(Protocol):
    def __call__(self, entry: GpuSpec | dict[str, Any], *, override: bool = False) -> None: ...


class RegisterFormat(Protocol):
    def __call__(self, name: str, renderer: Any, *, description: str = "", extension: str = "") -> None: ...


class RegisterEvidenceParser(Protocol):
    def __call__(self, parser: Any) -> None: ...


@hookspec
def rigcheck_checkers(register: RegisterChecker) -> None:
    """Register checkers: objects that declare their rules and yield findings.

    Call ``register(checker)`` once per checker. A checker is an instance of a
    :class:`rigcheck.Checker` subclass with a unique ``name``, a tuple of :class:`rigcheck.Rule`
    in ``rules`` (codes unique across all plugins), and ``check(ctx)`` that yields
    :class:`rigcheck.Finding` objects built with its rules. Set ``needs_workload = True`` when
    the checker compares a workload with the rig; it is then skipped when only a rig is checked.

    Example::

        import rigcheck

        RACK_POWER = rigcheck.Rule(
            code="RACK001", name="rack-power-over-limit", summary="Rack draws more than the site allows",
            severity="fail", docs=rigcheck.RuleDocs(what="...", why="...", example="...", fix="..."),
        )

        class RackPower(rigcheck.Checker):
            name = "rack-power"
            rules = (RACK_POWER,)

            def check(self, ctx):
                limit = ctx.rig.site.rack_power_limit_kw if ctx.rig.site else None
                if limit is None:
                    yield RACK_POWER.skipped("site.rack_power_limit_kw is not given",
                                             location=ctx.rig_at("/site"))
                    return
                ...

        @rigcheck.hookimpl
        def rigcheck_checkers(register):
            register(RackPower())
    """


@hookspec
def rigcheck_catalog(register: RegisterCatalogEntry) -> None:
    """Add hardware catalog entries, or replace built-in ones.

    Call ``register(entry)`` with a mapping (the fields of ``specs/hardware/gpus.yaml``, including
    ``source`` and ``as_of``) or a :class:`rigcheck.core.catalog.GpuSpec`. An id that already
    exists is an error unless ``override=True`` is passed.

    Example::

        @rigcheck.hookimpl
        def rigcheck_catalog(register):
            register({"id": "acme-x1", "name": "ACME X1", "aliases": ["X1"], "vendor": "nvidia",
                      "architecture": "Hopper", "compute_capability": "9.0", "memory_gib": 96,
                      "source": "https://acme.example/x1-datasheet.pdf", "as_of": "2026-11-01"})
    """


@hookspec
def rigcheck_formats(register: RegisterFormat) -> None:
    """Add report formats for ``--format NAME``.

    Call ``register(name, renderer)`` where ``renderer(report, options)`` returns the text to
    write; ``renderer`` may also be a ``"module:function"`` string, imported only when the format
    is used, so that unused renderers cost nothing at start-up.

    Example::

        @rigcheck.hookimpl
        def rigcheck_formats(register):
            register("csv", "rigcheck_csv.render:render_csv", description="one row per finding",
                     extension=".csv")
    """


@hookspec
def rigcheck_evidence_parsers(register: RegisterEvidenceParser) -> None:
    """Add parsers that turn measurement outputs (nvidia-smi, nccl-tests, fio...) into facts.

    Call ``register(parser)`` with an object that has a ``name``, ``detect(text) -> bool`` and
    ``parse(text, path) -> dict``. (Evidence rules arrive with the live side; the hook is part
    of API version 1 so that parser plugins can be written against it.)

    Example::

        class DcgmDiag:
            name = "dcgmi-diag"

            def detect(self, text):
                return "Diagnostic" in text and "dcgmi" in text

            def parse(self, text, path):
                return {"dcgm_diag_passed": "Fail" not in text}

        @rigcheck.hookimpl
        def rigcheck_evidence_parsers(register):
            register(DcgmDiag())
    """
