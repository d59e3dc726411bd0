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
    result = run_cli("check", *arguments)
    assert result.exit_code in (0, 1), result.err  # a real check: findings may fail it, but never exit 2
    assert "MEM001" in result.out and "PLT001" in result.out
