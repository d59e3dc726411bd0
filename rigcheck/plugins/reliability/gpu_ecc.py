"""REL001: long runs on GPUs without ECC, or with it switched off (docs/research/rules_facts.md REL-6).

Which GPUs have ECC on is :func:`rigcheck.core.catalog.ecc.ecc_state`. GDDR's link-level EDC retries transfers
but does not protect what is stored.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.ecc import ecc_state
from rigcheck.core.engine.checker import PerGpuTypeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import run_hours
from rigcheck.core.spec.numbers import fmt

NO_ECC = Rule(
    code="REL001",
    name="long-run-without-ecc",
    summary="A run longer than a day on GPUs whose memory has no ECC, or has it switched off",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Works out whether each GPU's memory is ECC-protected: the rig's `ecc:` setting if given, else the "
        "catalog's default (data-center HBM and data-center GDDR boards: on; workstation and GeForce cards with "
        "optional ECC: off; no ECC: off). Warns when the run (`run.hours`, else the estimated training time) is "
        "longer than {facts:reliability.ecc.warn_above_hours} hours on GPUs without it, and when the rig sets "
        "`ecc: true` on a GPU that has none.",
        why="A flipped bit in weights or optimizer state does not crash the run: it becomes a loss spike or a "
        "slowly diverging model days later. Llama 3 counted 72 HBM3 failures among 419 interruptions; on GPUs "
        "without ECC those would have been silent.",
        example="```yaml\ngpus: {model: RTX 4090, count: 4}\n# with run: {hours: 72}: REL001\n```",
        fix="Enable ECC where the card supports it (`nvidia-smi -e 1` and a reboot; costs about 1/16 of the "
        "memory), checkpoint often and keep several checkpoints, and watch for loss spikes and NaNs; or use "
        "data-center GPUs for multi-day runs.",
        references=(
            "https://ai-infrastructure.net/ecc-support",
            "https://exafunction.com/blog/ecc-gpu",
            "Llama 3 paper arXiv:2407.21783 section 3.3.4",
        ),
    ),
)


class GpuEccChecker(PerGpuTypeChecker):
    name = "reliability.ecc"
    rules = (NO_ECC,)

    def check_gpu(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        if gpu.facts.vendor != "nvidia" and gpu.facts.ecc is None:
            return
        facts = ctx.facts("reliability")["ecc"]
        limit = float(facts["warn_above_hours"])
        hours, hours_how = (None, "no workload") if ctx.workload is None else run_hours(ctx)
        protected, how = ecc_state(gpu)
        where = ctx.rig_at(f"{gpu.pointer}/ecc" if gpu.spec.ecc is not None else f"{gpu.pointer}/model")
        subject = ctx.subject
        evidence = {
            "gpu": gpu.facts.name,
            "ecc": protected,
            "ecc_from": how,
            "catalog_ecc": gpu.facts.ecc,
            "run_hours": hours,
            "run_hours_from": hours_how,
            "warn_above_hours": limit,
            **facts.cite(),
        }
        told = f"{node.label}: {gpu.facts.name}: {how}"
        if gpu.spec.ecc and gpu.facts.ecc is False:
            yield NO_ECC.warned(
                told,
                location=where,
                evidence=evidence,
                subject=subject,
                fix="remove ecc: true (the card cannot enable it); plan for runs without ECC",
            )
            return
        if protected:
            yield NO_ECC.passed(told, location=where, evidence=evidence, subject=subject)
            return
        fix = (
            "enable it (nvidia-smi -e 1, then reboot; about 1/16 of the memory goes to ECC)"
            if gpu.facts.ecc == "optional"
            else "checkpoint often, keep several checkpoints, watch for loss spikes; data-center GPUs for "
            "multi-day runs"
        )
        if hours is None:
            yield NO_ECC.passed(
                f"{told}; the run's length is unknown ({hours_how}), so runs over "
                f"{fmt(limit)} h are not flagged",
                location=where,
                evidence=evidence,
                subject=subject,
            )
        elif NO_ECC.graded(hours, warn_at=limit) is Severity.WARN:
            yield NO_ECC.warned(
                f"{told}, for a {fmt(hours, 1)} h run ({hours_how}) over the {fmt(limit)} h limit",
                location=where,
                related=[ctx.workload_at("/run")],
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        else:
            yield NO_ECC.passed(
                f"{told}; the {fmt(hours, 1)} h run ({hours_how}) is within {fmt(limit)} h",
                location=where,
                evidence=evidence,
                subject=subject,
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(GpuEccChecker())
