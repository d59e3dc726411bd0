"""EVD003: ECC as the machine reports it, against what the rig expects (docs/research/rules_facts.md REL-6).

nvidia-smi and NVML report ECC as Enabled, Disabled or N/A (GeForce), with a *pending* mode that
takes effect at the next reboot. The expectation is the rig's ``ecc:`` if set, else the catalog's
default (on for data-center HBM and GDDR boards).
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.ecc import ecc_state
from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.evidence.match import gpu_view_for, where
from rigcheck.evidence.model import Evidence

ECC = Rule(
    code="EVD003",
    name="measured-ecc-differs-from-expected",
    summary="ECC is off (or set to change at reboot) on a GPU where the rig expects it on",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For each GPU in the evidence, compares the current ECC mode with the expected one (the rig's `ecc:`, "
        "else on for data-center GPUs): fail when it is off where expected on, warn when the pending mode differs "
        "from the current one (a reboot will change it), pass otherwise. GPUs that report N/A have no ECC to set.",
        why="A data-center GPU with ECC turned off (to gain the 6% of memory it reserves, or by a test left behind) "
        "runs long jobs without protection against memory bit flips, and nothing else reports it.",
        example="```yaml\ngpus: {model: A100 SXM 80GB, count: 8}\n"
        "# nvidia-smi -q -x: <current_ecc>Disabled</current_ecc>: "
        "EVD003\n```",
        fix="`nvidia-smi -e 1` (per GPU: `-i N -e 1`) and reboot; or set `ecc: false` in the rig if the trade is "
        "deliberate.",
        references=(
            "https://docs.nvidia.com/deploy/nvidia-smi/index.html (ECC Mode)",
            "docs/research/rules_facts.md REL-6",
        ),
    ),
)


class EvidenceEccChecker(EvidenceChecker):
    name = "evidence.ecc"
    rules = (ECC,)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        if not evidence.gpus or node is None:
            return
        for gpu in evidence.gpus:
            if gpu.ecc_current is None:
                continue
            view = gpu_view_for(ctx, node, gpu)
            if view is None:
                continue
            expected, why = ecc_state(view)
            label = f"{node.label}: GPU {gpu.index if gpu.index is not None else '?'} ({gpu.name})"
            location = ctx.rig_at(
                f"{view.pointer}/ecc" if view.spec.ecc is not None else f"{view.pointer}/model"
            )
            detail = {
                "evidence": evidence.source,
                "ecc_current": gpu.ecc_current,
                "ecc_pending": gpu.ecc_pending,
                "expected": expected,
                "expected_from": why,
                "uuid": gpu.uuid,
            }
            now = "on" if gpu.ecc_current else "off"
            if expected and not gpu.ecc_current:
                yield ECC.failed(
                    f"{label}: ECC is off in {where(evidence)}; expected on ({why})",
                    location=location,
                    evidence=detail,
                    fix=f"nvidia-smi -i {gpu.index if gpu.index is not None else 'N'} -e 1, then reboot",
                )
            elif gpu.ecc_pending is not None and gpu.ecc_pending != gpu.ecc_current:
                later = "on" if gpu.ecc_pending else "off"
                yield ECC.warned(
                    f"{label}: ECC is {now} but set to turn {later} at the next reboot",
                    location=location,
                    evidence=detail,
                    fix="reboot to apply it, or reset the pending mode with nvidia-smi -e",
                )
            else:
                yield ECC.passed(
                    f"{label}: ECC {now}, as expected ({why})"
                    if expected == gpu.ecc_current
                    else f"{label}: ECC {now} (expected off: {why})",
                    location=location,
                    evidence=detail,
                )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceEccChecker())
