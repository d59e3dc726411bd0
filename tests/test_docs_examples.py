"""The code in docs/plugins.md works as written."""

from __future__ import annotations

import re
import sys
import types

from rigcheck.core.engine.engine import RunOptions, build_catalog, run_checks
from rigcheck.core.engine.findings import Severity
from rigcheck.core.engine.plugin_manager import PluginHost
from rigcheck.core.spec.documents import parse_spec

from .conftest import REPO


def test_plugin_tutorial_checker_runs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code = re.search(r"```python\n(.*?)\n```", (REPO / "docs" / "plugins.md").read_text(), re.S).group(1)
    module = types.ModuleType("rigcheck_site_policy")
    exec(compile(code, "docs/plugins.md", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "rigcheck_site_policy", module)
    registry = PluginHost(autoload=False, extra_modules=["rigcheck_site_policy"]).load()
    rig = parse_spec(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: p\nlabels: {env: production}\nnodes:\n"
        "  - gpus: {model: RTX 4090}\n  - gpus: {model: L40S}\n",
        "prod.yaml",
    )
    report = run_checks(rig, None, registry, build_catalog(registry), RunOptions(select=("SITE",)))
    verdicts = [(f.severity, f.location.line) for f in report.findings]
    assert verdicts == [(Severity.FAIL, 6), (Severity.PASS, 7)]


def test_plugin_tutorial_tests_pass_with_the_test_kit(monkeypatch, rigcheck_run) -> None:  # type: ignore[no-untyped-def]
    blocks = re.findall(r"```python\n(.*?)\n```", (REPO / "docs" / "plugins.md").read_text(), re.S)
    plugin = types.ModuleType("rigcheck_site_policy")
    exec(compile(blocks[0], "docs/plugins.md", "exec"), plugin.__dict__)
    monkeypatch.setitem(sys.modules, "rigcheck_site_policy", plugin)
    tests: dict[str, object] = {}
    exec(compile(blocks[1], "docs/plugins.md", "exec"), tests)
    names = [name for name in tests if name.startswith("test_")]
    assert names == ["test_consumer_gpu_fails_on_its_line", "test_lab_rigs_are_not_checked"]
    for name in names:
        tests[name](rigcheck_run)  # type: ignore[operator]


def test_plugin_base_class_example_gives_the_tutorials_verdicts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """docs/plugins.md 'Base classes that own the walk': the tutorial's checker as a PerGpuTypeChecker
    finds the same things (a fail on the consumer GPU's line, a pass on the L40S's)."""
    text = (REPO / "docs" / "plugins.md").read_text()
    tutorial = re.search(r"```python\n(.*?)\n```", text, re.S).group(1)
    walk = re.search(r"## Base classes that own the walk.*?```python\n(.*?)\n```", text, re.S).group(1)
    assert "PerGpuTypeChecker" in walk
    module = types.ModuleType("rigcheck_site_policy_walk")
    exec(compile(tutorial, "docs/plugins.md", "exec"), module.__dict__)
    exec(compile(walk, "docs/plugins.md", "exec"), module.__dict__)  # replaces ConsumerGpuPolicy
    monkeypatch.setitem(sys.modules, "rigcheck_site_policy_walk", module)
    registry = PluginHost(autoload=False, extra_modules=["rigcheck_site_policy_walk"]).load()
    rig = parse_spec(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: p\nlabels: {env: production}\nnodes:\n"
        "  - gpus: {model: RTX 4090}\n  - gpus: {model: L40S}\n",
        "prod.yaml",
    )
    report = run_checks(rig, None, registry, build_catalog(registry), RunOptions(select=("SITE",)))
    assert [(f.severity, f.location.line) for f in report.findings] == [
        (Severity.FAIL, 6),
        (Severity.PASS, 7),
    ]
