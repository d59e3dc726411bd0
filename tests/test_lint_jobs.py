"""Issue 20: ``rigcheck lint --jobs N`` checks the runs in forked worker processes; the report is the
one ``--jobs 1`` writes, byte for byte apart from the timings, in every format.

The comparisons run rigcheck in a fresh process (the test process may run threads other tests left,
and lint forks only from a process without them), through a wrapper that says on standard error how
many workers lint chose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rigcheck.core.lint.lint_workers import RUNS_PER_WORKER, worker_count
from tests.test_lint_formats import normalized

ROOT = Path(__file__).resolve().parent.parent
LINT_REPO = Path(__file__).parent / "lint_repo"
FORKS = sys.platform not in ("win32", "darwin") and hasattr(os, "fork")
needs_fork = pytest.mark.skipif(not FORKS, reason="lint workers are forked")
FORMATS = ("json", "sarif", "text")

RUNNER = """
import sys
import rigcheck.core.lint.cpus as cpus
import rigcheck.core.lint.lint_workers as lint
from rigcheck.cli import main

# the test repositories are small, and the machine may have one CPU: two workers all the same
lint.RUNS_PER_WORKER = 1
cpus.usable_cpus = lambda: 2
chosen = lint.worker_count


def spy(*args, **kwargs):
    count = chosen(*args, **kwargs)
    print(f"workers: {count}", file=sys.stderr)
    return count


lint.worker_count = spy
sys.exit(main(sys.argv[1:]))
"""


def lint(cwd: Path, out: Path, jobs: str, *args: str, path: str = "") -> tuple[int, str, dict[str, str]]:
    """``rigcheck lint ARGS --jobs JOBS`` in a fresh process, every format to a file: the exit code,
    standard error and each format's report (without timings)."""
    outputs = [item for name in FORMATS for item in ("-f", name, "-o", str(out / f"{jobs}.{name}"))]
    env = {**os.environ, "RIGCHECK_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": path}
    env.pop("GITHUB_ACTIONS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, "lint", *args, "--color", "never", *outputs, "--jobs", jobs],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    reports = {
        name: normalized(name, (out / f"{jobs}.{name}").read_text(encoding="utf-8")) for name in FORMATS
    }
    return result.returncode, result.stderr, reports


@needs_fork
@pytest.mark.parametrize("where", ["specs", "lint_repo"])
def test_jobs_2_writes_the_report_of_jobs_1(tmp_path: Path, where: str) -> None:
    cwd, args = (ROOT, ["specs/"]) if where == "specs" else (LINT_REPO, [])
    code_1, err_1, one = lint(cwd, tmp_path, "1", *args)
    code_2, err_2, two = lint(cwd, tmp_path, "2", *args)
    assert "workers: 0" in err_1 and "workers: 2" in err_2  # the second did use two workers
    assert code_1 == code_2 and code_1 in (0, 1), err_2
    assert err_1.replace("workers: 0", "") == err_2.replace("workers: 2", "")
    for name in FORMATS:
        assert one[name].strip()
        assert two[name] == one[name], name


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_must_be_a_whole_number_from_1(run_cli, monkeypatch, jobs: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(LINT_REPO)
    assert run_cli("lint", "--jobs", jobs).exit_code == 2


def test_when_workers_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers only where they pay: at least RUNS_PER_WORKER runs each (two cost about 85 ms to start,
    won back from about 250 runs on 2 CPUs), never more than the CPUs this process may use."""
    monkeypatch.setattr("rigcheck.core.engine.sandbox.safe_to_fork", lambda: True)
    monkeypatch.setattr("rigcheck.core.lint.cpus.usable_cpus", lambda: 8)
    per = RUNS_PER_WORKER
    assert per == 128
    assert worker_count(1, 10_000) == 0  # --jobs 1: in this process
    assert worker_count(2, 2 * per - 1) == 0  # not two workers' worth of runs
    assert worker_count(2, 2 * per) == (2 if FORKS else 0)
    assert worker_count(8, 3 * per + 5) == (3 if FORKS else 0)  # one per RUNS_PER_WORKER runs
    assert worker_count(16, 10_000) == (8 if FORKS else 0)  # no more than the CPUs
    assert worker_count(2, 10_000, isolate_plugins=True) == 0  # --isolate-plugins forks per checker already
    monkeypatch.setattr("rigcheck.core.lint.cpus.usable_cpus", lambda: 1)
    assert worker_count(4, 10_000) == 0  # one CPU: in this process


def test_jobs_defaults_to_the_cpus_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    from rigcheck.commands.reporting import jobs_to_use

    monkeypatch.setattr("rigcheck.core.lint.cpus.usable_cpus", lambda: 3)
    assert jobs_to_use(None) == 3
    assert jobs_to_use(5) == 5  # as given; worker_count caps the workers


def test_no_workers_while_another_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rigcheck.core.lint.cpus.usable_cpus", lambda: 8)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert worker_count(2, 1000) == 0
    finally:
        stop.set()
        thread.join()


PLUGIN = """
import os
from rigcheck import Checker, Rule, RuleDocs, Severity, hookimpl

DOCS = RuleDocs(what="w", why="y", example="e", fix="f")
RULE = Rule(code="JOBS001", name="jobs", summary="s", severity=Severity.WARN, docs=DOCS)
PARENT = os.getpid()
MODE = os.environ.get("JOBS_MODE", "")


class Jobs(Checker):
    name = "jobs"
    rules = (RULE,)

    def check(self, ctx):
        if MODE == "raise":
            raise RuntimeError("broken on " + ctx.rig.name)
        if MODE == "die-in-worker" and os.getpid() != PARENT:
            os._exit(3)
        if MODE == "warn" and ctx.rig.name != "r5":
            yield RULE.warned("warned on " + ctx.rig.name, location=ctx.rig_at("/name"))
            return
        yield RULE.passed("ok on " + ctx.rig.name)


@hookimpl
def rigcheck_checkers(register):
    register(Jobs())
"""

RIG = "apiVersion: rigcheck/v1\nkind: Rig\nname: r{index}\nnodes:\n  - name: n\n    gpus: {{model: L40S}}\n"


@pytest.fixture
def plugin_repo(tmp_path: Path) -> Path:
    """Six rigs (a repository of its own) and the plugin module ``jobs_checker`` in ``plugins/``."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for index in range(6):
        (repo / f"rig{index}.yaml").write_text(RIG.format(index=index), encoding="utf-8")
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "jobs_checker.py").write_text(PLUGIN, encoding="utf-8")
    return tmp_path


@needs_fork
@pytest.mark.parametrize("mode", ["raise", "die-in-worker"])
def test_a_checker_that_fails_in_a_worker(
    plugin_repo: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A checker that raises is the same ENGINE finding in a worker as here; a worker that dies has its
    runs checked here instead, so no finding is lost."""
    monkeypatch.setenv("JOBS_MODE", mode)
    path = str(plugin_repo / "plugins")
    code_1, err_1, one = lint(plugin_repo / "repo", plugin_repo, "1", "-p", "jobs_checker", path=path)
    code_2, err_2, two = lint(plugin_repo / "repo", plugin_repo, "2", "-p", "jobs_checker", path=path)
    assert "workers: 0" in err_1 and "workers: 2" in err_2
    assert code_1 == code_2 == (1 if mode == "raise" else 0), err_2
    assert one == two
    findings = json.loads(two["json"])["findings"]
    if mode == "raise":
        engine = [f for f in findings if f["code"] == "ENGINE001"]
        assert len(engine) == 6 and all("broken on r" in f["message"] for f in engine), engine
    else:
        assert sorted(f["message"] for f in findings if f["code"] == "JOBS001") == [
            f"ok on r{index}" for index in range(6)
        ]


@needs_fork
def test_suppressions_used_in_workers_count_as_used(
    plugin_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker applies the suppression comments of the runs it checks and sends back which it used:
    a comment used only there is not reported unused (SUP002); one used nowhere still is."""
    monkeypatch.setenv("JOBS_MODE", "warn")  # JOBS001 warns on r0-r4, passes on r5
    repo = plugin_repo / "repo"
    for index in range(6):
        text = RIG.format(index=index).replace(
            "name: r", "# rigcheck: ignore-file[JOBS001] reason: checked by hand\nname: r", 1
        )
        (repo / f"rig{index}.yaml").write_text(text, encoding="utf-8")
    path = str(plugin_repo / "plugins")
    _, _, one = lint(repo, plugin_repo, "1", "-p", "jobs_checker", path=path)
    _, err_2, two = lint(repo, plugin_repo, "2", "-p", "jobs_checker", path=path)
    assert "workers: 2" in err_2 and one == two
    findings = json.loads(two["json"])["findings"]
    suppressed = sorted(
        f["location"]["file"] for f in findings if f["code"] == "JOBS001" and f["suppressions"]
    )
    unused = [f["location"]["file"] for f in findings if f["code"] == "SUP002"]
    assert suppressed == [f"rig{index}.yaml" for index in range(5)]
    assert unused == ["rig5.yaml"]
