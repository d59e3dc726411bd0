"""The README's first lines give the two fresh-machine commands, and CI runs the second verbatim."""

from __future__ import annotations

import re

from .conftest import REPO


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None and text.index(block.group(0)) < 40, "the commands must open the README"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_exactly_two_commands_and_ci_runs_the_test_one() -> None:
    run_command, test_command = readme_commands()
    assert "rigcheck check" in run_command and "pytest" in test_command
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_the_main_command_names_shipped_specs(run_cli) -> None:  # type: ignore[no-untyped-def]
    run_command = readme_commands()[0]
    arguments = run_command.split("rigcheck check ", 1)[1].split()
    result = run_cli("check", *arguments, "--show-passes")
    assert result.exit_code in (0, 1), result.err  # a real check: findings may fail it, but never exit 2
    assert "MEM001" in result.out and "PLT001" in result.out


def test_what_the_readme_says_of_the_main_command_is_what_it_prints(run_cli) -> None:  # type: ignore[no-untyped-def]
    """'the memory fits ... the 120M tokens need about N hours ... not the 8 it plans ... fails (exit code 1)'."""
    arguments = readme_commands()[0].split("rigcheck check ", 1)[1].split()
    result = run_cli("check", *arguments, "-f", "json")
    assert result.exit_code == 1
    import json

    findings = json.loads(result.out)["findings"]
    [memory] = [f for f in findings if f["code"] == "MEM001"]
    [time] = [f for f in findings if f["code"] == "BW003"]
    assert memory["severity"] == "pass" and time["severity"] == "fail"
    said = re.search(
        r"tokens need about (\d+) hours on the one GPU the workload uses, not the (\d+) it plans",
        " ".join((REPO / "README.md").read_text().split()),
    )
    assert said is not None
    hours = float(re.search(r"take about ([\d.]+) h", time["message"]).group(1))  # type: ignore[union-attr]
    assert round(hours) == int(said.group(1))
    assert f"planned {said.group(2)} h" in time["message"]


def test_the_two_commands_use_separate_environments() -> None:
    """The example plugin the test command installs must not reach the demo environment's reports."""
    run_command, test_command = readme_commands()
    demo, tests = (re.search(r"venv (\S+)", command).group(1) for command in (run_command, test_command))  # type: ignore[union-attr]
    assert demo != tests and "examples/" not in run_command


def test_the_commands_table_names_every_command() -> None:
    """Each ``rigcheck`` sub-command has a row in the README's Commands table."""
    from rigcheck.cli import build_parser

    parser = build_parser()
    subparsers = next(action for action in parser._actions if action.dest == "command")
    commands = set(subparsers.choices)  # type: ignore[attr-defined]
    table = (REPO / "README.md").read_text().split("## Commands", 1)[1].split("\n\n", 2)[1]
    rows = set(re.findall(r"`rigcheck (\w+)", table))
    assert commands - rows == set(), f"add a README row for: {sorted(commands - rows)}"
