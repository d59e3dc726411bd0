"""The ``text`` format: a checklist grouped by checker, with the numbers and the fix.

Colour only when asked for (the CLI asks on a terminal, and never when ``NO_COLOR`` is set,
https://no-color.org/); ASCII marks when the output cannot encode the Unicode ones. Every string
from a spec, a path or a plugin goes through :func:`~rigcheck.core.report.render.escape.escape_text`
(control characters visible, one line per field), and no line can start a workflow command.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from rigcheck.core.engine.finding_store import findings_where, stands_for
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.report.render import RenderOptions, shown_path
from rigcheck.core.report.render.escape import escape_text as _e
from rigcheck.core.report.render.escape import guard_line
from rigcheck.core.report.report import Report

_MARKS = {Severity.PASS: "✓", Severity.SKIP: "?", Severity.WARN: "!", Severity.FAIL: "✗"}
_ASCII = {Severity.PASS: "ok", Severity.SKIP: "??", Severity.WARN: "!!", Severity.FAIL: "XX"}
_COLORS = {Severity.PASS: "32", Severity.SKIP: "2", Severity.WARN: "33", Severity.FAIL: "31"}
_VERDICT = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}


def render_text(report: Report, options: RenderOptions) -> str:
    if options.quiet:
        return _render_quiet(report, options)
    if report.runs:
        return _render_lint(report, options)
    if not options.show_passes:
        return _render_compact(report, options)
    paint = _painter(options.color)
    marks = _MARKS if options.unicode else _ASCII
    lines = _header(report)
    groups: dict[str, list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault(finding.checker or "engine", []).append(finding)
    for checker, findings in groups.items():
        plugin = findings[0].plugin
        origin = "" if plugin.startswith("rigcheck.") or plugin == "rigcheck" else f"  [{_e(plugin)}]"
        lines.append("")
        lines.append(paint(f"{_e(checker)}{origin}", "1"))
        for finding in findings:
            lines.extend(_finding_lines(finding, marks, paint, options.verbose))
    skipped = _skipped_checkers(report, set(groups), options.verbose)
    if skipped:
        lines.append("")
        lines.extend(paint(line, "2") for line in skipped)
    lines.append("")
    lines.append(_verdict_line(report, paint))
    return _join(lines)


def _render_compact(report: Report, options: RenderOptions) -> str:
    """``rigcheck check``'s default: what failed and warned first, in full; what could not be checked, a
    line each; the passes counted, not listed (``--show-passes`` and ``-v`` list them, as ruff and
    Checkov's compact mode do); a summary by rule at the end."""
    paint = _painter(options.color)
    marks = _MARKS if options.unicode else _ASCII
    lines = _header(report)
    counted = [finding for finding in report.findings if finding.counts]
    for severity, title in ((Severity.FAIL, "failed"), (Severity.WARN, "warnings")):
        findings = [finding for finding in counted if finding.severity is severity]
        if findings:
            lines.append("")
            lines.append(paint(title, "1"))
            for finding in findings:
                lines.extend(_finding_lines(finding, marks, paint, verbose=False))
    asks: dict[tuple[str, str], int] = {}
    for finding in counted:
        if finding.severity is Severity.SKIP:
            key = (finding.code, finding.message)
            asks[key] = asks.get(key, 0) + 1
    if asks:
        lines.append("")
        lines.append(paint(f"not checked ({sum(asks.values())}): add what each names to check it", "1"))
        mark = paint(marks[Severity.SKIP], _COLORS[Severity.SKIP])
        for (code, message), times in asks.items():
            repeat = f"  (x{times})" if times > 1 else ""
            lines.append(f"  {mark} {paint(_e(code), _COLORS[Severity.SKIP])} {_e(message)}{repeat}")
    folded = [f"{report.summary.passed} passed (--show-passes lists them)"]
    suppressed = report.summary.suppressed
    if suppressed:
        folded.append(f"{suppressed} suppressed (--show-passes lists them with their reasons)")
    lines.append("")
    lines.extend(paint(line, "2") for line in [*folded, *_skipped_checkers(report, set(), False)])
    lines.append("")
    lines.append(_verdict_line(report, paint))
    lines.extend(_by_rule(counted, paint))
    return _join(lines)


def _render_quiet(report: Report, options: RenderOptions) -> str:
    """``-q``: the warnings and failures that count, each with its place and fix, and nothing else (no
    header, no passes or questions, no summary); empty when there are none. The exit code says the rest."""
    paint = _painter(options.color)
    marks = _MARKS if options.unicode else _ASCII
    path_of = functools.cache(shown_path)
    lines: list[str] = []
    for finding in findings_where(report.findings, (Severity.FAIL, Severity.WARN), counting=True):
        lines.extend(_finding_lines(finding, marks, paint, False, path_of))
    return _join(lines) if lines else ""


def _by_rule(findings: list[Finding], paint) -> list[str]:  # type: ignore[no-untyped-def]
    """The last lines of a report: which rules failed and warned, how often, and where to read more."""
    lines = []
    for severity, title in ((Severity.FAIL, "failed"), (Severity.WARN, "warned")):
        times: dict[str, int] = {}
        for finding in findings:
            if finding.severity is severity:
                code, count = stands_for(finding)  # a LINT003 finding: the rule it folded, that often
                times[code] = times.get(code, 0) + count
        if times:
            listed = ", ".join(
                _e(code) + (f" x{count}" if count > 1 else "") for code, count in sorted(times.items())
            )
            lines.append(f"  {title}: {listed}")
    if lines:
        lines.append(paint("  rigcheck explain CODE says what a rule checks and how to fix it", "2"))
    return lines


def _header(report: Report) -> list[str]:
    lines = [f"rigcheck {report.tool.version}: {_e(report.subject)}"]
    for item in report.inputs:
        shown = shown_path(item.path)
        whole = f"  ({_e(os.path.abspath(item.path))})" if shown.startswith("<shipped>") else ""
        lines.append(f"  {item.kind.lower():<8} {_e(shown)}{whole}")
    return lines


def _skipped_checkers(report: Report, reported: set[str], verbose: bool) -> list[str]:
    """Checkers that did not run, a line per reason (``-v`` names them)."""
    quiet = [run for run in report.checkers if run.status == "skipped" and run.name not in reported]
    deselected = [run for run in report.checkers if run.status == "deselected" and run.name not in reported]
    lines = []
    by_reason: dict[str, list[str]] = {}
    for run in quiet:
        by_reason.setdefault(_e(run.reason or "skipped"), []).append(_e(run.name))
    for reason, names in by_reason.items():
        listed = f": {', '.join(names)}" if verbose else ""
        lines.append(f"{len(names)} checker(s) skipped, {reason}{listed}")
    if deselected:  # --select / --ignore: one line, not one per checker (-v lists them)
        which = f": {', '.join(_e(run.name) for run in deselected)}" if verbose else " (-v lists them)"
        lines.append(f"{len(deselected)} checkers without a selected rule{which}")
    return lines


def _verdict_line(report: Report, paint) -> str:  # type: ignore[no-untyped-def]
    summary = report.summary
    verdict = _VERDICT[report.verdict]
    color = {"PASS": "32", "WARN": "33", "FAIL": "31"}[verdict]
    return (
        f"{paint(verdict, color + ';1')}  {summary.passed} passed, {summary.warned} warned, {summary.failed} failed, "
        f"{summary.skipped} not checked{', ' + str(summary.suppressed) + ' suppressed' if summary.suppressed else ''}"
        f"  (exit {report.exit_code} with --fail-on {report.fail_on})"
    )


def _render_lint(report: Report, options: RenderOptions) -> str:
    """rigcheck lint: per rig and pair, only what needs attention (``-v``: everything), like ruff."""
    paint = _painter(options.color)
    marks = _MARKS if options.unicode else _ASCII
    shown = (Severity.WARN, Severity.FAIL) if not options.show_passes else tuple(Severity)
    lines = [f"rigcheck {report.tool.version}: {_e(report.subject)}"]
    path_of = functools.cache(shown_path)  # each file as often as its findings are listed; this report only
    by_run: dict[int | None, list[Finding]] = {}  # only what is listed: one walk, the rest not held
    for finding in findings_where(report.findings, shown, counting=True):
        by_run.setdefault(finding.run, []).append(finding)
    outside = by_run.get(None, [])
    if outside:
        lines.append("")
        lines.append(paint("files and config", "1"))
        for finding in outside:
            lines.extend(_finding_lines(finding, marks, paint, options.verbose, path_of))
    for index, run in enumerate(report.runs):
        findings = by_run.get(index, [])
        verdict = _VERDICT[run.verdict]
        color = {"PASS": "32", "WARN": "33", "FAIL": "31"}[verdict]
        where = _e(run.rig) + (f" + {_e(run.workload)}" if run.workload else "")
        suppressed = f", {run.summary.suppressed} suppressed" if run.summary.suppressed else ""
        lines.append("")
        lines.append(f"{paint(verdict, color + ';1')} {paint(_e(run.subject), '1')}  ({where}{suppressed})")
        for finding in findings:
            lines.extend(_finding_lines(finding, marks, paint, options.verbose, path_of))
        elsewhere = (
            run.summary.warned
            + run.summary.failed
            - sum(1 for f in findings if f.severity in (Severity.WARN, Severity.FAIL))
        )
        if elsewhere > 0 and not options.show_passes:
            lines.append(
                paint(
                    f"  and {elsewhere} warning(s) or failure(s) listed above, with its rig or an earlier run",
                    "2",
                )
            )
    summary = report.summary
    verdicts = [run.verdict for run in report.runs]
    lines.append("")
    lines.append(
        f"{len(report.runs)} checked ({sum(1 for r in report.runs if not r.workload)} rigs alone, "
        f"{sum(1 for r in report.runs if r.workload)} pairs): {verdicts.count('pass')} pass, "
        f"{verdicts.count('warn')} warn, {verdicts.count('fail')} fail"
    )
    verdict = _VERDICT[report.verdict]
    color = {"PASS": "32", "WARN": "33", "FAIL": "31"}[verdict]
    suppressed = f", {summary.suppressed} suppressed" if summary.suppressed else ""
    lines.append(
        f"{paint(verdict, color + ';1')}  {summary.passed} passed, {summary.warned} warned, {summary.failed} failed, "
        f"{summary.skipped} not checked{suppressed}  (exit {report.exit_code} with --fail-on {report.fail_on})"
    )
    lines.extend(_by_rule([finding for listed in by_run.values() for finding in listed], paint))
    return _join(lines)


def _join(lines: list[str]) -> str:
    """The report: no line may read as a workflow command under GitHub Actions."""
    return "\n".join(guard_line(line) for line in lines) + "\n"


def _finding_lines(  # type: ignore[no-untyped-def]
    finding: Finding,
    marks: dict[Severity, str],
    paint,
    verbose: bool,
    path_of: Callable[[str], str] = shown_path,
) -> list[str]:
    mark = paint(marks[finding.severity], _COLORS[finding.severity])
    lines = [f"  {mark} {paint(_e(finding.code), _COLORS[finding.severity])} {_e(finding.message)}"]
    if finding.suppressions:
        first = finding.suppressions[0]
        lines[0] += paint(f"  [suppressed ({_e(first.kind)}): {_e(first.reason)}]", "2")
    location = finding.location
    if location is not None and location.file:
        where = f"{_e(path_of(location.file))}:{location.line}:{location.column}"
        pointer = f"  {_e(location.pointer)}" if location.pointer else ""
        lines.append(paint(f"      at {where}{pointer}", "2"))
        for other in finding.related:  # the other file of a rig + workload finding
            if other.file and other.file != location.file:
                lines.append(
                    paint(
                        f"      with {_e(path_of(other.file))}:{other.line}:{other.column}  "
                        f"{_e(other.pointer)}",
                        "2",
                    )
                )
                break
    if finding.fix and finding.severity is not Severity.PASS:
        lines.append(f"      fix: {_e(finding.fix)}")
    if verbose and finding.evidence:
        for key, value in finding.evidence.items():
            lines.append(paint(f"      {_e(str(key))}: {_e(str(value))}", "2"))
    return lines


def _painter(enabled: bool):  # type: ignore[no-untyped-def]
    if not enabled:
        return lambda text, code: text
    return lambda text, code: f"\x1b[{code}m{text}\x1b[0m"
