"""Fault isolation, selection and exit codes of the engine."""

from __future__ import annotations

import time

import pytest

from rigcheck import Checker, Finding, Rule, RuleDocs, Severity, hookimpl
from rigcheck.core.engine.engine import (
    CheckerTimeout,
    RunOptions,
    build_catalog,
    call_with_timeout,
    run_checks,
)
from rigcheck.core.engine.plugin_manager import PluginHost
from rigcheck.core.spec.documents import parse_spec

from .conftest import MINIMAL_RIG

DOCS = RuleDocs(what="w", why="y", example="e", fix="f")


def rule(code: str) -> Rule:
    return Rule(code=code, name=f"rule-{code.lower()}", summary="s", severity=Severity.FAIL, docs=DOCS)


GOOD, BOOM, SLOW, WRONG = rule("TST001"), rule("TST002"), rule("TST003"), rule("TST004")


class Good(Checker):
    name = "good"
    rules = (GOOD,)

    def check(self, ctx):  # type: ignore[no-untyped-def]
        yield GOOD.passed("fine", location=ctx.rig_at("/name"))


class Boom(Checker):
    name = "boom"
    rules = (BOOM,)

    def check(self, ctx):  # type: ignore[no-untyped-def]
        yield BOOM.passed("half way")
        raise KeyError("site")


class Slow(Checker):
    name = "slow"
    rules = (SLOW,)
    timeout_s = 0.2

    def check(self, ctx):  # type: ignore[no-untyped-def]
        time.sleep(30)
        return []


class Wrong(Checker):
    name = "wrong"
    rules = (WRONG,)

    def check(self, ctx):  # type: ignore[no-untyped-def]
        yield {"code": "TST004", "severity": "fail"}
        yield GOOD.failed("not my rule")
        yield WRONG.warned("a real one")


class FaultyPlugin:
    __version__ = "9.9"

    @hookimpl
    def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
        for checker in (Good(), Boom(), Slow(), Wrong()):
            register(checker)


def run(select: tuple[str, ...] = (), ignore: tuple[str, ...] = (), fail_on: Severity = Severity.FAIL):  # type: ignore[no-untyped-def]
    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("faulty", FaultyPlugin())]).load()
    options = RunOptions(select=select, ignore=ignore, fail_on=fail_on)
    return run_checks(parse_spec(MINIMAL_RIG, "rig.yaml"), None, registry, build_catalog(registry), options)


def test_faults_become_findings_and_healthy_checkers_still_report() -> None:
    started = time.perf_counter()
    report = run()
    assert time.perf_counter() - started < 5  # the 30 s sleep was cut at 0.2 s
    status = {run.name: run.status for run in report.checkers}
    assert status == {"good": "ran", "boom": "crashed", "slow": "timed-out", "wrong": "invalid-result"}
    codes = [(f.code, f.severity, f.checker) for f in report.findings]
    assert ("TST001", Severity.PASS, "good") in codes
    assert ("ENGINE001", Severity.FAIL, "boom") in codes
    assert ("ENGINE002", Severity.FAIL, "slow") in codes
    assert ("ENGINE003", Severity.FAIL, "wrong") in codes
    assert ("TST004", Severity.WARN, "wrong") in codes  # its valid finding is kept
    assert not any(
        f.code == "TST002" for f in report.findings
    )  # a crashed checker's partial output is dropped
    crash = next(f for f in report.findings if f.code == "ENGINE001")
    assert "KeyError" in crash.message and crash.evidence["plugin"] == "faulty"
    assert crash.evidence["plugin_version"] == "9.9"
    invalid = next(f for f in report.findings if f.code == "ENGINE003")
    assert invalid.evidence["problems"][0].startswith("yielded dict")
    assert "does not declare" in invalid.evidence["problems"][1]
    assert report.verdict == "fail" and report.exit_code == 1


def test_select_and_ignore_but_engine_faults_always_show() -> None:
    report = run(select=("TST001",))
    assert {f.code for f in report.findings} == {"TST001"}
    assert {r.name: r.status for r in report.checkers}["boom"] == "deselected"
    report = run(ignore=("TST0",))
    assert all(f.code.startswith("ENGINE") for f in report.findings)  # not hidden by --ignore TST0


@pytest.mark.parametrize(("fail_on", "exit_code"), [(Severity.FAIL, 0), (Severity.WARN, 1)])
def test_fail_on_threshold(fail_on: Severity, exit_code: int) -> None:
    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("w", _WarnOnly())]).load()
    report = run_checks(
        parse_spec(MINIMAL_RIG), None, registry, build_catalog(registry), RunOptions(fail_on=fail_on)
    )
    assert report.verdict == "warn"
    assert report.exit_code == exit_code


class _WarnOnly:
    @hookimpl
    def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
        class WarnOnce(Checker):
            name = "warn-once"
            rules = (rule("TST010"),)

            def check(self, ctx):  # type: ignore[no-untyped-def]
                yield self.rules[0].warned("close to the limit")

        register(WarnOnce())


def test_skips_do_not_fail_and_verdict_is_pass() -> None:
    class SkipPlugin:
        @hookimpl
        def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
            class Skipper(Checker):
                name = "skipper"
                rules = (rule("TST011"),)

                def check(self, ctx):  # type: ignore[no-untyped-def]
                    yield self.rules[0].skipped("fact missing")

            register(Skipper())

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("s", SkipPlugin())]).load()
    report = run_checks(
        parse_spec(MINIMAL_RIG), None, registry, build_catalog(registry), RunOptions(fail_on=Severity.WARN)
    )
    assert (report.verdict, report.exit_code, report.summary.skipped) == ("pass", 0, 1)


def test_workload_checkers_are_skipped_for_a_rig_alone() -> None:
    class NeedsWorkload(Checker):
        name = "needs-workload"
        rules = (rule("TST012"),)
        needs_workload = True

        def check(self, ctx):  # type: ignore[no-untyped-def]
            yield self.rules[0].passed("checked " + ctx.workload.name)

    class Plugin:
        @hookimpl
        def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
            register(NeedsWorkload())

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("p", Plugin())]).load()
    report = run_checks(parse_spec(MINIMAL_RIG), None, registry, build_catalog(registry))
    [status] = report.checkers
    assert status.status == "skipped" and "needs a workload" in status.reason
    assert report.findings == []


def test_call_with_timeout_off_the_main_thread() -> None:
    import threading

    outcome: dict[str, object] = {}

    def worker() -> None:
        try:
            call_with_timeout(lambda: time.sleep(5), 0.1)
        except CheckerTimeout:
            outcome["timed_out"] = True
        outcome["value"] = call_with_timeout(lambda: 42, 1)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert outcome == {"timed_out": True, "value": 42}


def test_findings_are_immutable_records() -> None:
    finding = GOOD.failed("x", evidence={"a": 1})
    assert isinstance(finding, Finding)
    with pytest.raises(Exception):  # noqa: B017,PT011 - pydantic's frozen-instance error
        finding.message = "y"  # type: ignore[misc]


@pytest.mark.parametrize("timeout_s", [10.0, 0.0])
def test_a_built_in_checker_runs_under_the_armed_timer_or_none(timeout_s: float) -> None:
    """Built-in checkers take the engine's short path (the timer armed around each, no watchdog): a hang is
    cut at the checker's own limit; a run limit of 0 arms no timer and the healthy checkers still report."""

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("faulty", FaultyPlugin())]).load()
    registry.checkers = [
        entry._replace(plugin=entry.plugin._replace(builtin=True))
        for entry in registry.checkers
        if timeout_s or entry.checker.name != "slow"  # no limit at all: leave the 30 s sleeper out
    ]
    options = RunOptions(timeout_s=timeout_s)
    started = time.perf_counter()
    report = run_checks(parse_spec(MINIMAL_RIG, "rig.yaml"), None, registry, build_catalog(registry), options)
    assert time.perf_counter() - started < 5
    status = {run.name: run.status for run in report.checkers}
    expected = {"good": "ran", "boom": "crashed", "wrong": "invalid-result"}
    assert status == ({**expected, "slow": "timed-out"} if timeout_s else expected)
    assert ("TST004", Severity.WARN) in [(f.code, f.severity) for f in report.findings]


NAP_A, NAP_B, HANG = rule("TST005"), rule("TST006"), rule("TST007")


class _Sleeper(Checker):
    """Sleeps ``seconds`` under its own ``timeout_s``, then passes."""

    seconds = 0.0

    def check(self, ctx):  # type: ignore[no-untyped-def]
        time.sleep(self.seconds)
        yield self.rules[0].passed("woke up")


class NapA(_Sleeper):
    name, rules, timeout_s, seconds = "nap-a", (NAP_A,), 0.3, 0.15


class NapB(_Sleeper):
    name, rules, timeout_s, seconds = "nap-b", (NAP_B,), 5.0, 0.3


class Hang(_Sleeper):
    name, rules, timeout_s, seconds = "hang", (HANG,), 0.2, 30.0


class SleepersPlugin:
    @hookimpl
    def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
        for checker in (NapA(), NapB(), Hang()):
            register(checker)


def test_built_in_checkers_share_one_timer_and_each_keeps_its_own_limit() -> None:
    """The run's timer is set for nap-a's deadline (0.3 s) and goes off while nap-b (0.3 s of its 5 s)
    runs: nap-b is not cut, and the timer is set again for its deadline; hang is cut at its own 0.2 s,
    not at nap-b's deadline 4.7 s later. Afterwards no timer is left set and the previous SIGALRM handler is back."""
    import signal

    registry = PluginHost(autoload=False, builtins=(), extra_plugins=[("sleepers", SleepersPlugin())]).load()
    registry.checkers = [
        entry._replace(plugin=entry.plugin._replace(builtin=True)) for entry in registry.checkers
    ]
    before = signal.getsignal(signal.SIGALRM)
    started = time.perf_counter()
    report = run_checks(
        parse_spec(MINIMAL_RIG, "rig.yaml"), None, registry, build_catalog(registry), RunOptions(timeout_s=10)
    )
    elapsed = time.perf_counter() - started
    status = {run.name: run.status for run in report.checkers}
    assert status == {"nap-a": "ran", "nap-b": "ran", "hang": "timed-out"}
    hung = next(run for run in report.checkers if run.name == "hang")
    assert 180 <= hung.duration_ms < 1000  # cut at its 0.2 s
    assert elapsed < 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before
