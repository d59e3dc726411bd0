"""Issue 44, third class: a plugin cannot end a run green without its report.

Each plugin here is written from scratch into a temporary folder and loaded with ``-p`` by the real
console entry (``python -m rigcheck``, a separate process, as CI runs it). ``os._exit(0)`` at import,
in a hook, in a checker or in an evidence parser once ended the run with exit 0 and no report; a
checker that left a thread running once kept the process from ending. The watching parent
(:mod:`rigcheck.supervisor`) turns the first into exit 2 with one line, and ends the second with the
run's own exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.test_hostile import RIG

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the watching parent needs fork")

HEADER = "import os, threading, time\nfrom rigcheck import Checker, Rule, RuleDocs, Severity, hookimpl\n"


def _checker(check_body: str) -> str:
    """A plugin of one checker (rule EXIT001) whose ``check(self, ctx)`` is ``check_body``."""
    body = textwrap.indent(textwrap.dedent(check_body).strip(), " " * 8)
    return (
        HEADER
        + 'RULE = Rule(code="EXIT001", name="exits", summary="s", severity=Severity.WARN,'
        + ' docs=RuleDocs(what="w", why="y", example="e", fix="f"))\n\n\n'
        + 'class Hostile(Checker):\n    name = "hostile"\n    rules = (RULE,)\n\n    def check(self, ctx):\n'
        + body
        + "\n\n\n@hookimpl\ndef rigcheck_checkers(register):\n    register(Hostile())\n"
    )


PLUGINS = {
    "at import": HEADER + "os._exit(0)\n",
    "in the registration hook": HEADER + "@hookimpl\ndef rigcheck_checkers(register):\n    os._exit(0)\n",
    "in a checker": _checker("os._exit(0)"),
    "in an evidence parser": HEADER
    + textwrap.dedent(
        """
        class Parser:
            name = "exits"

            def detect(self, text):
                return True

            def parse(self, text, path):
                os._exit(0)

        @hookimpl
        def rigcheck_evidence_parsers(register):
            register(Parser())
        """
    ),
}

LINGERS = _checker(
    """
    threading.Thread(target=time.sleep, args=(3600,)).start()  # not a daemon
    yield RULE.warned("left a thread", location=ctx.rig_at("/name"))
    """
)


def _rigcheck(root: Path, plugin: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    (root / "plugins").mkdir(exist_ok=True)
    (root / "plugins" / "hostile_plugin.py").write_text(plugin, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "plugins"), os.environ.get("PYTHONPATH")])),
        "RIGCHECK_DISABLE_PLUGIN_AUTOLOAD": "1",
        "GITHUB_ACTIONS": "true",
    }
    env.pop("RIGCHECK_NO_SUPERVISOR", None)
    return subprocess.run(
        [sys.executable, "-m", "rigcheck", *args, "-p", "hostile_plugin"],
        cwd=root / "repo",
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "rig.yaml").write_text(RIG, encoding="utf-8")
    (repo / "ev.txt").write_text("anything\n", encoding="utf-8")
    return tmp_path


CASES = [
    *((where, ("check", "rig.yaml", "--evidence", "ev.txt")) for where in sorted(PLUGINS)),
    *(
        (where, ("lint", "-f", "sarif", "-o", "r.sarif"))
        for where in sorted(PLUGINS)
        if "evidence" not in where
    ),
]


@pytest.mark.parametrize(("where", "command"), CASES)
def test_a_plugin_that_exits_cannot_end_the_run_green(
    root: Path, where: str, command: tuple[str, ...]
) -> None:
    forged = root / "repo" / "r.sarif"
    forged.write_text('{"version": "2.1.0", "runs": [{"results": []}]}  forged green\n', encoding="utf-8")
    result = _rigcheck(root, PLUGINS[where], *command)
    assert result.returncode == 2, (where, result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1 and "before it finished its report" in result.stderr
    if "-o" in command:  # the committed report was replaced before the plugin ran: never uploaded
        sarif = json.loads(forged.read_text(encoding="utf-8"))
        invocation = sarif["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
        assert "did not finish" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_a_run_without_plugins_keeps_its_code_and_output(root: Path) -> None:
    result = _rigcheck(root, "", "check", "rig.yaml", "-f", "json")
    assert result.returncode in (0, 1) and result.stderr == ""
    assert result.stdout.startswith("{")


WRITES = _checker(
    """
    os.write(1, b"\\n::error file=README.md,line=1::forged by fd 1\\n")
    os.write(2, b"\\n::error file=README.md,line=1::forged by fd 2\\n")
    yield RULE.passed("ok")
    """
)


def test_an_isolated_checker_cannot_write_to_the_log(root: Path) -> None:
    result = _rigcheck(root, WRITES, "lint", "--isolate-plugins", "-f", "github")
    assert "forged" not in result.stdout and "forged" not in result.stderr, (result.stdout, result.stderr)
    assert result.returncode in (0, 1), result.stderr


def test_a_looping_evidence_parser_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser that never returns gets the checkers' watchdog: stopped and said, the file reported."""
    import rigcheck.core.engine.engine as engine
    from rigcheck.evidence.loader import parse_text

    class Loops:
        name = "loops"

        def detect(self, text: str) -> bool:
            return True

        def parse(self, text: str, path: str) -> None:
            while True:
                pass

    monkeypatch.setattr(engine, "DEFAULT_TIMEOUT_S", 0.5)
    started = time.monotonic()
    evidence = parse_text("anything\n", "ev.txt", [Loops()])
    assert time.monotonic() - started < 10
    assert any("took over 0.5 s" in problem for problem in evidence.problems), evidence.problems


def test_only_the_console_script_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watching parent belongs to the console script: ``entry`` (what tests and embedders call) runs
    the command in the calling process. A fork there once split a pytest session in two, and the
    parent's exit 2 hid the child's green run."""
    from rigcheck import cli, supervisor

    forks: list[int] = []
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or 0)
    monkeypatch.setattr(supervisor, "_write_end", None)
    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.setattr(cli, "fast_exit", lambda code: None)
    monkeypatch.delenv("RIGCHECK_NO_SUPERVISOR", raising=False)
    cli.entry()
    assert forks == []
    monkeypatch.setattr(
        os, "pipe", lambda: (os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY))
    )
    cli.console()  # the fake fork returns 0: this process goes on as the child
    assert forks == [1]
    supervisor.finished(0)  # closes the write end the fake child was given
    import gc

    gc.unfreeze()  # what supervise froze before its fork


def test_a_thread_started_at_registration_does_not_keep_the_run_from_ending(root: Path) -> None:
    """A plugin's hook that starts a thread (not a daemon) in rigcheck's own process: the interpreter
    would wait for it at exit for ever; the watching parent ends the run once its report is out, with
    the run's own code, under ``--jobs 2`` too."""
    plugin = LINGERS.replace(
        "def rigcheck_checkers(register):",
        "def rigcheck_checkers(register):\n    threading.Thread(target=time.sleep, args=(3600,)).start()",
    )
    for index in range(6):
        (root / "repo" / f"r{index}.yaml").write_text(
            RIG.replace("name: r", f"name: r{index}"), encoding="utf-8"
        )
    started = time.monotonic()
    result = _rigcheck(root, plugin, "lint", "--jobs", "2", "-f", "json", timeout=120)
    assert result.returncode == 0 and '"EXIT001"' in result.stdout, result.stderr[-2000:]
    assert time.monotonic() - started < 60


SLOW = _checker(
    """
    time.sleep(0.4)
    yield RULE.warned("checked", location=ctx.rig_at("/name"))
    """
)


def test_the_run_timeout_reports_each_run_it_did_not_check(root: Path) -> None:
    """``--timeout`` bounds the whole run: a checker taking 0.4 s a rig on 12 rigs (about 5 s) under a
    1.5 s limit; the rigs checked before it carry the plugin's finding, the one it was cut in ENGINE002,
    each later one ENGINE005; the run fails (never green for what it left out)."""
    for index in range(12):
        (root / "repo" / f"r{index:02}.yaml").write_text(
            RIG.replace("name: r", f"name: r{index:02}"), encoding="utf-8"
        )
    (root / "repo" / "rig.yaml").unlink()
    started = time.monotonic()
    result = _rigcheck(root, SLOW, "lint", "--jobs", "1", "--timeout", "1.5", "-f", "json")
    took = time.monotonic() - started
    assert result.returncode == 1, result.stderr[-2000:]
    report = json.loads(result.stdout)
    by_run: dict[int, set[str]] = {}
    for finding in report["findings"]:
        if finding["code"] in ("EXIT001", "ENGINE002", "ENGINE005"):
            by_run.setdefault(finding["run"], set()).add(finding["code"])
    outcome = [min(by_run.get(run, {"none"})) for run in range(12)]
    assert set(outcome) <= {"EXIT001", "ENGINE002", "ENGINE005"}, outcome
    checked = outcome.count("EXIT001")
    assert 1 <= checked <= 4 and outcome == sorted(outcome, key=["EXIT001", "ENGINE002", "ENGINE005"].index)
    assert outcome[-1] == "ENGINE005" and report["summary"]["failed"] >= outcome.count("ENGINE005")
    assert took < 1.5 + 8, took  # the limit, plus starting Python and writing the report


HANGS_AT_IMPORT = HEADER + "time.sleep(3600)\n"


def test_a_run_that_cannot_stop_is_ended_past_its_timeout(root: Path) -> None:
    """A plugin blocked at import, which the run's deadline cannot reach: the watching parent ends it
    GRACE_S after ``--timeout``, exit 2, and the committed report it was to replace says so."""
    from rigcheck.supervisor import GRACE_S

    forged = root / "repo" / "r.sarif"
    forged.write_text("forged green\n", encoding="utf-8")
    started = time.monotonic()
    result = _rigcheck(root, HANGS_AT_IMPORT, "lint", "--timeout", "1", "-f", "sarif", "-o", "r.sarif")
    took = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "past its --timeout" in result.stderr
    assert 1 + GRACE_S - 0.5 <= took < 1 + GRACE_S + 10, took
    invocation = json.loads(forged.read_text(encoding="utf-8"))["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(
    run_cli, capsys: pytest.CaptureFixture[str], value: str
) -> None:  # type: ignore[no-untyped-def]
    for option in ("--timeout", "--checker-timeout"):
        result = run_cli("lint", ".", option, value)
        assert (
            result.exit_code == 2 and f"argument {option}: " in result.err and "Traceback" not in result.err
        )
