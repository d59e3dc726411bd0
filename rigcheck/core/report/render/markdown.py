"""The ``markdown`` format: a summary for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.

A heading with the verdict, one line of totals, then per run (or the one subject of ``rigcheck
check``) a table of the warnings and failures that count, with where they point. Suppressed
findings follow in a collapsed ``<details>`` table with their kind and reason. GitHub refuses a
comment over 65,536 characters, so tables are cut short with an "... and N more" row when the
whole would be longer.

Spec, path and plugin text is escaped (:func:`~rigcheck.core.report.render.escape.escape_markdown`): it
forms no link, image or HTML, and a pipe or a line break cannot end a table cell.
"""

from __future__ import annotations

import os

from rigcheck.core.engine.finding_store import findings_listed
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.report.render import RenderOptions, relative_path, shown_path
from rigcheck.core.report.render.escape import escape_markdown
from rigcheck.core.report.render.junit import group_findings
from rigcheck.core.report.report import Report

MAX_CHARS = 65_536  # GitHub's limit for a comment body
_BUDGET = MAX_CHARS - 1_536  # room for emoji counted as two UTF-16 units, and for the last lines
_MAX_CELL = 600
_ROW_LIMITS = (None, 200, 100, 50, 25, 10, 5, 2, 1, 0)

_HEADINGS = {"pass": "✅ pass", "warn": "⚠️ warn", "fail": "❌ fail"}
_ICONS = {Severity.FAIL: "❌", Severity.WARN: "⚠️"}
_KINDS = {"inline": "inline comment", "file": "file comment", "waiver": "waiver", "baseline": "baseline"}


def render_markdown(report: Report, options: RenderOptions) -> str:
    report = _listed_only(report)  # rendered up to ten times, at smaller row limits, until it fits
    text = ""
    for limit in _ROW_LIMITS:
        text = _render(report, options, limit)
        if len(text) <= _BUDGET:
            return text
    cut = text[:_BUDGET].rsplit("\n", 1)[0]
    return cut + "\n\n... the rest is cut: the comment would be longer than GitHub allows.\n"


def _listed_only(report: Report) -> Report:
    """``report`` with only the findings a table lists (warnings, failures, suppressed findings) in a
    list. A lint's findings are a store (maybe on disk) and mostly passes: walked once, not held."""
    if isinstance(report.findings, list):
        return report
    return report.model_copy(update={"findings": findings_listed(report.findings, _ICONS)})


def _render(report: Report, options: RenderOptions, limit: int | None) -> str:
    summary = report.summary
    lines = [
        f"## rigcheck: {_HEADINGS[report.verdict]}",
        "",
        f"**{summary.failed} failed**, {summary.warned} warned, {summary.passed} passed, "
        f"{summary.skipped} not checked, {summary.suppressed} suppressed "
        f"(exit {report.exit_code} with `--fail-on {report.fail_on}`)",
    ]
    for subject, findings in group_findings(report):
        shown = [finding for finding in findings if finding.counts and finding.severity in _ICONS]
        shown.sort(key=lambda finding: -finding.severity.rank)
        lines += ["", f"### {_inline(subject)}", ""]
        if not shown:
            lines.append("No warnings or failures.")
            continue
        lines += ["| | Rule | Finding | Where |", "|---|---|---|---|"]
        rows = [
            f"| {_ICONS[finding.severity]} | {_cell(finding.code)} | {_cell(_message(finding))} | "
            f"{_cell(_where(finding, options.root))} |"
            for finding in shown
        ]
        lines += _cut(rows, limit, columns=4, at=2)
    suppressed = [finding for finding in report.findings if finding.suppressed]
    if suppressed:
        lines += [
            "",
            "<details><summary>Suppressed (" + str(len(suppressed)) + ")</summary>",
            "",
            "| Rule | Finding | Kind | Reason | Where |",
            "|---|---|---|---|---|",
        ]
        rows = []
        for finding in suppressed:
            kinds = ", ".join(dict.fromkeys(_KINDS[s.kind] for s in finding.suppressions))
            reasons = "; ".join(dict.fromkeys(s.reason for s in finding.suppressions))
            rows.append(
                f"| {_cell(finding.code)} | {_cell(_message(finding, subject=True))} | {kinds} | {_cell(reasons)} | "
                f"{_cell(_where(finding, options.root))} |"
            )
        lines += _cut(rows, limit, columns=5, at=1)
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _cut(rows: list[str], limit: int | None, *, columns: int, at: int) -> list[str]:
    """The first ``limit`` rows and a last row "... and N more" in column ``at`` (0-based)."""
    if limit is None or len(rows) <= limit:
        return rows
    cells = [""] * columns
    cells[at] = f"... and {len(rows) - limit} more"
    return [*rows[:limit], "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"]


def _message(finding: Finding, *, subject: bool = False) -> str:
    text = finding.message
    if subject and finding.subject:
        text = f"{finding.subject}: {text}"
    if finding.fix:
        text = f"{text} Fix: {finding.fix}"
    return text


def _where(finding: Finding, root: str | None) -> str:
    location = finding.location
    if location is None or not location.file:
        return ""
    path = relative_path(location.file, root) or location.file
    if os.path.isabs(path):  # outside the repository: a shipped spec by its short name
        path = shown_path(location.file)
    return f"{path}:{location.line}" if location.line else path


def _cell(text: str) -> str:
    """One table cell: one line, Markdown escaped (``|`` too), not too long."""
    text = " ".join(text.split())
    if len(text) > _MAX_CELL:
        text = text[: _MAX_CELL - 1].rstrip() + "…"
    return escape_markdown(text)


def _inline(text: str) -> str:
    """Text in a heading: one line, Markdown escaped."""
    return escape_markdown(" ".join(text.split()), table=False)
