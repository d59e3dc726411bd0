"""The console entry (``python -m rigcheck``: a watching parent and the child that runs the command,
rigcheck/supervisor.py) exits as argparse and the command decide: ``--help`` is 0 with the help on
standard output, a usage error 2 with argparse's one line. The watching parent counts argparse's own
exit as a run that finished, not as a plugin that ended the process (it said "exited with code 0
before it finished its report" and exited 2 for every ``--help``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

UNFINISHED = "before it finished its report"


def _console(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RIGCHECK_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("RIGCHECK_NO_SUPERVISOR", None)
    return subprocess.run(
        [sys.executable, "-m", "rigcheck", *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("args", [("--help",), ("check", "--help"), ("estimate", "-h")])
def test_help_exits_0_with_the_help_on_stdout(args: tuple[str, ...]) -> None:
    result = _console(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: rigcheck")
    assert UNFINISHED not in result.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("check", "--no-such-option", "a.yaml"), "unrecognized arguments: --no-such-option"),
        (("check",), "the following arguments are required"),
        (("no-such-command",), "invalid choice"),
    ],
)
def test_a_usage_error_exits_2_with_argparse_line_alone(args: tuple[str, ...], says: str) -> None:
    result = _console(*args)
    assert result.returncode == 2
    assert says in result.stderr
    assert UNFINISHED not in result.stderr


def test_version_exits_0() -> None:
    result = _console("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("rigcheck ")
    assert UNFINISHED not in result.stderr
