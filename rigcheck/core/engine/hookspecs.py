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
    from pydantic import BaseModel

    from rigcheck.core.catalog.catalog import GpuSpec
    from rigcheck.core.engine.checker import Checker

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


class RegisterConfigSchema(Protocol):
    def __call__(self, model: type[BaseModel], *, namespace: str | None = None) -> None: ...


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

    Call ``register(entry)`` with a mapping (the fields of ``specs/hardware/gpus.yaml``; the required
    and allowed ones are tabled in docs/plugins.md, "Catalog entries": ``id``, ``name``, ``vendor``,
    ``architecture``, ``memory_gib``, ``source`` and ``as_of`` are required) or a
    :class:`rigcheck.GpuSpec`. An id that already exists is refused unless ``override=True`` is
    passed; so is a name or alias that is already a name of an entry from rigcheck or another plugin
    (after case, punctuation and brand prefixes), and an entry that is not a valid ``GpuSpec``. A
    refused entry is an ``ENGINE004`` finding that names the plugin, the entry and every field that
    failed; the plugin's other entries and its checkers are still used.

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


@hookspec
def rigcheck_config_schema(register: RegisterConfigSchema) -> None:
    """Declare the plugin's settings: a pydantic (v2) model that its section of the project config is
    validated against (added in plugin API 1.2).

    Call ``register(Model)`` once. The section is ``plugins-config.NAMESPACE`` of ``.rigcheck.yaml``
    (or ``[tool.rigcheck.plugins-config.NAMESPACE]`` in ``pyproject.toml``); ``NAMESPACE`` is the
    plugin's name unless ``namespace="..."`` is given, which keeps it the same however the plugin is
    loaded (entry point, ``-p module``, the test kit). Names compare as distribution names do
    (``site-policy`` is ``site_policy``). Keys of ``thresholds:`` that start with the namespace
    (``site_policy.warn_fraction``) set the same fields.

    - Every field needs a default: a project that does not configure the plugin runs it with
      ``Model()``. A value the plugin cannot guess is ``Optional`` with ``None``, and the checker
      yields a skip that names the setting.
    - The section is validated when the run starts; a bad value is a config error (exit code 2) at
      its file, line and field, as any other config error. A model that cannot be built with no
      arguments, or a second ``register`` call, is reported against the plugin (``ENGINE004``).
    - Checkers read the validated instance as ``ctx.plugin_config`` (their own plugin's; ``None``
      for a plugin without a model). Each run gets its own copy; treat it as read-only.
    - ``rigcheck check --show-config`` lists each field with where its value came from.

    Example::

        from pydantic import BaseModel, Field

        class SitePolicyConfig(BaseModel):
            model_config = {"extra": "forbid"}      # a typo'd key is an error, not ignored
            warn_fraction: float = Field(0.9, gt=0, le=1, description="Warn above this share of the limit.")
            rack_units: int = Field(42, ge=1, description="Usable units of one rack.")

        @rigcheck.hookimpl
        def rigcheck_config_schema(register):
            register(SitePolicyConfig, namespace="site_policy")

        # .rigcheck.yaml
        plugins-config:
          site_policy: {warn_fraction: 0.8}

        # in a checker
        warn_at = ctx.plugin_config.warn_fraction * limit_kw
    """
