"""The plugin author's side: the public API, the test kit (rigcheck.testing), the installed example
plugin package, and plugins named in a project config."""

from __future__ import annotations

import importlib.util
import textwrap
import types
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import rigcheck
from rigcheck.testing import CheckResult, rig_yaml, run

REPO = Path(__file__).parents[1]
EXAMPLE = REPO / "examples" / "rigcheck-plugin-example"


def make_plugin(code: str = "ACME001") -> types.ModuleType:
    """A one-rule plugin: fails any node with more than 4 GPUs."""
    module = types.ModuleType("acme_policy")
    rule = rigcheck.Rule(
        code=code,
        name="too-many-gpus",
        summary="A node has more than four GPUs",
        severity="fail",
        docs=rigcheck.RuleDocs(
            what="w" * 30, why="w" * 30, example="w" * 30, fix="w" * 30, references=("x",)
        ),
    )

    class Policy(rigcheck.Checker):
        name = "acme.gpus"
        rules = (rule,)

        def check(self, ctx):  # type: ignore[no-untyped-def]
            for node in ctx.nodes:
                where = ctx.rig_at(f"{node.pointer}/gpus")
                if node.gpus_per_node > 4:
                    yield rule.failed(f"{node.label}: {node.gpus_per_node} GPUs", location=where)
                else:
                    yield rule.passed(f"{node.label}: {node.gpus_per_node} GPUs", location=where)

    @rigcheck.hookimpl
    def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
        register(Policy())

    module.rigcheck_checkers = rigcheck_checkers  # type: ignore[attr-defined]
    return module


class TestPublicApi:
    def test_every_public_name_imports_and_is_documented(self) -> None:
        docs = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
        for name in rigcheck.__all__:
            assert getattr(rigcheck, name) is not None
            if not name.startswith("__"):
                assert f"`{name}`" in docs, f"docs/plugins.md does not document rigcheck.{name}"
        assert rigcheck.__plugin_api__.split(".")[0] == "1"

    def test_context_estimate(self) -> None:
        seen = {}

        peek = rigcheck.Rule(
            code="PEEK001",
            name="peek",
            summary="Reads the estimate",
            severity="warn",
            docs=rigcheck.RuleDocs(
                what="w" * 30, why="w" * 30, example="w" * 30, fix="w" * 30, references=("x",)
            ),
        )

        class Peek(rigcheck.Checker):
            name = "peek"
            rules = (peek,)
            needs_workload = True

            def check(self, ctx):  # type: ignore[no-untyped-def]
                seen["estimate"] = ctx.estimate()
                yield peek.passed("seen", location=ctx.workload_at("/model"))

        plugin = types.ModuleType("peek")

        @rigcheck.hookimpl
        def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
            register(Peek())

        plugin.rigcheck_checkers = rigcheck_checkers  # type: ignore[attr-defined]
        workload = {
            "model": {"preset": "gpt2-124m"},
            "task": "pretrain",
            "batch": {"micro": 8, "seq_len": 1024},
        }
        run({"nodes": [{"gpus": {"model": "RTX 4090"}}]}, workload, plugins=[plugin], builtins=False)
        assert seen["estimate"].training.tokens_per_second.default > 0
        assert seen["estimate"].memory is not None


class TestKit:
    def test_run_from_dicts_and_assert_by_line(self) -> None:
        plugin = make_plugin()
        text = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 3090, count: 8}\n"
        result = run(text, plugins=[plugin], select=["ACME"])
        assert isinstance(result, CheckResult) and result.exit_code == 1
        finding = result.assert_finding("ACME001", "fail", line=5, pointer="/nodes/0/gpus", message="8 GPUs")
        assert finding.plugin == "acme_policy"
        assert result.codes("fail") == ["ACME001"]
        result.assert_no("ACME001", "pass")

    def test_failures_list_the_findings(self) -> None:
        result = run(
            {"nodes": [{"gpus": {"model": "RTX 3090", "count": 2}}]}, plugins=[make_plugin()], select=["ACME"]
        )
        with pytest.raises(
            AssertionError, match=r"no ACME001 finding \(severity=fail\)\n1 finding\(s\):\n  ACME001 pass"
        ):
            result.assert_finding("ACME001", "fail")
        with pytest.raises(AssertionError, match="expected one ACME001"):
            result.one("ACME001", line=99)

    def test_rig_yaml_fills_in_the_header(self) -> None:
        text = rig_yaml({"nodes": [{"gpus": {"model": "L40S"}}]}, name="x")
        assert text.startswith("apiVersion: rigcheck/v1\nkind: Rig\nname: x\n")
        assert rig_yaml("  a: 1\n") == "a: 1\n"  # text is dedented, nothing added

    def test_builtins_can_be_left_out(self) -> None:
        result = run(
            {"nodes": [{"gpus": {"model": "RTX 3090", "count": 8}}]}, plugins=[make_plugin()], builtins=False
        )
        assert {f.code for f in result.findings} == {"ACME001"}

    def test_fixtures(self, rigcheck_run, rigcheck_plugins) -> None:  # type: ignore[no-untyped-def]
        rigcheck_plugins.add(make_plugin())
        result = rigcheck_run({"nodes": [{"gpus": {"model": "RTX 3090", "count": 6}}]}, select=["ACME"])
        result.one("ACME001", "fail")

    def test_fixture_plugins_do_not_leak_between_tests(self, rigcheck_run) -> None:  # type: ignore[no-untyped-def]
        result = rigcheck_run({"nodes": [{"gpus": {"model": "RTX 3090", "count": 6}}]})
        assert "ACME001" not in result.codes()

    def test_plugin_faults_reach_the_report(self) -> None:
        broken = types.ModuleType("broken")

        @rigcheck.hookimpl
        def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

        broken.rigcheck_checkers = rigcheck_checkers  # type: ignore[attr-defined]
        result = run({"nodes": [{"gpus": {"model": "L40S"}}]}, plugins=[broken], select=["ENGINE"])
        result.assert_finding("ENGINE004", "fail", message="boom")


def _example_installed() -> bool:
    return any(ep.name == "site_policy" for ep in entry_points(group="rigcheck")) and bool(
        importlib.util.find_spec("rigcheck_site_policy")
    )


@pytest.mark.skipif(
    not _example_installed(),
    reason="the example plugin is not installed: pip install -e examples/rigcheck-plugin-example (the README's test "
    "command and CI do)",
)
class TestInstalledExample:
    """The example package, installed with pip, seen through rigcheck's command line."""

    @pytest.fixture(autouse=True)
    def _autoload(self, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
        monkeypatch.delenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", raising=False)
        monkeypatch.delenv("RIGCHECK_LOAD_PLUGINS", raising=False)

    def test_listed_with_its_hooks_and_rules(self, run_cli) -> None:  # type: ignore[no-untyped-def]
        result = run_cli("plugins", "--format", "json")
        listed = {plugin["name"]: plugin for plugin in result.json()}
        plugin = listed["site_policy"]
        assert plugin["version"] == "0.1.0"
        assert set(plugin["hooks"]) == {"rigcheck_checkers", "rigcheck_catalog", "rigcheck_config_schema"}
        assert set(plugin["rules"]) == {"RACK001", "RACK002", "SITE001"}
        assert "site_policy-0.1.0" in run_cli("--version").out

    def test_rules_and_explain(self, run_cli) -> None:  # type: ignore[no-untyped-def]
        assert "RACK001" in run_cli("rules", "--select", "RACK").out
        assert "kW per rack" in run_cli("explain", "RACK001").out

    def test_findings_in_check(self, run_cli) -> None:  # type: ignore[no-untyped-def]
        result = run_cli("check", str(EXAMPLE / "rack.yaml"), "--format", "json")
        findings = {(f["code"], f["severity"]) for f in result.json()["findings"]}
        assert ("RACK001", "fail") in findings and ("SITE001", "pass") in findings
        assert result.exit_code == 1

    def test_blocked_by_name_and_by_allowlist(self, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        assert "site_policy" not in run_cli("plugins", "-p", "no:site_policy").out
        assert "RACK001" not in run_cli("check", str(EXAMPLE / "rack.yaml"), "-p", "no:site_policy").out
        monkeypatch.setenv("RIGCHECK_LOAD_PLUGINS", "something_else")
        assert "site_policy" not in run_cli("plugins").out
        monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
        monkeypatch.delenv("RIGCHECK_LOAD_PLUGINS")
        assert "site_policy" not in run_cli("plugins").out

    def test_named_in_a_project_config(self, run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
        (tmp_path / ".rigcheck.yaml").write_text("plugins: [site_policy]\n", encoding="utf-8")
        (tmp_path / "rack.yaml").write_text((EXAMPLE / "rack.yaml").read_text(), encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        result = run_cli("check", "rack.yaml", "--select", "RACK")
        assert result.exit_code == 1 and "RACK001" in result.out


def test_config_plugins_are_not_imported_from_the_checked_folder(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A pull request could add both a config naming a plugin and the plugin's code."""
    marker = tmp_path / "imported"
    (tmp_path / "evil_plugin.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n", encoding="utf-8")
    (tmp_path / ".rigcheck.yaml").write_text("plugins: [evil_plugin]\n", encoding="utf-8")
    (tmp_path / "rig.yaml").write_text(
        textwrap.dedent("apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: L40S}\n"),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # as `python -m rigcheck` puts the working directory first
    result = run_cli("check", "rig.yaml")
    assert result.exit_code == 2
    assert "evil_plugin" in result.err and "not an installed rigcheck plugin" in result.err
    assert not marker.exists()
