"""The report: every finding of one run, per-checker status, the verdict, and what went in.

Renderers turn a :class:`Report` into text, JSON and the other formats; they never compute
verdicts. ``schemas/report.schema.json`` is generated from these models.
"""

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final, Literal, overload

from pydantic import BaseModel, ConfigDict, Field

from rigcheck.core.engine.finding_store import Tally
from rigcheck.core.engine.findings import Finding, Severity, restore

REPORT_SCHEMA_VERSION: Final = 1


class _ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolInfo(_ReportModel):
    name: Literal["rigcheck"] = "rigcheck"
    version: str
    plugin_api: str


class PluginRecord(_ReportModel):
    name: str
    version: str
    builtin: bool


class InputFile(_ReportModel):
    path: str
    kind: Literal["Rig", "Workload", "Evidence"]
    name: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class CheckerRun(_ReportModel):
    name: str
    plugin: str
    status: Literal["ran", "skipped", "crashed", "timed-out", "invalid-result", "deselected"]
    findings: int = 0
    duration_ms: float = 0.0
    reason: str | None = None


class Summary(_ReportModel):
    """Counts of the findings that count; suppressed and baselined findings are counted apart."""

    passed: int = 0
    skipped: int = 0
    warned: int = 0
    failed: int = 0
    suppressed: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.skipped + self.warned + self.failed


class RunRecord(_ReportModel):
    """One rig, or one rig with one workload, checked as part of ``rigcheck lint``."""

    subject: str
    rig: str = Field(description="Path of the rig spec.")
    workload: str | None = Field(None, description="Path of the workload spec, if any.")
    verdict: Literal["pass", "warn", "fail"]
    summary: Summary


class RunRecords(Sequence[RunRecord]):
    """``rigcheck lint``'s run records as plain tuples, each a :class:`RunRecord` when read (as
    models, 10,000 runs held 16 MiB until the writers ran)."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: list[tuple[str, str, str | None, str, tuple[int, int, int, int, int]]] = []

    def add(
        self,
        subject: str,
        rig: str,
        workload: str | None,
        verdict: str,
        counts: tuple[int, int, int, int, int],
    ) -> None:
        """One run: its verdict and its passed, skipped, warned, failed and suppressed counts."""
        self._rows.append((subject, rig, workload, verdict, counts))

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> RunRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[RunRecord]: ...
    def __getitem__(self, index: int | slice) -> RunRecord | list[RunRecord]:
        if isinstance(index, slice):
            return [_record(row) for row in self._rows[index]]
        return _record(self._rows[index])

    def __iter__(self) -> Iterator[RunRecord]:
        return map(_record, self._rows)


_RECORD_FIELDS = set(RunRecord.model_fields)
_SUMMARY_FIELDS = ("passed", "skipped", "warned", "failed", "suppressed")


def _record(row: tuple[str, str, str | None, str, tuple[int, int, int, int, int]]) -> RunRecord:
    subject, rig, workload, verdict, counts = row
    summary = restore(Summary, dict(zip(_SUMMARY_FIELDS, counts, strict=True)), set(_SUMMARY_FIELDS))
    values = {"subject": subject, "rig": rig, "workload": workload, "verdict": verdict, "summary": summary}
    return restore(RunRecord, values, set(_RECORD_FIELDS))


class Timings(_ReportModel):
    load_ms: float = 0.0
    check_ms: float = 0.0
    total_ms: float = 0.0


class Report(_ReportModel):
    """The result of checking one rig, or one rig with one workload."""

    schema_version: Literal[1] = REPORT_SCHEMA_VERSION
    tool: ToolInfo
    subject: str = Field(description="What was checked: 'rig NAME' or 'RIG + WORKLOAD'.")
    verdict: Literal["pass", "warn", "fail"] = Field(description="The worst finding (skips count as pass).")
    fail_on: Literal["warn", "fail"]
    exit_code: Literal[0, 1]
    summary: Summary
    findings: list[Finding]
    runs: list[RunRecord] = Field(
        default_factory=list,
        description="rigcheck lint: each rig and rig + workload pair that was checked.",
    )
    checkers: list[CheckerRun]
    inputs: list[InputFile]
    plugins: list[PluginRecord]
    timings: Timings
    created_at: str = Field(description="UTC time the run finished, ISO 8601.")

    def by_severity(self, severity: Severity) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity is severity]


# -- assembling a report -------------------------------------------------------------------------


def recount(report: Report, findings: list[Finding] | None = None) -> Report:
    """The report with ``findings`` (default: its own) and its summary, verdict and exit code redone,
    after suppressions, baselines or severity overrides changed them."""
    findings = list(report.findings if findings is None else findings)
    tally = tally_of(findings)
    return report.model_copy(
        update={
            "findings": findings,
            "summary": summary_of(tally),
            "verdict": tally.verdict.value,
            "exit_code": int(tally.fails(Severity(report.fail_on))),
        }
    )


def tally_of(findings: Iterable[Finding]) -> Tally:
    """The summary's counts, the verdict (the worst finding that counts; a skip counts as a pass) and the
    exit code (1 when one that counts is at or above fail-on), from one pass over ``findings``."""
    tally = Tally()
    for finding in findings:
        tally.add(finding)
    return tally


def summary_of(tally: Tally) -> Summary:
    counts = tally.counts
    return Summary(
        passed=counts[Severity.PASS],
        skipped=counts[Severity.SKIP],
        warned=counts[Severity.WARN],
        failed=counts[Severity.FAIL],
        suppressed=tally.suppressed,
    )


def build_report(
    subject: str,
    findings: Sequence[Finding],
    fail_on: Severity,
    *,
    documents: Iterable[Any] = (),
    kind: str | None = None,
    checkers: Sequence[CheckerRun] = (),
    runs: Sequence[RunRecord] = (),
    plugins: Iterable[Any] = (),
    load_ms: float | None = None,
    check_ms: float | None = None,
) -> Report:
    """The one place a report is assembled (``check``, ``lint`` and ``merge``): the verdict, exit code
    and summary from ``findings``, the inputs from ``documents`` (SpecDocuments; ``kind`` overrides
    theirs), the plugins from registry records, and the timings when they were measured."""
    from datetime import datetime, timezone

    from rigcheck._version import __plugin_api__, __version__

    tally = getattr(findings, "tally", None)  # a lint's FindingChain: counted as it was filled
    if tally is None:
        findings = list(findings)
        tally = tally_of(findings)
    verdict, exit_code, summary = tally.verdict, int(tally.fails(fail_on)), summary_of(tally)
    timings = (
        Timings(load_ms=round(load_ms, 3), check_ms=round(check_ms, 3), total_ms=round(load_ms + check_ms, 3))
        if load_ms is not None and check_ms is not None
        else Timings()
    )
    report = Report(
        tool=ToolInfo(version=__version__, plugin_api=__plugin_api__),
        subject=subject,
        verdict=verdict.value,
        fail_on=fail_on.value,
        exit_code=exit_code,
        summary=summary,
        findings=findings if isinstance(findings, list) else [],
        runs=[] if isinstance(runs, RunRecords) else list(runs),
        checkers=list(checkers),
        inputs=[
            InputFile(path=doc.path, kind=kind or doc.kind, name=doc.name, sha256=doc.sha256)
            for doc in documents
        ],
        plugins=[
            PluginRecord(name=info.name, version=info.version, builtin=info.builtin) for info in plugins
        ],
        timings=timings,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    if not isinstance(findings, list):  # kept as it is, not copied into a list (see render.json)
        report.findings = findings  # type: ignore[assignment]
    if isinstance(runs, RunRecords):
        report.runs = runs  # type: ignore[assignment]
    return report
