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
