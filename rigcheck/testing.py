"""A test kit for plugin authors: build specs, run rigcheck with your plugin, assert findings.

As a pytest plugin (fixtures ``rigcheck_run`` and ``rigcheck_plugins``)::

    # conftest.py
    pytest_plugins = ["rigcheck.testing"]

    # test_rack_power.py
    import rigcheck_rack_power

    def test_rack_over_limit(rigcheck_run):
        result = rigcheck_run(
            rig={"site": {"rack_power_limit_kw": 20},
                 "nodes": [{"count": 4, "gpus": {"model": "H100 SXM", "count": 8}}]},
            plugins=[rigcheck_rack_power],
            select=["RACK"],
        )
        result.assert_finding("RACK001", "fail", pointer="/site/rack_power_limit_kw")

or without pytest: ``rigcheck.testing.run(rig_yaml, plugins=[module])``. Specs are dicts (the
``apiVersion``, ``kind`` and ``name`` are filled in) or YAML text, which keeps line numbers you can
assert on. Installed plugins are not auto-loaded, so a test sees rigcheck's built-in checkers plus
exactly the plugins it names. ``config=`` is a project config (a dict, or YAML text for line numbers
in its errors): ``run(rig, plugins=[module], config={"plugins-config": {"site_policy": {...}}})``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.report.report import Report

__all__ = ["CheckResult", "rig_yaml", "run", "workload_yaml"]

Spec = Mapping[str, Any] | str


def rig_yaml(spec: Spec, *, name: str = "test-rig") -> str:
    """YAML text of a rig: a dict gets ``apiVersion``, ``kind`` and ``name`` filled in."""
    return _yaml(spec, "Rig", name)


def workload_yaml(spec: Spec, *, name: str = "test-workload") -> str:
    """YAML text of a workload (see :func:`rig_yaml`)."""
    return _yaml(spec, "Workload", name)


def _yaml(spec: Spec, kind: str, name: str) -> str:
    if isinstance(spec, str):
        return textwrap.dedent(spec)
    document = {"apiVersion": "rigcheck/v1", "kind": kind, "name": name, **dict(spec)}
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


@dataclass
class CheckResult:
    """The report of one run, with helpers to find and assert findings."""

    report: Report
    rig_text: str
    workload_text: str | None = None

    @property
    def findings(self) -> list[Finding]:
        return self.report.findings

    @property
    def exit_code(self) -> int:
        return self.report.exit_code

    def codes(self, *severities: str | Severity) -> list[str]:
        """Codes of the findings, optionally only those of the given severities, in report order."""
        wanted = {Severity(s) for s in severities}
        return [f.code for f in self.findings if not wanted or f.severity in wanted]

    def find(
        self,
        code: str,
        severity: str | Severity | None = None,
        *,
        line: int | None = None,
        pointer: str | None = None,
        message: str | None = None,
    ) -> list[Finding]:
        """Findings of ``code`` matching every criterion given (``message``: a substring)."""
        out = []
        for finding in self.findings:
            location = finding.location
            if finding.code != code:
                continue
            if severity is not None and finding.severity is not Severity(severity):
                continue
            if line is not None and (location is None or location.line != line):
                continue
            if pointer is not None and (location is None or location.pointer != pointer):
                continue
            if message is not None and message not in finding.message:
                continue
            out.append(finding)
        return out

    def one(self, code: str, severity: str | Severity | None = None, **criteria: Any) -> Finding:
        """The single finding of ``code`` matching the criteria; fails with the report's findings listed."""
        found = self.find(code, severity, **criteria)
        if len(found) != 1:
            raise AssertionError(
                f"expected one {code} finding ({_criteria(severity, criteria)}), found {len(found)}\n{self.describe()}"
            )
        return found[0]

    def assert_finding(self, code: str, severity: str | Severity | None = None, **criteria: Any) -> Finding:
        """Assert at least one matching finding and return the first."""
        found = self.find(code, severity, **criteria)
        if not found:
            raise AssertionError(f"no {code} finding ({_criteria(severity, criteria)})\n{self.describe()}")
        return found[0]

    def assert_no(self, code: str, severity: str | Severity | None = None) -> None:
        """Assert there is no finding of ``code`` (of ``severity``, if given)."""
        found = self.find(code, severity)
        if found:
            raise AssertionError(f"unexpected {code} finding(s)\n{self.describe()}")

    def describe(self) -> str:
        lines = [f"{len(self.findings)} finding(s):"]
        for finding in self.findings:
            where = f"{finding.location.line}:{finding.location.pointer}" if finding.location else "-"
            lines.append(f"  {finding.code} {finding.severity.value} at {where}: {finding.message}")
        return "\n".join(lines)


def _criteria(severity: Any, criteria: Mapping[str, Any]) -> str:
    parts = [f"severity={Severity(severity).value}"] if severity is not None else []
    parts += [f"{key}={value!r}" for key, value in criteria.items() if value is not None]
    return ", ".join(parts) or "any"


def run(
    rig: Spec,
    workload: Spec | None = None,
    *,
    plugins: Iterable[Any] = (),
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    fail_on: str | None = None,
    builtins: bool = True,
    timeout_s: float = 10.0,
    config: Mapping[str, Any] | str | None = None,
) -> CheckResult:
    """Check ``rig`` (and ``workload``) with rigcheck's built-in checkers (unless ``builtins=False``)
    and ``plugins`` (modules or objects with ``@rigcheck.hookimpl`` functions).

    ``config`` is a project config, as a dict or as the YAML text of a ``.rigcheck.yaml``: the run is
    then what ``rigcheck check`` does with that file (its ``plugins-config`` and ``thresholds``, rule
    selection, severity overrides, waivers, and suppression comments in the specs), with ``select``,
    ``ignore`` and ``fail_on`` acting as the command line over it. A bad config raises
    :class:`rigcheck.SpecError`, as ``rigcheck check`` exits 2 on it."""
    from rigcheck.core.engine.engine import RunOptions, build_catalog, run_checks
    from rigcheck.core.engine.plugin_manager import PluginHost
    from rigcheck.core.spec.documents import parse_spec

    extra = [(_plugin_name(plugin, index), plugin) for index, plugin in enumerate(plugins)]
    host = PluginHost(
        autoload=False, extra_plugins=extra, builtins=None if builtins else ["rigcheck.plugins.formats"]
    )
    registry = host.load()
    rig_text = rig_yaml(rig)
    workload_text = workload_yaml(workload) if workload is not None else None
    rig_doc = parse_spec(rig_text, "rig.yaml", kind="Rig")
    workload_doc = parse_spec(workload_text, "workload.yaml", kind="Workload") if workload_text else None
    if config is not None:
        return CheckResult(
            _run_configured(rig_doc, workload_doc, registry, config, select, ignore, fail_on, timeout_s),
            rig_text,
            workload_text,
        )
    options = RunOptions(
        select=tuple(code.upper() for code in select or ()),
        ignore=tuple(code.upper() for code in ignore or ()),
        fail_on=Severity(fail_on or "fail"),
        timeout_s=timeout_s,
    )
    report = run_checks(rig_doc, workload_doc, registry, build_catalog(registry), options)
    return CheckResult(report, rig_text, workload_text)


def _run_configured(
    rig_doc: Any,
    workload_doc: Any,
    registry: Any,
    config: Mapping[str, Any] | str,
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
    fail_on: str | None,
    timeout_s: float,
) -> Report:
    """The run of ``rigcheck check`` with ``config`` as its project config and the arguments as its
    command line."""
    from rigcheck.core.engine.config import settings_from
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.lint.lint import Pipeline

    cli: dict[str, Any] = {}
    if select is not None:
        cli["select"] = [code.upper() for code in select]
    if ignore is not None:
        cli["ignore"] = [code.upper() for code in ignore]
    if fail_on is not None:
        cli["fail-on"] = fail_on
    settings = settings_from(config, cli=cli)
    pipeline = Pipeline(registry, build_catalog(registry), settings, timeout_s)
    return pipeline.check(rig_doc, workload_doc)


def _plugin_name(plugin: Any, index: int) -> str:
    return str(getattr(plugin, "__name__", None) or getattr(plugin, "name", None) or f"test-plugin-{index}")


# -- pytest fixtures ---------------------------------------------------------------------------------

try:
    import pytest
except ModuleNotFoundError:  # the helpers above work without pytest
    pytest = None  # type: ignore[assignment]


@dataclass
class _Plugins:
    """Plugins registered for one test with ``rigcheck_plugins.add(plugin)``."""

    items: list[Any] = field(default_factory=list)

    def add(self, plugin: Any) -> Any:
        self.items.append(plugin)
        return plugin


if pytest is not None:

    @pytest.fixture
    def rigcheck_plugins() -> _Plugins:
        """Plugins every ``rigcheck_run`` call of this test uses (in addition to its ``plugins=``)."""
        return _Plugins()

    @pytest.fixture
    def rigcheck_run(rigcheck_plugins: _Plugins, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
        """``rigcheck_run(rig, workload=None, plugins=(), select=None, config=None, ...)`` -> :class:`CheckResult`
        (the arguments of :func:`run`)."""
        monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")

        def check(rig: Spec, workload: Spec | None = None, *, plugins: Iterable[Any] = (), **options: Any):  # type: ignore[no-untyped-def]
            return run(rig, workload, plugins=[*rigcheck_plugins.items, *plugins], **options)

        return check
