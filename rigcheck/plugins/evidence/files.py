"""EVD013: evidence files that could not be read, or that were read only in part."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.evidence.model import Evidence

UNREADABLE = Rule(
    code="EVD013",
    name="evidence-incomplete",
    summary="An evidence file was not recognised, or is partial or malformed",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Reports each evidence file no parser recognised, and each one a parser read only in part, with what "
        "was missing (a trimmed nvidia-smi XML with fewer <gpu> elements than attached_gpus, a topology matrix "
        "with lost tab separators, a collect_env cut before the GPU list).",
        why="A rule can only compare what the evidence contains; a partial file silently narrows what was checked.",
        example="```\nattached_gpus says 4 but the file has 1 <gpu> element   -> EVD013\n```",
        fix="Re-collect the output in full (redirect to a file instead of copying from a terminal; `nvidia-smi -q -x "
        "> node.xml`), or use `rigcheck probe`.",
        references=("docs/research/tool_formats.md (what each format must contain)",),
    ),
)


class EvidenceFilesChecker(EvidenceChecker):
    """Reports on each evidence file itself, whichever node group it describes."""

    name = "evidence.files"
    rules = (UNREADABLE,)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        location = Location(file=evidence.source, pointer="")
        detail = {"tool": evidence.tool, "problems": evidence.problems[:20]}
        if evidence.tool == "unknown":
            yield UNREADABLE.warned(
                f"{evidence.source}: {evidence.problems[0] if evidence.problems else 'unknown'}",
                location=location,
                evidence=detail,
                fix="pass outputs of the supported tools (rigcheck explain EVD013)",
            )
        elif evidence.problems:
            more = f" (and {len(evidence.problems) - 1} more)" if len(evidence.problems) > 1 else ""
            yield UNREADABLE.warned(
                f"{evidence.source} ({evidence.tool}): {evidence.problems[0]}{more}",
                location=location,
                evidence=detail,
                fix="re-collect the output in full, or use rigcheck probe",
            )
        else:
            yield UNREADABLE.passed(
                f"{evidence.source}: read as {evidence.tool}", location=location, evidence=detail
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceFilesChecker())
