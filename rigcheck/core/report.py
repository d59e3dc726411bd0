"""The report: every finding of one run, per-checker status, the verdict, and what went in.

Renderers turn a :class:`Report` into text, JSON and the other formats; they never compute
verdicts. ``schemas/report.schema.json`` is generated from these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rigcheck.core.findings import Finding, Severity

REPORT_SCHEMA_VERSION = 1


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
        default_factory=list, description="rigcheck lint: each rig and rig + workload pair that was checked."
    )
    checkers: list[CheckerRun]
    inputs: list[InputFile]
    plugins: list[PluginRecord]
    timings: Timings
    created_at: str = Field(description="UTC time the run finished, ISO 8601.")

    def by_severity(self, severity: Severity) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity is severity]
