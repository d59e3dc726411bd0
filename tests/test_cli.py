"""The command line: exit codes, formats, one-line errors, shipped specs by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import rigcheck

from .conftest import MINIMAL_RIG, MINIMAL_WORKLOAD, REPO, SPECS

HOME = str(SPECS / "rigs" / "home-2x3090.yaml")
QWEN = str(SPECS / "workloads" / "qwen-1.8b-lora.yaml")


def report_schema() -> dict:  # type: ignore[type-arg]
    return json.loads((REPO / "schemas" / "report.schema.json").read_text())


def test_check_json_report_validates_and_every_finding_points_at_its_field(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", HOME, QWEN, "--format", "json")
    assert result.exit_code == 1, (
        result.err
    )  # BW003: 120M tokens need about 14 h on one RTX 3090, planned 8 h
    report = result.json()
    jsonschema.Draft202012Validator(report_schema()).validate(report)
    assert report["subject"] == "home-2x3090 + qwen-1.8b-law-lora"
    assert {item["kind"] for item in report["inputs"]} == {"Rig", "Workload"}
    lines = {path: Path(path).read_text().splitlines() for path in (HOME, QWEN)}
    checked = 0
    for finding in report["findings"]:
        assert {"code", "severity", "message", "evidence", "fix", "checker", "location"} <= finding.keys()
        location = finding["location"]
        assert location["line"] >= 1 and location["column"] >= 1
        pointer = location["pointer"]
        text = lines[location["file"]][location["line"] - 1]
        if pointer:  # the line holds the field's key (or its nearest written parent)
            tokens = pointer.strip("/").split("/")
            assert any(f"{token}:" in text for token in tokens if not token.isdigit()), (pointer, text)
            checked += 1
        else:
            assert location["line"] == 2  # document root: the first key after the comment
    assert checked >= 3  # PLT001, PLT002, PLT003 point at memory_gib, cpu.cores, length_mm


def test_check_by_shipped_names_and_text_output(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(
        "check",
        "home-2x3090",
        "qwen-1.8b-law-lora",
        "--color",
        "never",
        "--select",
        "SPEC,PLT",
        "--show-passes",
    )
    assert result.exit_code == 0, result.err
    assert result.out.startswith("rigcheck 0.1.0: home-2x3090 + qwen-1.8b-law-lora")
    assert "✓ PLT001 node ws: 64 GiB RAM is 1.33x the 48 GiB of VRAM" in result.out
    assert "\x1b[" not in result.out
    assert "PASS  9 passed, 0 warned, 0 failed" in result.out


def test_colour_only_when_asked(run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert "\x1b[" in run_cli("check", "home-2x3090", "--color", "always").out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run_cli("check", "home-2x3090").out


def test_rig_alone_and_fail_on_warn(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", "rtx4090-desktop", "--format", "json")
    assert result.exit_code == 0
    report = result.json()
    assert report["verdict"] == "warn" and report["subject"] == "rig rtx4090-desktop"
    # 336 mm card in 360 mm of clearance (PWR001 passes: 450 W + 125 W base power + 100 W = 675 W, 79%)
    assert sorted(f["code"] for f in report["findings"] if f["severity"] == "warn") == ["PLT003"]
    assert run_cli("check", "rtx4090-desktop", "--fail-on", "warn").exit_code == 1


def test_select_ignore_and_output_file(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "report.json"
    result = run_cli(
        "check", "rtx4090-desktop", "-f", "json", "-o", str(out), "--select", "PLT", "--ignore", "plt003"
    )
    assert result.exit_code == 0 and result.out == ""
    codes = {f["code"] for f in json.loads(out.read_text())["findings"]}
    assert codes == {"PLT001", "PLT002", "PLT005", "PLT006"}


def test_exit_1_on_a_failing_rule(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: 64\n    psu: {watts: 600}"))
    result = run_cli("check", path)
    assert result.exit_code == 1
    # 2 x 350 W + 100 W platform = 800 W before the CPU: over the 600 W rating whatever the CPU draws
    assert "✗ PWR001 node box: GPUs 2 x 350 W + CPU unknown + 100 W platform = 800 W" in result.out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            MINIMAL_RIG.replace("memory_gib: 64", "memroy_gib: 64"),
            ":8:5: error: /nodes/0/memroy_gib: unknown field",
        ),
        (MINIMAL_RIG + "memory_gib: 1\n", "unknown field"),
        (
            MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: lots"),
            ":8:17: error: /nodes/0/memory_gib: expected a",
        ),
        (MINIMAL_RIG.replace("name: box", "name: !!python/object:os.system box"), "[SPEC004]"),
        (MINIMAL_RIG.replace("RTX 3090", "RTX 3095"), "did you mean 'RTX 3090'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run_cli, write_spec, text: str, words: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", write_spec(text))
    assert result.exit_code == 2
    assert result.out == ""
    assert words in result.err
    assert "Traceback" not in result.err


def test_duplicate_key_is_a_fail_finding(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(MINIMAL_RIG + "    memory_gib: 128\n")
    result = run_cli("check", path, "-f", "json")
    assert result.exit_code == 1
    [dup] = [f for f in result.json()["findings"] if f["code"] == "SPEC001" and f["severity"] == "fail"]
    assert dup["location"]["line"] == 9


def test_unknown_shipped_name_and_format(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", "home-2x3009")
    assert result.exit_code == 2 and "did you mean 'home-2x3090'" in result.err
    result = run_cli("check", "home-2x3090", "--format", "jsn")
    assert result.exit_code == 2 and "did you mean 'json'" in result.err


def test_validate(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("validate", HOME, QWEN)
    assert result.exit_code == 0 and "valid Rig 'home-2x3090'" in result.out
    trap = write_spec(MINIMAL_RIG + "    labels: {enabled: yes}\n", "trap.yaml")
    result = run_cli("validate", trap, "--fail-on", "warn")
    assert result.exit_code == 1 and ":9:23: warn:" in result.out and "[SPEC002]" in result.out
    bad = write_spec("apiVersion: rigcheck/v1\nkind: Rig\nname: x\nnodes: []\n", "bad.yaml")
    result = run_cli("validate", bad, "-f", "json")
    assert result.exit_code == 2
    [entry] = result.json()
    assert entry["valid"] is False and entry["errors"][0]["location"]["pointer"] == "/nodes"


def test_schema_rules_explain_gpus_plugins_version(run_cli) -> None:  # type: ignore[no-untyped-def]
    schema = run_cli("schema", "rig").json()
    assert schema["title"] == "rigcheck rig spec" and schema["additionalProperties"] is False
    rules = run_cli("rules", "--format", "json").json()
    assert {"PLT001", "SPEC001", "ENGINE001"} <= {rule["code"] for rule in rules}
    assert all(rule["docs"]["what"] and rule["docs"]["fix"] for rule in rules)
    assert "## Why it matters" in run_cli("explain", "plt001").out
    assert run_cli("explain", "PLT999").exit_code == 2
    gpu = run_cli("gpus", "NVIDIA GeForce RTX 3090", "--format", "json").json()
    assert gpu[0]["id"] == "rtx-3090" and gpu[0]["memory_bandwidth_gbps"] == 936
    assert "matches several cards" in run_cli("gpus", "A100").err
    plugins = run_cli("plugins", "--all", "--format", "json").json()
    assert any(
        p["name"] == "rigcheck.plugins.platform.system_ram" and p["rules"] == ["PLT001"] for p in plugins
    )
    assert run_cli("--version").out.startswith(f"rigcheck 0.1.0 (plugin API {rigcheck.__plugin_api__}")


def test_no_command_prints_help_and_exits_2(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli().exit_code == 2


def _run(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=REPO, timeout=60, **kwargs
    )


def test_python_dash_m_and_binary_garbage(tmp_path) -> None:  # type: ignore[no-untyped-def]
    garbage = tmp_path / "garbage.yaml"
    garbage.write_bytes(bytes(range(256)) * 4)
    result = _run("-m", "rigcheck", "check", str(garbage))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "binary file" in result.stderr
    assert "Traceback" not in result.stderr


def test_billion_laughs_from_the_command_line_is_fast(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = [
        "apiVersion: rigcheck/v1",
        "kind: Rig",
        "name: bomb",
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    for level in range(1, 9):
        previous, name = chr(96 + level), chr(97 + level)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    result = _run("-m", "rigcheck", "check", str(bomb))
    assert result.returncode == 2 and "[SPEC005]" in result.stderr and result.stderr.count("\n") == 1


MODULES_AFTER = """
import json, sys
from rigcheck.cli import main
code = main(sys.argv[1:])
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def modules_loaded_by(*args: str) -> set[str]:
    """Every module in sys.modules after ``rigcheck ARGS`` ran (importlib imports included, which
    ``python -X importtime`` does not list)."""
    result = _run("-c", MODULES_AFTER, *args, env={**os.environ, "RIGCHECK_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert result.returncode in (0, 1), result.stderr
    return set(json.loads(result.stderr.split("MODULES ", 1)[1]))


FORBIDDEN = ("torch", "pynvml", "numpy", "jsonschema")


def _has(modules: set[str], name: str) -> bool:
    return any(module == name or module.startswith(name + ".") for module in modules)


def test_check_path_imports_no_torch_pynvml_jsonschema_or_unused_renderer() -> None:
    modules = modules_loaded_by("check", "home-2x3090", "qwen-1.8b-law-lora", "-f", "json")
    for forbidden in (*FORBIDDEN, "rigcheck.core.report.render.text"):
        assert not _has(modules, forbidden), forbidden
    assert "rigcheck.core.report.render.json" in modules
    assert "rigcheck.core.report.render.text" in modules_loaded_by("check", "home-2x3090")


def test_importing_the_cli_does_no_work() -> None:
    """Nor does building the parser: the command modules import the core inside ``run``."""
    result = _run("-X", "importtime", "-c", "import rigcheck.cli; rigcheck.cli.build_parser()")
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line]
    for heavy in (*FORBIDDEN, "pydantic", "yaml", "pluggy"):
        assert not _has(set(imported), heavy), heavy  # models and plugins load when a command runs


def test_problems_of_both_files_are_reported_together(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: lots"), "rig.yaml")
    workload = write_spec(MINIMAL_WORKLOAD.replace("task: pretrain", "task: pretrian"), "workload.yaml")
    result = run_cli("check", rig, workload)
    assert result.exit_code == 2
    assert (
        "rig.yaml:8:17" in result.err
        and "workload.yaml:5:7" in result.err
        and "did you mean 'pretrain'" in result.err
    )


def test_deselected_checkers_are_one_line(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", "home-2x3090", "--select", "PLT001", "--color", "never")
    assert "checkers without a selected rule (-v lists them)" in result.out
    assert "power.psu-sustained: deselected" not in result.out
    verbose = run_cli("check", "home-2x3090", "--select", "PLT001", "--color", "never", "-v")
    assert "power.psu-sustained" in verbose.out


def test_the_console_entry_turns_pydantic_plugins_off_unless_told_otherwise(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rigcheck import cli

    seen: list[object] = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(os.environ.get("PYDANTIC_DISABLE_PLUGINS")) or 0)
    monkeypatch.setattr(cli, "fast_exit", seen.append)
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")  # recorded, so the teardown restores the real state
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS")
    cli.entry()
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "my_plugin")
    cli.entry()
    assert seen == ["__all__", 0, "my_plugin", 0]


def _subcommands(parser) -> list[str]:  # type: ignore[no-untyped-def]
    import argparse

    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(action.choices)


def test_a_command_line_that_names_a_command_builds_only_its_parser() -> None:
    from rigcheck import cli

    assert _subcommands(cli.build_parser(["check", "home-2x3090"])) == ["check"]
    assert _subcommands(cli.build_parser(["lint", "."])) == ["lint"]
    for argv in (None, [], ["--version"], ["chek", "x"], ["-h"], ["home-2x3090"]):
        assert _subcommands(cli.build_parser(argv)) == list(cli.COMMANDS)  # help and errors list every one
    # the one parser reads the command line as the full one does
    full, alone = cli.build_parser(), cli.build_parser(["check", "home-2x3090", "x.yaml", "--select", "PLT"])
    argv = ["check", "home-2x3090", "x.yaml", "--select", "PLT"]
    assert vars(full.parse_args(argv)) == vars(alone.parse_args(argv))
    modules = {
        path.stem
        for path in (REPO / "rigcheck" / "commands").glob("*.py")
        if "\ndef add_parser(" in path.read_text(encoding="utf-8")
    }
    assert set(cli.COMMANDS) == modules  # a new command module (one that adds a parser) is listed


def test_a_misspelt_command_is_one_error_that_lists_every_command(capsys) -> None:  # type: ignore[no-untyped-def]
    from rigcheck import cli

    assert cli.main(["chek", "home-2x3090"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'chek'" in err and "'check', 'lint'" in err and "'version'" in err
