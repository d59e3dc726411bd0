"""EVD009: ``dcgmi diag`` results (docs/research/tool_formats.md section 8). A level where every test was skipped
is not a pass."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.evidence.match import where
from rigcheck.evidence.model import Evidence

DIAG = Rule(
    code="EVD009",
    name="dcgm-diagnostic-failed",
    summary="DCGM diagnostics (dcgmi diag) report failures or warnings, or skipped every test",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reads `dcgmi diag -r N` output: fail on any Fail, warn on any Warn, warn when every test but the "
        "software checks was skipped (not a pass: nothing was tested), pass otherwise.",
        why="DCGM's diagnostics are NVIDIA's acceptance test for data-center GPUs (memory, PCIe, NVLink, stress); "
        "a failure there is a hardware or configuration fault to fix before a long job.",
        example="```\n| Persistence Mode | Fail |   -> EVD009\n```",
        fix="Fix what the failing test names (persistence mode: `nvidia-smi -pm 1`; memory/PCIe: reseat, RMA), "
        "then run `dcgmi diag -r 3` again; run as root so tests are not skipped.",
        references=("https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html",),
    ),
)


class EvidenceDiagChecker(EvidenceChecker):
    name = "evidence.dcgm-diag"
    rules = (DIAG,)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        if not evidence.diag:
            return
        location = ctx.rig_at(node.pointer if node else "/nodes")
        label = f"{node.label if node else 'rig'}: {where(evidence)}"
        failed = [d for d in evidence.diag if d.result == "fail"]
        warned = [d for d in evidence.diag if d.result == "warn"]
        tested = [d for d in evidence.diag if d.result != "skip" and d.test.lower() not in ("software",)]
        detail = {
            "evidence": evidence.source,
            "dcgm": evidence.diag_version,
            "results": {
                d.test + (f" GPU{d.gpu}" if d.gpu is not None else ""): d.result for d in evidence.diag
            },
        }
        if failed:
            names = ", ".join(f"{d.test}{f' (GPU{d.gpu})' if d.gpu is not None else ''}" for d in failed)
            reason = f": {failed[0].detail}" if failed[0].detail else ""
            yield DIAG.failed(
                f"{label}: failed {names}{reason}",
                location=location,
                evidence=detail,
                fix="fix what the failing test names, then run dcgmi diag -r 3 again",
            )
        elif warned:
            yield DIAG.warned(
                f"{label}: warnings in {', '.join(d.test for d in warned)}",
                location=location,
                evidence=detail,
                fix="read the warning text; run dcgmi diag -r 3 as root",
            )
        elif not tested:
            yield DIAG.warned(
                f"{label}: every hardware test was skipped: nothing was tested",
                location=location,
                evidence=detail,
                fix="run dcgmi diag as root on an idle GPU with persistence mode on",
            )
        else:
            yield DIAG.passed(
                f"{label}: {len(tested)} test result(s), no failures", location=location, evidence=detail
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceDiagChecker())
