"""Issue 17, the plugin API as an outside author meets it: settings for plugins (``rigcheck_config_schema``,
``plugins-config``, ``ctx.plugin_config``), a ``check()`` without ``yield``, bad and clashing catalog
entries, ``-p`` and hook-argument errors, the public names, and the example plugin's labels."""

from __future__ import annotations

import os
import re
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

import rigcheck
from rigcheck.core.engine.errors import PluginError
from rigcheck.core.engine.plugin_manager import PluginHost
from rigcheck.testing import run

REPO = Path(__file__).resolve().parents[1]
PLUGINS_MD = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
DOCS = rigcheck.RuleDocs(what="w", why="y", example="e", fix="f")
RIG = {"nodes": [{"gpus": {"model": "L40S"}}]}


class DcConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    warn_fraction: float = Field(0.9, gt=0, le=1)
    rack_units: int = 42
    allowed: list[str] = ["L40S"]


def plugin(
    name: str = "dc_plugin",
    *,
    model: Any = DcConfig,
    namespace: str | None = "dc_policy",
    code: str = "DCP001",
) -> types.ModuleType:
    """A module whose checker (rule ``code``) reports ``ctx.plugin_config``; it registers ``model``."""
    module = types.ModuleType(name)
    rule = rigcheck.Rule(code=code, name="dc-settings", summary="s", severity="warn", docs=DOCS)

    class Settings(rigcheck.Checker):
        rules = (rule,)

        def check(self, ctx):  # type: ignore[no-untyped-def]
            yield rule.passed(repr(ctx.plugin_config), location=ctx.rig_at(""))

    Settings.name = f"{name}.settings"

    @rigcheck.hookimpl
    def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
        register(Settings())

    module.rigcheck_checkers = rigcheck_checkers  # type: ignore[attr-defined]
    if model is not None:

        @rigcheck.hookimpl
        def rigcheck_config_schema(register):  # type: ignore[no-untyped-def]
            register(model, namespace=namespace)

        module.rigcheck_config_schema = rigcheck_config_schema  # type: ignore[attr-defined]
    return module


def settings_seen(result: Any) -> str:
    return result.one("DCP001").message


# -- 1. settings for plugins ----------------------------------------------------------------------


class TestPluginSettings:
    def test_defaults_when_the_project_sets_nothing(self) -> None:
        result = run(RIG, plugins=[plugin()], select=["DCP"])
        assert settings_seen(result) == "DcConfig(warn_fraction=0.9, rack_units=42, allowed=['L40S'])"

    def test_values_from_plugins_config_and_thresholds(self) -> None:
        config = {
            "plugins-config": {"dc-policy": {"warn_fraction": 0.5}},  # names compare as distributions do
            "thresholds": {"dc_policy.rack_units": 47},
        }
        result = run(RIG, plugins=[plugin()], select=["DCP"], config=config)
        assert settings_seen(result) == "DcConfig(warn_fraction=0.5, rack_units=47, allowed=['L40S'])"

    def test_a_plugin_without_a_model_sees_none(self) -> None:
        assert settings_seen(run(RIG, plugins=[plugin(model=None)], select=["DCP"])) == "None"

    def test_the_namespace_defaults_to_the_plugin_name(self) -> None:
        config = {"plugins_config": {"dc_plugin": {"rack_units": 40}}}
        result = run(RIG, plugins=[plugin(namespace=None)], select=["DCP"], config=config)
        assert "rack_units=40" in settings_seen(result)

    def test_each_run_gets_its_own_copy(self) -> None:
        class Mutable(BaseModel):
            seen: list[str] = []

        rule = rigcheck.Rule(code="MUT001", name="mutates", summary="s", severity="warn", docs=DOCS)

        class Mutates(rigcheck.Checker):
            name = "mutates"
            rules = (rule,)

            def check(self, ctx):  # type: ignore[no-untyped-def]
                ctx.plugin_config.seen.append("x")
                yield rule.passed(str(len(ctx.plugin_config.seen)), location=ctx.rig_at(""))

        module = types.ModuleType("mutates")
        module.rigcheck_checkers = rigcheck.hookimpl(lambda register: register(Mutates()))  # type: ignore[attr-defined]
        module.rigcheck_config_schema = rigcheck.hookimpl(lambda register: register(Mutable))  # type: ignore[attr-defined]
        registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("mutates", module)]).load()
        from rigcheck.core.engine.engine import build_catalog, run_checks
        from rigcheck.core.spec.documents import parse_spec
        from rigcheck.testing import rig_yaml

        doc = parse_spec(rig_yaml(RIG), "rig.yaml", kind="Rig")
        catalog = build_catalog(registry)
        for _ in range(2):
            report = run_checks(doc, None, registry, catalog)
            assert [f.message for f in report.findings if f.code == "MUT001"] == ["1"]

    def test_a_bad_value_names_file_line_and_field(self) -> None:
        config = (
            "plugins-config:\n  dc_policy:\n    rack_units: 40\n    warn_fraction: 1.5\n    alowed: [H100]\n"
        )
        with pytest.raises(rigcheck.SpecError) as excinfo:
            run(RIG, plugins=[plugin()], config=config)
        problems = {problem.pointer: problem for problem in excinfo.value.problems}
        value = problems["/plugins-config/dc_policy/warn_fraction"]
        assert value.line == 4 and value.code == "CONFIG001"
        assert (
            "less than or equal to 1 (got 1.5)" in value.message
            and "plugin dc_plugin, DcConfig" in value.message
        )
        unknown = problems["/plugins-config/dc_policy/alowed"]
        assert unknown.line == 5 and "unknown key 'alowed'; did you mean 'allowed'?" in unknown.message

    def test_a_bad_plugin_threshold_is_an_error_at_its_line(self) -> None:
        with pytest.raises(rigcheck.SpecError) as excinfo:
            run(RIG, plugins=[plugin()], config="select: [DCP]\nthresholds:\n  dc_policy.rack_units: many\n")
        [problem] = excinfo.value.problems
        assert (problem.line, problem.pointer) == (3, "/thresholds/dc_policy.rack_units")
        assert "rack_units: Input should be a valid integer" in problem.message
        with pytest.raises(
            rigcheck.SpecError,
            match="no rule file or plugin config namespace 'dc_polcy'; did you mean 'dc_policy'",
        ):
            run(RIG, plugins=[plugin()], config={"thresholds": {"dc_polcy.rack_units": 3}})
        with pytest.raises(rigcheck.SpecError, match="sets a value that plugins-config sets too"):
            run(
                RIG,
                plugins=[plugin()],
                config={
                    "plugins-config": {"dc_policy": {"rack_units": 1}},
                    "thresholds": {"dc_policy.rack_units": 2},
                },
            )

    def test_a_section_for_no_loaded_plugin_is_an_error(self) -> None:
        with pytest.raises(
            rigcheck.SpecError,
            match="'dc_polcy' is the settings namespace of no loaded plugin; did you mean 'dc_policy'",
        ):
            run(RIG, plugins=[plugin()], config={"plugins-config": {"dc_polcy": {}}})
        with pytest.raises(rigcheck.SpecError, match="plugin 'dc_plugin' has no settings"):
            run(RIG, plugins=[plugin(model=None)], config={"plugins-config": {"dc_plugin": {}}})

    def test_a_model_without_defaults_is_a_fault_of_the_plugin(self) -> None:
        class Needs(BaseModel):
            limit_kw: float

        result = run(RIG, plugins=[plugin(model=Needs)], select=["DCP", "ENGINE"])
        fault = result.one("ENGINE004", "fail", message="rigcheck_config_schema")
        assert "needs a default for every field" in fault.message and "limit_kw" in fault.message
        assert "its checkers ran with ctx.plugin_config = None" in fault.message
        assert settings_seen(result) == "None"  # the run went on

    @pytest.mark.parametrize(
        ("model", "namespace", "message"),
        [
            (dict, "x", "takes a pydantic BaseModel subclass"),
            (DcConfig, "power", "the name of rigcheck's rule file"),
            (DcConfig, "a.b", "not a plain name"),
        ],
    )
    def test_what_register_refuses(self, model: Any, namespace: str, message: str) -> None:
        result = run(RIG, plugins=[plugin(model=model, namespace=namespace)], select=["ENGINE"])
        assert message in result.one("ENGINE004", "fail").message

    def test_two_plugins_cannot_share_a_namespace(self) -> None:
        plugins = [("one", plugin("one", code="ONE001")), ("two", plugin("two", code="TWO001"))]
        with pytest.raises(
            PluginError, match="config namespace 'dc_policy' is claimed by plugin 'one' and by plugin 'two'"
        ):
            PluginHost(autoload=False, builtins=(), extra_plugins=plugins).load()

    def test_the_api_version_and_the_hook(self) -> None:
        major, minor = (int(part) for part in rigcheck.__plugin_api__.split("."))
        assert major == 1 and minor >= 2  # 1.2 added the config schema hook; minors only add
        registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("dc", plugin())]).load()
        [info] = registry.plugins
        assert (
            "rigcheck_config_schema" in info.hooks and registry.config_schemas["dc"].namespace == "dc_policy"
        )


PLUGIN_SOURCE = """
from pydantic import BaseModel, ConfigDict, Field
import rigcheck

class DcConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    warn_fraction: float = Field(0.9, gt=0, le=1)
    rack_units: int = 42

RULE = rigcheck.Rule(code="DCP001", name="dc-settings", summary="s", severity="warn",
                     docs=rigcheck.RuleDocs(what="w", why="y", example="e", fix="f"))

class Settings(rigcheck.Checker):
    name = "dc.settings"
    rules = (RULE,)

    def check(self, ctx):
        yield RULE.passed(repr(ctx.plugin_config), location=ctx.rig_at(""))

@rigcheck.hookimpl
def rigcheck_checkers(register):
    register(Settings())

@rigcheck.hookimpl
def rigcheck_config_schema(register):
    register(DcConfig, namespace="dc_policy")
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a rig and the plugin module ``dc_cli_plugin`` importable for ``-p``."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "dc_cli_plugin.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.delitem(sys.modules, "dc_cli_plugin", raising=False)
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "rig.yaml").write_text(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: L40S}\n", encoding="utf-8"
    )
    monkeypatch.chdir(folder)
    return folder


class TestPluginSettingsOnTheCommandLine:
    CONFIG = (
        "select: [DCP]\nplugins-config:\n  dc_policy:\n    warn_fraction: 0.8\n"
        "thresholds:\n  dc_policy.rack_units: 40\n"
    )

    def test_check_uses_them(self, project: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
        (project / ".rigcheck.yaml").write_text(self.CONFIG, encoding="utf-8")
        result = run_cli("check", "rig.yaml", "-p", "dc_cli_plugin", "--format", "json")
        [finding] = [f for f in result.json()["findings"] if f["code"] == "DCP001"]
        assert finding["message"] == "DcConfig(warn_fraction=0.8, rack_units=40)"

    def test_show_config_gives_each_field_its_origin(self, project: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
        (project / ".rigcheck.yaml").write_text(self.CONFIG, encoding="utf-8")
        out = run_cli("check", "rig.yaml", "-p", "dc_cli_plugin", "--show-config").out
        lines = {line.split(" = ")[0].strip(): line for line in out.splitlines() if " = " in line}
        assert re.search(r"= 0\.8 +# \.rigcheck\.yaml:4$", lines["plugins-config.dc_policy.warn_fraction"])
        assert re.search(
            r"= 40 +# \.rigcheck\.yaml:6 \(thresholds\)$", lines["plugins-config.dc_policy.rack_units"]
        )
        (project / ".rigcheck.yaml").unlink()
        out = run_cli("check", "rig.yaml", "-p", "dc_cli_plugin", "--show-config").out
        assert re.search(r"plugins-config\.dc_policy\.rack_units += 42 +# default", out)

    def test_a_bad_value_exits_2_with_file_line_and_field(self, project: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
        (project / ".rigcheck.yaml").write_text(self.CONFIG.replace("0.8", "2"), encoding="utf-8")
        result = run_cli("check", "rig.yaml", "-p", "dc_cli_plugin")
        assert result.exit_code == 2 and result.out == ""
        assert result.err.startswith(
            ".rigcheck.yaml:4:5: error: /plugins-config/dc_policy/warn_fraction: plugins-config.dc_policy "
            "(plugin dc_cli_plugin, DcConfig): warn_fraction: Input should be less than or equal to 1 (got 2) "
            "[CONFIG001]"
        )

    def test_pyproject(self, project: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
        (project / "pyproject.toml").write_text(
            '[project]\nname = "x"\n\n[tool.rigcheck]\nselect = ["DCP"]\n\n'
            "[tool.rigcheck.plugins-config.dc_policy]\nrack_units = 44\n",
            encoding="utf-8",
        )
        result = run_cli("check", "rig.yaml", "-p", "dc_cli_plugin", "--format", "json")
        assert [f["message"] for f in result.json()["findings"]] == [
            "DcConfig(warn_fraction=0.9, rack_units=44)"
        ]
        (project / "pyproject.toml").write_text(
            '[tool.rigcheck.plugins-config.dc_policy]\nrack_units = "x"\n', encoding="utf-8"
        )
        result = run_cli("check", "rig.yaml", "-p", "dc_cli_plugin")
        assert result.exit_code == 2 and result.err.startswith(
            "pyproject.toml:1:1: error: /plugins-config/dc_policy/rack_units"
        )

    def test_lint_validates_them_too(self, project: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
        (project / ".rigcheck.yaml").write_text(
            "plugins-config:\n  dc_policy: {rack_unit: 3}\n", encoding="utf-8"
        )
        result = run_cli("lint", "-p", "dc_cli_plugin")
        assert result.exit_code == 2 and "unknown key 'rack_unit'; did you mean 'rack_units'?" in result.err


# -- 2. a check() that returns None, or something that is not findings -------------------------------


def returning(value: Any) -> types.ModuleType:
    rule = rigcheck.Rule(code="RET001", name="returns", summary="s", severity="warn", docs=DOCS)

    class Returns(rigcheck.Checker):
        name = "returns"
        rules = (rule,)

        def check(self, ctx):  # type: ignore[no-untyped-def]
            rule.passed("built but never yielded", location=ctx.rig_at(""))
            return value(rule) if callable(value) else value

    module = types.ModuleType("returns_plugin")
    module.rigcheck_checkers = rigcheck.hookimpl(lambda register: register(Returns()))  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "returned None from check() instead of findings (a check() without `yield` returns None)"),
        (42, "returned int 42 from check(), not an iterable of findings"),
        ("ok", "returned str 'ok' from check(), not an iterable of findings"),
        (
            lambda rule: rule.passed("one"),
            "returned one Finding from check() instead of an iterable of findings",
        ),
    ],
)
def test_a_check_that_does_not_give_findings_is_engine003(value: Any, message: str) -> None:
    result = run(RIG, plugins=[returning(value)], select=["RET", "ENGINE"])
    finding = result.one("ENGINE003", "fail")
    assert message in finding.message and finding.message.endswith("its rules were not checked")
    result.assert_no("ENGINE001")
    assert result.exit_code == 1
    [checker_run] = [c for c in result.report.checkers if c.name == "returns"]
    assert checker_run.status == "invalid-result"


def test_a_list_is_still_fine_and_a_raise_while_iterating_is_still_engine001() -> None:
    assert run(RIG, plugins=[returning([])], select=["RET", "ENGINE"]).findings == []

    def broken(rule: Any):  # type: ignore[no-untyped-def]
        yield rule.passed("first")
        raise KeyError("site")

    result = run(RIG, plugins=[returning(broken)], select=["RET", "ENGINE"])
    result.one("ENGINE001", "fail", message="KeyError")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--isolate-plugins needs fork")
def test_none_is_engine003_in_an_isolated_checker_too() -> None:
    from rigcheck.core.engine.engine import RunOptions, build_catalog, run_checks
    from rigcheck.core.spec.documents import parse_spec
    from rigcheck.testing import rig_yaml

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("returns", returning(None))]).load()
    doc = parse_spec(rig_yaml(RIG), "rig.yaml", kind="Rig")
    report = run_checks(doc, None, registry, build_catalog(registry), RunOptions(isolate_plugins=True))
    [finding] = [f for f in report.findings if f.code == "ENGINE003"]
    assert "returned None from check()" in finding.message


def test_engine003_docs_say_what_it_reports() -> None:
    page = (REPO / "docs" / "rules" / "ENGINE003.md").read_text(encoding="utf-8")
    assert "returned `None`" in page and "`return 42`" in page and "ENGINE001" in page


# -- 3. a bad catalog entry --------------------------------------------------------------------------


def catalog_plugin(
    *entries: dict[str, Any], name: str = "acme", code: str = "DCP001", override: bool = False
) -> types.ModuleType:
    module = plugin(name, model=None, code=code)

    def rigcheck_catalog(register):  # type: ignore[no-untyped-def]
        for entry in entries:
            register(entry, override=override)

    module.rigcheck_catalog = rigcheck.hookimpl(rigcheck_catalog)  # type: ignore[attr-defined]
    return module


GOOD = {
    "id": "acme-x1",
    "name": "ACME X1",
    "vendor": "nvidia",
    "architecture": "Hopper",
    "memory_gib": 96,
    "source": "https://acme.example/x1.pdf",
    "as_of": "2026-11",
}


def test_a_bad_catalog_entry_names_every_field_that_failed() -> None:
    bad = {"id": "acme-x2", "name": "ACME X2", "vendor": "acme", "architecture": "Hopper", "memory_gib": -1}
    result = run(
        {"nodes": [{"gpus": {"model": "ACME X1"}}]},
        plugins=[catalog_plugin(bad, GOOD)],
        select=["ENGINE", "DCP"],
    )
    fault = result.one("ENGINE004", "fail")
    assert "catalog entry 'acme-x2' is not a valid GpuSpec (4 problems)" in fault.message
    for part in (
        "vendor: Input should be 'nvidia', 'amd', 'intel' or 'apple' (got 'acme')",
        "memory_gib: Input should be greater than 0 (got -1)",
        "source: Field required",
        "as_of: Field required",
    ):
        assert part in fault.message
    assert "did not run" not in fault.message
    assert fault.message.endswith("that entry was not added (its other entries and its checkers are used)")
    result.one("DCP001", "pass")  # its checker ran, on its other entry


def test_the_catalog_field_table_matches_the_model() -> None:
    from rigcheck.core.catalog.catalog import GpuSpec
    from rigcheck.core.catalog.catalog_docs import block, current_block

    documented = current_block(PLUGINS_MD)
    assert documented == block(), "run python -m rigcheck.core.catalog.catalog_docs docs/plugins.md"
    rows = re.findall(r"^\| `(\w+)` \| (\*\*yes\*\*|no) \|", documented, flags=re.MULTILINE)
    assert [name for name, _ in rows] == list(GpuSpec.model_fields)
    required = {name for name, flag in rows if flag == "**yes**"}
    assert required == {name for name, info in GpuSpec.model_fields.items() if info.is_required()}


# -- 4. a name or alias that is already taken ---------------------------------------------------------


@pytest.mark.parametrize("alias", ["RTX 4090", "GeForce RTX 4090", "rtx-4090"])
def test_an_alias_of_a_builtin_card_is_refused_at_registration(alias: str) -> None:
    clash = {**GOOD, "id": "acme-4090", "name": "ACME 4090", "aliases": [alias]}
    result = run(
        {"nodes": [{"gpus": {"model": "RTX 4090"}}]}, plugins=[catalog_plugin(clash)], select=["ENGINE"]
    )
    fault = result.one("ENGINE004", "fail")
    assert fault.evidence["plugin"] == "acme" and "plugin acme" in fault.message
    assert f"its name {alias!r} already names 'rtx-4090'" in fault.message
    # the spec naming the card still resolves to the built-in entry (no SpecError)


def test_another_plugins_name_is_refused_and_override_still_replaces() -> None:
    first = catalog_plugin(GOOD, name="first", code="FST001")
    second = catalog_plugin({**GOOD, "id": "other-x1", "aliases": []}, name="second", code="SND001")
    result = run({"nodes": [{"gpus": {"model": "ACME X1"}}]}, plugins=[first, second], select=["ENGINE"])
    assert "'ACME X1' already names 'acme-x1'" in result.one("ENGINE004", "fail").message
    from rigcheck.core.engine.engine import build_catalog

    replacing = {**GOOD, "id": "rtx-4090", "name": "NVIDIA GeForce RTX 4090", "aliases": ["RTX 4090"]}
    registry = PluginHost(
        autoload=False, builtins=(), extra_plugins=[("acme", catalog_plugin(replacing, override=True))]
    ).load()
    catalog = build_catalog(registry)
    assert registry.faults == [] and catalog.lookup("RTX 4090").architecture == "Hopper"


# -- 5. -p that fails to import; a hook argument the hook does not pass ---------------------------------


def test_dash_p_that_fails_to_import_exits_2_as_the_docs_say(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rig = tmp_path / "rig.yaml"
    rig.write_text(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: L40S}\n", encoding="utf-8"
    )
    result = run_cli("check", str(rig), "-p", "acme_polcy_not_installed")
    assert result.exit_code == 2 and result.out == "" and len(result.err.strip().splitlines()) == 1
    assert result.err.startswith(
        "cannot import plugin module 'acme_polcy_not_installed' (-p): ModuleNotFoundError"
    )
    errors = PLUGINS_MD.split("**Errors (exit code 2, nothing is checked)**")[1].split("\n- ")[0]
    assert "a module named with\n  `-p` that fails to import" in errors
    findings = PLUGINS_MD.split("**`ENGINE` findings (the run goes on)**")[1].split("\n- ")[0]
    assert (
        "an installed plugin (entry point, or named in the config's `plugins:`) that fails to import"
        in findings
    )


def test_an_installed_plugin_that_fails_to_import_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    broken = EntryPoint(name="broken", value="rigcheck_no_such_module_17:plugin", group="rigcheck")
    monkeypatch.setattr(
        "importlib.metadata.entry_points", lambda group: [broken] if group == "rigcheck" else []
    )
    monkeypatch.delenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("RIGCHECK_LOAD_PLUGINS", raising=False)
    registry = PluginHost(builtins=()).load()
    [fault] = registry.faults
    assert fault.stage == "import" and fault.effect == "its checkers did not run"


def test_a_hook_argument_the_hook_does_not_pass_is_one_line_naming_plugin_and_hook() -> None:
    class Extra:
        @rigcheck.hookimpl
        def rigcheck_checkers(self, register, config):  # type: ignore[no-untyped-def]
            pass

    with pytest.raises(PluginError) as excinfo:
        PluginHost(autoload=False, builtins=(), extra_plugins=[("acme-extra", Extra())]).load()
    message = str(excinfo.value)
    assert "\n" not in message
    assert message == (
        "plugin 'acme-extra' (unknown): its rigcheck_checkers() takes 'config', which the hook does not pass "
        f"(rigcheck passes: register; plugin API {rigcheck.__plugin_api__})"
    )


# -- 6. public names ---------------------------------------------------------------------------------


def documented_public_names() -> list[str]:
    section = PLUGINS_MD.split("### Public names", 1)[1]
    return re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)


def test_the_documented_public_names_are_rigchecks_all() -> None:
    names = documented_public_names()
    assert sorted(names) == sorted(rigcheck.__all__)
    for name in names:
        assert getattr(rigcheck, name) is not None
    from rigcheck.core.engine.errors import SpecError

    assert rigcheck.SpecError is SpecError and issubclass(rigcheck.SpecError, Exception)


def test_the_documented_attributes_exist() -> None:
    for name in (
        "gpu.spec",
        "gpu.fact(",
        "gpu.label",
        "node.index",
        "ctx.subject",
        "ctx.evidence",
        "ctx.plugin_config",
        "needs_evidence",
        "related=",
        "subject=",
    ):
        assert f"`{name}" in PLUGINS_MD, name
    seen: dict[str, Any] = {}
    rule = rigcheck.Rule(code="ATT001", name="attributes", summary="s", severity="warn", docs=DOCS)

    class Attributes(rigcheck.Checker):
        name = "attributes"
        rules = (rule,)

        def check(self, ctx):  # type: ignore[no-untyped-def]
            node = ctx.nodes[0]
            gpu = node.gpus[0]
            seen.update(
                spec=gpu.spec.model,
                fact=gpu.fact("memory_gib"),
                label=gpu.label,
                index=node.index,
                subject=ctx.subject,
                evidence=ctx.evidence,
            )
            yield rule.failed(
                "x",
                location=ctx.rig_at(gpu.pointer),
                related=[ctx.rig_at(node.pointer)],
                subject=ctx.node_subject(node),
            )

    module = types.ModuleType("attributes")
    module.rigcheck_checkers = rigcheck.hookimpl(lambda register: register(Attributes()))  # type: ignore[attr-defined]
    result = run({"nodes": [{"gpus": {"model": "L40S", "count": 2}}]}, plugins=[module], select=["ATT"])
    finding = result.one("ATT001", "fail")
    assert seen["spec"] == "L40S" and seen["fact"].value == 48 and seen["fact"].origin == "catalog:l40s"
    assert seen["label"] == "2x NVIDIA L40S" and seen["index"] == 0 and seen["evidence"] == []
    assert seen["subject"] == "rig test-rig" and finding.subject == "test-rig / node nodes[0]"
    assert [where.pointer for where in finding.related] == ["/nodes/0"]
    assert rigcheck.Checker.needs_evidence is False


def test_find_label_reads_both_spellings() -> None:
    assert rigcheck.find_label({"nodes-per-rack": "4"}, "nodes-per-rack") == ("nodes-per-rack", "4")
    assert rigcheck.find_label({"nodes_per_rack": "4"}, "nodes-per-rack") == ("nodes_per_rack", "4")
    assert rigcheck.find_label({"nodes_per_rack": "2", "nodes-per-rack": "4"}, "nodes_per_rack") == (
        "nodes-per-rack",
        "4",
    )
    assert rigcheck.find_label(None, "env") is None and rigcheck.find_label({"env": "lab"}, "rack") is None
    assert "keys are **kebab-case**" in PLUGINS_MD


# -- 7. the example plugin's label ---------------------------------------------------------------------


def test_the_example_plugin_reports_a_bad_label_instead_of_crashing() -> None:
    example = pytest.importorskip(
        "rigcheck_site_policy", reason="pip install -e examples/rigcheck-plugin-example"
    )
    text = textwrap.dedent(
        """\
        apiVersion: rigcheck/v1
        kind: Rig
        name: r
        site: {rack_power_limit_kw: 20}
        nodes:
          - count: 4
            max_power_w: 10200
            labels: {nodes-per-rack: four}
        """
    )
    result = run(text, plugins=[example], select=["RACK", "ENGINE"])
    result.assert_no("ENGINE001")
    finding = result.one("RACK002", "fail", line=8, pointer="/nodes/0/labels/nodes-per-rack")
    assert "'four' is not a whole number of nodes" in finding.message and finding.fix


def test_the_settings_example_of_the_docs_works_as_written() -> None:
    section = PLUGINS_MD.split("## Settings for your plugin", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)\n```", section, re.S).group(1)  # type: ignore[union-attr]
    yaml_text = re.search(r"```yaml\n(.*?)\n```", section, re.S).group(1)  # type: ignore[union-attr]
    module = types.ModuleType("docs_site_policy")
    module.__dict__["rigcheck"] = rigcheck
    exec(compile(code, "docs/plugins.md", "exec"), module.__dict__)
    from rigcheck.core.engine.config import settings_from
    from rigcheck.core.lint.lint import Pipeline

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("docs_site_policy", module)]).load()
    pipeline = Pipeline(registry, None, settings_from(yaml_text), 10.0)  # type: ignore[arg-type]
    value = pipeline.plugin_configs["docs_site_policy"]
    assert (value.warn_fraction, value.rack_units) == (0.8, 47)
    shown = pipeline.settings.show()
    assert re.search(
        r"plugins-config\.site_policy\.rack_units += 47 +# rigcheck\.yaml:5 \(thresholds\)", shown
    )


def test_a_model_whose_validator_crashes_is_one_line_not_a_traceback() -> None:
    from pydantic import field_validator

    class Crashes(BaseModel):
        limit: int = 1

        @field_validator("limit")
        @classmethod
        def _boom(cls, value: int) -> int:
            if value > 1:
                raise RuntimeError("boom")
            return value

    with pytest.raises(
        rigcheck.SpecError, match=r"the plugin's model raised RuntimeError: boom \(a bug of the plugin\)"
    ):
        run(RIG, plugins=[plugin(model=Crashes)], config={"plugins-config": {"dc_policy": {"limit": 2}}})


def test_a_checker_asks_which_of_its_rules_are_reported() -> None:
    """``ctx.selected(code)`` (plugin API 1.3): a checker with two rules skips what only the one left out
    needs; the test kit's ``select``/``ignore`` reach it as the command line's do."""
    cheap = rigcheck.Rule(code="SEL001", name="cheap", summary="s", severity="warn", docs=DOCS)
    costly = rigcheck.Rule(code="SEL002", name="costly", summary="s", severity="warn", docs=DOCS)
    asked: list[dict[str, bool]] = []

    class TwoRules(rigcheck.Checker):
        name = "two-rules"
        rules = (cheap, costly)

        def check(self, ctx):  # type: ignore[no-untyped-def]
            asked.append({code: ctx.selected(code) for code in ("SEL001", "SEL002", "PWR002", "ENGINE001")})
            yield cheap.passed("cheap", location=ctx.rig_at(""))
            if ctx.selected(costly.code):
                yield costly.passed("costly", location=ctx.rig_at(""))

    module = types.ModuleType("two_rules_plugin")
    module.rigcheck_checkers = rigcheck.hookimpl(lambda register: register(TwoRules()))  # type: ignore[attr-defined]
    both = run(RIG, plugins=[module], select=["SEL"])
    assert {finding.code for finding in both.findings} == {"SEL001", "SEL002"}
    assert asked.pop() == {"SEL001": True, "SEL002": True, "PWR002": False, "ENGINE001": True}
    one = run(RIG, plugins=[module], select=["SEL"], ignore=["SEL002"])
    assert [finding.code for finding in one.findings] == ["SEL001"]
    assert asked.pop() == {"SEL001": True, "SEL002": False, "PWR002": False, "ENGINE001": True}
    run(RIG, plugins=[module])
    assert asked.pop()["PWR002"] is True  # nothing selected: every rule is reported
