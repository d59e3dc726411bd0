"""The ``junit`` format: JUnit XML for CI test-report viewers (GitLab, Jenkins, Azure, test-report
actions).

One ``<testsuite>`` per subject checked (each run of ``rigcheck lint``, or each subject the
checkers named: a rig, a node group, a rig with a workload) and in it one ``<testcase>`` per rule,
named ``"PWR001 psu-sustained-load-too-high"`` with the class name ``rigcheck.power``. A rule's
findings in one suite are folded into its testcase:

- any failure that counts: ``<failure type="fail">`` listing each one (where, message, fix); a
  crashed checker (``ENGINE`` codes) is an ``<error>`` instead;
- otherwise warnings: ``<failure type="warn">`` with ``--fail-on warn``, else the testcase passes
  and the warnings go to ``<system-out>``;
- otherwise suppressed findings: ``<skipped message="suppressed: REASON">``;
- otherwise, when every finding is a skip: ``<skipped>`` with what could not be checked;
- passes: an empty testcase.

Times are ``"0"``: the report's timings are per checker, not per rule. Spec, path and plugin text
goes through :func:`~rigcheck.core.report.render.escape.escape_xml`: control characters and what XML 1.0
forbids become U+FFFD; ElementTree escapes the markup.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO

from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.taxonomy import rule_family
from rigcheck.core.report.render import RenderOptions, relative_path
from rigcheck.core.report.render.escape import escape_xml
from rigcheck.core.report.report import Report

_COUNTS = ("tests", "failures", "errors", "skipped")
#: What a lint report's suites are read back in, from their temporary file.
_READ_CHARS = 1 << 16


def render_junit(report: Report, options: RenderOptions) -> str | Iterator[str]:
    if isinstance(report.findings, list):
        suites: list[str] = []
        totals = _write_suites(group_findings(report, split_subjects=True), report, options, suites.append)
        return _document(totals, suites)
    return _streamed(report, options)


def _streamed(report: Report, options: RenderOptions) -> Iterator[str]:
    """A lint report, whose findings are a store (maybe on disk): its runs' suites written as the
    findings are walked, one run's findings in memory at a time, into a temporary file, then the
    document around them; memory does not grow with the repository (issue 20). The text is
    :func:`_document`'s for the groups :func:`group_findings` makes."""
    import io
    import tempfile

    try:
        spool: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8", prefix="rigcheck-junit-")  # noqa: SIM115
    except OSError:  # no writable temporary folder: the suites wait in memory instead
        spool = io.StringIO()
    with spool:
        first = [True]

        def write(suite: str) -> None:
            spool.write(suite if first[0] else _BETWEEN + suite)
            first[0] = False

        try:
            totals = _write_suites(_run_groups(report), report, options, write)
        except _NotInRunOrder:  # findings out of run order (assembled by other code): grouped in memory
            spool.seek(0)
            spool.truncate()
            first[0] = True
            grouped = group_findings(
                report.model_copy(update={"findings": list(report.findings)}), split_subjects=True
            )
            totals = _write_suites(grouped, report, options, write)
        if first[0]:
            yield _document(totals, [])
            return
        yield _HEAD + _root_tag(totals) + _BETWEEN
        spool.seek(0)
        while chunk := spool.read(_READ_CHARS):
            yield chunk
        yield "\n</testsuites>\n"


_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
#: What ``ET.indent`` puts between the root's children (and before the first): a newline, one level.
_BETWEEN = "\n  "


#: A file's path as the report shows it (relative to the repository root where below it).
_Relative = Callable[[str], str | None]


class _NotInRunOrder(Exception):
    """A store's findings are not in the order of the runs their index names."""


def _run_groups(report: Report) -> Iterator[tuple[str, list[Finding]]]:
    """:func:`group_findings` of a report whose run-indexed findings come in run order (a lint's),
    one run's findings held at a time; raises :class:`_NotInRunOrder` when they do not, or when
    there are no runs."""
    runs = report.runs
    if not runs:
        raise _NotInRunOrder
    current = 0
    bucket: list[Finding] = []
    leftovers: dict[str, list[Finding]] = {}
    for finding in report.findings:
        run = finding.run
        if run is None or not 0 <= run < len(runs):
            leftovers.setdefault(finding.subject or report.subject, []).append(finding)
            continue
        if run < current:
            raise _NotInRunOrder
        while current < run:
            yield runs[current].subject, bucket
            bucket, current = [], current + 1
        bucket.append(finding)
    while current < len(runs):
        yield runs[current].subject, bucket
        bucket, current = [], current + 1
    yield from leftovers.items()


def _write_suites(
    groups: Iterable[tuple[str, list[Finding]]],
    report: Report,
    options: RenderOptions,
    write: Callable[[str], None],
) -> dict[str, int]:
    """Each group as its ``<testsuite>`` (indented as a child of the root), given to ``write``; the
    totals of their counts."""
    totals = dict.fromkeys(_COUNTS, 0)
    # each file's path once per report, not per testcase (220,000 of them for 10,000 tiny specs)
    relative: _Relative = functools.cache(functools.partial(relative_path, root=options.root))
    for subject, findings in groups:
        suite = ET.Element("testsuite", {"name": _clean(subject)})
        counts = dict.fromkeys(_COUNTS, 0)
        for code, rule_findings in _by_code(findings):
            outcome = _testcase(suite, code, rule_findings, report, relative)
            counts["tests"] += 1
            if outcome:
                counts[outcome] += 1
        _set_counts(suite, counts)
        for key, value in counts.items():
            totals[key] += value
        ET.indent(suite, space="  ", level=1)
        write(ET.tostring(suite, encoding="unicode", short_empty_elements=True))
    return totals


def _document(totals: dict[str, int], suites: Sequence[str]) -> str:
    """The whole document: what ``ET.indent`` and ``ET.tostring`` make of the root with these suites."""
    if not suites:
        root = ET.Element("testsuites", {"name": "rigcheck"})
        _set_counts(root, totals)
        return _HEAD + ET.tostring(root, encoding="unicode", short_empty_elements=True) + "\n"
    return _HEAD + _root_tag(totals) + _BETWEEN + _BETWEEN.join(suites) + "\n</testsuites>\n"


def _root_tag(totals: dict[str, int]) -> str:
    counts = "".join(f' {key}="{totals[key]}"' for key in _COUNTS)
    return f'<testsuites name="rigcheck"{counts} time="0">'


def group_findings(report: Report, *, split_subjects: bool = False) -> list[tuple[str, list[Finding]]]:
    """The report's findings by what was checked, in order.

    With ``report.runs`` (``rigcheck lint``): one group per run, in run order, each holding the findings
    whose ``run`` index names it (the one decider of run membership, as in every format); findings of
    no run (problems of a file, unused suppressions) follow, grouped by subject. Without runs: one
    group, the report's subject, or (``split_subjects``) one group per finding subject.
    """
    if not report.runs:
        if not split_subjects:
            return [(report.subject, list(report.findings))]
        groups: dict[str, list[Finding]] = {}
        for finding in report.findings:
            groups.setdefault(finding.subject or report.subject, []).append(finding)
        if not groups:
            groups[report.subject] = []
        return list(groups.items())
    placed: list[list[Finding]] = [[] for _ in report.runs]
    leftovers: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.run is not None and 0 <= finding.run < len(placed):
            placed[finding.run].append(finding)
        else:
            leftovers.setdefault(finding.subject or report.subject, []).append(finding)
    result = [(run.subject, findings) for run, findings in zip(report.runs, placed, strict=True)]
    return result + list(leftovers.items())


def _by_code(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.code, []).append(finding)
    return list(groups.items())


def _testcase(
    suite: ET.Element, code: str, findings: list[Finding], report: Report, relative: _Relative
) -> str | None:
    """Add the testcase of one rule; returns ``failures``, ``errors``, ``skipped`` or ``None``."""
    first = findings[0]
    name = f"{code} {first.name}".strip()
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": _clean(f"rigcheck.{rule_family(code, first.checker)}"),
            "name": _clean(name),
            "time": "0",
        },
    )
    where = _where(first, relative, line=False)
    if where:
        case.set("file", _clean(where))
    counting = [finding for finding in findings if finding.counts]
    failed = [finding for finding in counting if finding.severity is Severity.FAIL]
    warned = [finding for finding in counting if finding.severity is Severity.WARN]
    suppressed = [finding for finding in findings if finding.suppressed]
    if failed:
        tag = "error" if code.startswith("ENGINE") else "failure"
        element = ET.SubElement(case, tag, {"type": "crash" if tag == "error" else "fail"})
        element.set("message", _clean(_headline(failed, "failed")))
        element.text = _clean(_details(failed, relative))
        if warned:
            _system_out(case, warned, relative)
        return "errors" if tag == "error" else "failures"
    if warned and report.fail_on == "warn":
        element = ET.SubElement(
            case, "failure", {"type": "warn", "message": _clean(_headline(warned, "warned"))}
        )
        element.text = _clean(_details(warned, relative))
        return "failures"
    if suppressed:
        reasons = list(dict.fromkeys(s.reason for finding in suppressed for s in finding.suppressions))
        ET.SubElement(case, "skipped", {"message": _clean("suppressed: " + "; ".join(reasons))})
        if warned:
            _system_out(case, warned, relative)
        return "skipped"
    if warned:
        _system_out(case, warned, relative)
        return None
    if counting and all(finding.severity is Severity.SKIP for finding in counting):
        ET.SubElement(case, "skipped", {"message": _clean(_headline(counting, "not checked"))})
        return "skipped"
    return None


def _system_out(case: ET.Element, findings: list[Finding], relative: _Relative) -> None:
    ET.SubElement(case, "system-out").text = _clean(_details(findings, relative))


def _headline(findings: list[Finding], what: str) -> str:
    message = findings[0].message
    if len(findings) == 1:
        return message
    return f"{len(findings)} {what}; first: {message}"


def _details(findings: list[Finding], relative: _Relative) -> str:
    lines = []
    for finding in findings:
        where = _where(finding, relative) or "(no location)"
        subject = f" [{finding.subject}]" if finding.subject else ""
        lines.append(f"{finding.severity.value.upper()} {where}{subject}: {finding.message}")
        if finding.fix:
            lines.append(f"  fix: {finding.fix}")
    return "\n".join(lines)


def _where(finding: Finding, relative: _Relative, *, line: bool = True) -> str | None:
    location = finding.location
    if location is None or not location.file:
        return None
    path = relative(location.file) or location.file
    if line and location.line:
        return f"{path}:{location.line}"
    return path


def _set_counts(element: ET.Element, counts: dict[str, int]) -> None:
    for key in _COUNTS:
        element.set(key, str(counts[key]))
    element.set("time", "0")


def _clean(text: str) -> str:
    """``text`` without control characters and what XML 1.0 cannot carry (ElementTree escapes the rest)."""
    return escape_xml(text)
