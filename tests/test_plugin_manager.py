"""Loading plugins: built-ins through the same hooks, entry points, -p, blocking, and errors."""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import pytest

from rigcheck import Checker, Rule, RuleDocs, Severity, hookimpl
from rigcheck.core.engine.errors import PluginError
from rigcheck.core.engine.plugin_manager import PluginHost

DOCS = RuleDocs(what="w", why="y", example="e", fix="f")


def checker_plugin(code: str, name: str = "c") -> object:
    the_rule = Rule(code=code, name="some-rule", summary="s", severity=Severity.WARN, docs=DOCS)

    class One(Checker):
        rules = (the_rule,)

        def check(self, ctx):  # type: ignore[no-untyped-def]
            return []

    One.name = name

    class Plugin:
        @hookimpl
        def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
            register(One())

    return Plugin()


def test_builtins_register_through_the_hooks() -> None:
    registry = PluginHost(autoload=False).load()
    builtin_names = {info.name for info in registry.plugins if info.builtin}
    assert "rigcheck.plugins.platform.system_ram" in builtin_names
    assert {"PLT001", "PLT002", "PLT003", "SPEC001", "ENGINE001"} <= set(registry.rules)
    assert {"text", "json"} <= set(registry.formats)
    assert registry.rules["PLT001"].checker == "platform.system-ram"


def test_misspelt_hook_is_an_error_naming_the_plugin() -> None:
    class Typo:
        @hookimpl
        def rigcheck_checker(self, register):  # type: ignore[no-untyped-def]
            pass

    with pytest.raises(PluginError) as excinfo:
        PluginHost(autoload=False, builtins=(), extra_plugins=[("typo-plugin", Typo())]).load()
    message = str(excinfo.value)
    assert (
        "typo-plugin" in message
        and "rigcheck_checker" in message
        and "did you mean 'rigcheck_checkers'" in message
    )


def test_hook_with_unknown_argument_is_an_error() -> None:
    class BadArgs:
        @hookimpl
        def rigcheck_checkers(self, register, extra):  # type: ignore[no-untyped-def]
            pass

    with pytest.raises(PluginError, match="bad-args"):
        PluginHost(autoload=False, builtins=(), extra_plugins=[("bad-args", BadArgs())]).load()


def test_duplicate_rule_code_names_both_plugins() -> None:
    plugins = [("first", checker_plugin("DUP001", "a")), ("second", checker_plugin("DUP001", "b"))]
    with pytest.raises(PluginError) as excinfo:
        PluginHost(autoload=False, builtins=(), extra_plugins=plugins).load()
    assert (
        "'first'" in str(excinfo.value)
        and "'second'" in str(excinfo.value)
        and "DUP001" in str(excinfo.value)
    )


def test_plugin_cannot_take_a_builtin_code() -> None:
    with pytest.raises(PluginError, match="PLT001"):
        PluginHost(autoload=False, extra_plugins=[("evil", checker_plugin("PLT001", "evil"))]).load()


def test_registration_hook_that_raises_is_a_fault_not_a_crash() -> None:
    class Raises:
        @hookimpl
        def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
            raise RuntimeError("no config")

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("raises", Raises())]).load()
    [fault] = registry.faults
    assert (fault.plugin, fault.stage) == ("raises", "rigcheck_checkers")
    assert "RuntimeError: no config" in fault.message


def test_invalid_checker_object_is_a_fault() -> None:
    class NotAChecker:
        @hookimpl
        def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
            register(object())

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("odd", NotAChecker())]).load()
    assert "non-empty string 'name'" in registry.faults[0].message


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Two installed plugins (one broken) behind importlib.metadata.entry_points."""
    good = types.ModuleType("rigcheck_fake_good")
    good.plugin = checker_plugin("EPT001", "from-entry-point")  # type: ignore[attr-defined]
    sys.modules["rigcheck_fake_good"] = good
    points = [
        EntryPoint(name="good", value="rigcheck_fake_good:plugin", group="rigcheck"),
        EntryPoint(name="broken", value="rigcheck_fake_missing_module:plugin", group="rigcheck"),
    ]

    def entry_points(group: str):  # type: ignore[no-untyped-def]
        return [point for point in points if point.group == group]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    monkeypatch.delenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("RIGCHECK_LOAD_PLUGINS", raising=False)
    yield
    del sys.modules["rigcheck_fake_good"]


@pytest.mark.usefixtures("fake_entry_points")
class TestEntryPoints:
    def test_loaded_and_broken_one_is_a_fault(self) -> None:
        registry = PluginHost(builtins=()).load()
        assert "EPT001" in registry.rules
        [fault] = registry.faults
        assert fault.plugin == "broken" and fault.stage == "import" and "ModuleNotFoundError" in fault.message

    def test_autoload_disabled(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
        registry = PluginHost(builtins=()).load()
        assert "EPT001" not in registry.rules and registry.faults == []

    def test_allowlist(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("RIGCHECK_LOAD_PLUGINS", "good")
        registry = PluginHost(builtins=()).load()
        assert "EPT001" in registry.rules and registry.faults == []
        monkeypatch.setenv("RIGCHECK_LOAD_PLUGINS", "")
        assert PluginHost(builtins=()).load().rules.keys().isdisjoint({"EPT001"})

    def test_blocked_by_name(self) -> None:
        registry = PluginHost(builtins=(), blocked=["good", "broken"]).load()
        assert "EPT001" not in registry.rules and registry.faults == []


def test_dash_p_module(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("rigcheck_fake_cli_plugin")
    module.__version__ = "1.2.3"  # type: ignore[attr-defined]
    plugin = checker_plugin("CLI001", "cli-plugin")
    module.rigcheck_checkers = plugin.rigcheck_checkers  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rigcheck_fake_cli_plugin", module)
    registry = PluginHost(autoload=False, builtins=(), extra_modules=["rigcheck_fake_cli_plugin"]).load()
    assert registry.rules["CLI001"].plugin.version == "1.2.3"
    with pytest.raises(PluginError, match="cannot import plugin module 'no_such_module_here'"):
        PluginHost(autoload=False, builtins=(), extra_modules=["no_such_module_here"]).load()


def test_trace_logs_hook_calls(capsys: pytest.CaptureFixture[str]) -> None:
    PluginHost(autoload=False, trace=True).load()
    err = capsys.readouterr().err
    assert "calling rigcheck_checkers of plugin rigcheck.plugins.platform.system_ram" in err
    assert "registered checker platform.system-ram" in err
