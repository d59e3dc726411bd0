"""The ``github`` format: GitHub Actions workflow commands that annotate the spec files.

One ``::error`` or ``::warning`` line per warning or failure that counts, failures first (a step
shows only 10 of each), then by file and line::

    ::error file=specs/rigs/a.yaml,line=58,col=7,title=rigcheck PWR001 (psu-sustained-...)::a / node ws: ...

then one plain summary line. Suppressed findings, passes and skips get no annotation. Values are
escaped as the Actions runner unescapes them: ``%``, CR and LF in the message; also ``:`` and
``,`` in property values (``file``, ``title``); other control characters (ESC, BEL) are shown as
``\\x1b``, ``\\x07`` (:mod:`rigcheck.core.report.render.escape`). The full report belongs in the job
summary: write ``--format markdown`` to ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

from rigcheck.core.engine.finding_store import findings_where
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.report.render import RenderOptions, finding_context, relative_path
from rigcheck.core.report.render.escape import escape_github_data as escape_data
from rigcheck.core.report.render.escape import escape_github_property as escape_property
from rigcheck.core.report.report import Report

_COMMANDS = {Severity.FAIL: "error", Severity.WARN: "warning"}
_VERDICT = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}


def render_github(report: Report, options: RenderOptions) -> str:
    annotated = list(findings_where(report.findings, _COMMANDS, counting=True))
    annotated.sort(key=lambda finding: _order(finding, options.root))
    lines = [annotation(finding, options.root, finding_context(report, finding)) for finding in annotated]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def annotation(finding: Finding, root: str | None, context: str | None = None) -> str:
    """The workflow command for one finding; ``context`` (the rig + workload pair) leads the message."""
    properties = []
    location = finding.location
    if location is not None and location.file:
        properties.append(f"file={escape_property(relative_path(location.file, root) or location.file)}")
        if location.line:
            properties.append(f"line={location.line}")
            if location.column:
                properties.append(f"col={location.column}")
    title = f"rigcheck {finding.code} ({finding.name})" if finding.name else f"rigcheck {finding.code}"
    properties.append(f"title={escape_property(title)}")
    message = f"[{context}] {finding.message}" if context else finding.message
    if finding.fix:
        message = f"{message} Fix: {finding.fix}"
    return f"::{_COMMANDS[finding.severity]} {','.join(properties)}::{escape_data(message)}"


def summary_line(report: Report) -> str:
    summary = report.summary
    runs = len(report.runs) or 1
    return (
        f"rigcheck: {_VERDICT[report.verdict]} {summary.failed} failed, {summary.warned} warned, "
        f"{summary.passed} passed, {summary.skipped} not checked, {summary.suppressed} suppressed "
        f"in {runs} run{'s' if runs != 1 else ''} (exit {report.exit_code} with --fail-on {report.fail_on})"
    )


def _order(finding: Finding, root: str | None) -> tuple[int, str, int, int]:
    location = finding.location
    path = (relative_path(location.file, root) or "") if location is not None and location.file else ""
    line = (location.line or 0) if location is not None else 0
    column = (location.column or 0) if location is not None else 0
    return (-finding.severity.rank, path, line, column)
