"""The committed index of built-in checkers (rigcheck/plugins/builtin_index.json) matches the modules, and
loading through it registers what importing every module registers (docs/performance.md)."""

from __future__ import annotations

import json

from rigcheck.core import builtin_index
from rigcheck.core.plugin_manager import PluginHost


def test_the_index_matches_the_checker_modules() -> None:
    with open(builtin_index.INDEX_PATH, encoding="utf-8") as handle:
        committed = json.load(handle)
    assert committed == builtin_index.build_index(), "run: python -m rigcheck.core.builtin_index"


def test_lazy_checkers_register_what_the_modules_register(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lazy = PluginHost(autoload=False).load()
    monkeypatch.setattr(builtin_index, "_INDEX", {})
    eager = PluginHost(autoload=False).load()
    assert [e.checker.name for e in lazy.checkers] == [e.checker.name for e in eager.checkers]
    assert {c: e.rule for c, e in lazy.rules.items()} == {c: e.rule for c, e in eager.rules.items()}
    assert [p.as_dict() for p in lazy.plugins] == [p.as_dict() for p in eager.plugins]
    for mine, theirs in zip(lazy.checkers, eager.checkers, strict=True):
        for attribute in builtin_index.ATTRIBUTES:
            assert getattr(mine.checker, attribute) == getattr(theirs.checker, attribute)
    assert any(isinstance(e.checker, builtin_index.LazyChecker) for e in lazy.checkers)


def test_an_edited_module_is_imported_not_read_from_the_index(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(builtin_index, "source_digest", lambda module_name: "edited")
    registry = PluginHost(autoload=False).load()
    assert not any(isinstance(e.checker, builtin_index.LazyChecker) for e in registry.checkers)
