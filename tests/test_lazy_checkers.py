"""Built-in checkers known from the cache (rigcheck.core.engine.lazy_checkers): a run with the cache filled
registers what importing every checker module registers, and nothing is read for a module whose source
changed (docs/performance.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rigcheck.core.engine import lazy_checkers
from rigcheck.core.engine.plugin_manager import PluginHost


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("RIGCHECK_NO_CACHE", raising=False)
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path))
    return tmp_path


def _registered(registry):  # type: ignore[no-untyped-def]
    return (
        [entry.checker.name for entry in registry.checkers],
        {code: entry.rule for code, entry in registry.rules.items()},
        [plugin.as_dict() for plugin in registry.plugins],
        [
            tuple(getattr(entry.checker, attribute) for attribute in lazy_checkers.ATTRIBUTES)
            for entry in registry.checkers
        ],
    )


def test_a_filled_cache_registers_what_the_modules_register(cache: Path) -> None:
    eager = PluginHost(autoload=False).load()  # an empty cache: every module imported, and kept
    assert not any(isinstance(e.checker, lazy_checkers.LazyChecker) for e in eager.checkers)
    assert list(cache.iterdir())
    lazy = PluginHost(autoload=False).load()
    assert all(isinstance(e.checker, lazy_checkers.LazyChecker) for e in lazy.checkers)
    assert _registered(lazy) == _registered(eager)


def test_a_lazy_checker_imports_its_module_when_it_runs(cache: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    PluginHost(autoload=False).load()
    lazy = PluginHost(autoload=False).load()
    checker = next(e.checker for e in lazy.checkers if e.checker.name == "power.psu-sustained")
    module = checker._module
    assert module in sys.modules  # imported by the first load, which filled the cache
    real = checker.load()
    assert type(real).__module__ == module and real.name == checker.name


def test_an_edited_module_is_imported_not_read_from_the_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    PluginHost(autoload=False).load()
    monkeypatch.setattr(lazy_checkers, "source_digest", lambda module_name: f"edited {module_name}")
    registry = PluginHost(autoload=False).load()
    assert not any(isinstance(e.checker, lazy_checkers.LazyChecker) for e in registry.checkers)


def test_with_the_cache_off_every_module_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIGCHECK_NO_CACHE", "1")
    registry = PluginHost(autoload=False).load()
    assert not any(isinstance(e.checker, lazy_checkers.LazyChecker) for e in registry.checkers)


def test_deciding_what_runs_loads_only_what_runs(cache: Path) -> None:
    """The engine decides whether a checker runs from the kept entry alone (``ATTRIBUTES``): a rig checked
    without evidence loads no evidence checker, and an NVIDIA rig no ROCm checker. ``gpu_vendor`` was once
    read from the checker itself, and every skipped checker module was imported (+35 ms a cold check)."""
    from rigcheck.core.engine.engine import RunOptions, build_catalog, run_checks
    from rigcheck.core.spec.documents import parse_spec

    PluginHost(autoload=False).load()  # fills the cache
    registry = PluginHost(autoload=False).load()
    rig = parse_spec(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n"
        "  - name: n\n    gpus: {model: H100 SXM5 80GB, count: 8}\n",
        "rig.yaml",
    )
    report = run_checks(rig, None, registry, build_catalog(registry), RunOptions())
    status = {run.name: run.status for run in report.checkers}
    skipped = {name for name, value in status.items() if value != "ran"}
    assert any(name.startswith("evidence.") for name in skipped) and any(
        name.startswith("rocm.") for name in skipped
    )
    for entry in registry.checkers:
        if entry.checker.name in skipped:
            assert entry.checker._real is None, f"{entry.checker.name} was loaded to be skipped"
