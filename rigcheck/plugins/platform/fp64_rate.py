"""PLT004: double-precision work on GPUs whose FP64 rate is a small fraction of FP32 (PLT-1)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

FP64 = Rule(
    code="PLT004",
    name="fp64-work-on-consumer-gpu",
    summary="The workload needs FP64 and the GPU runs it at 1/64 of its FP32 rate",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="When the workload needs double precision (`run.needs_fp64: true` or `precision: 64-true`), "
        "compares each GPU's FP64 rate with its FP32 rate from the catalog: fail below 1/16 (GeForce "
        "Ampere/Ada run FP64 at 1/64; A100/H100 at 1/2).",
        why="Scientific ML and double-precision solvers run about 64x slower on a GeForce card than its "
        "headline TFLOPS suggest (RTX 4090: 82.6 FP32 vs 1.29 FP64 TFLOPS).",
        example="```yaml\nrun: {needs_fp64: true}   # on an RTX 4090: PLT004\n```",
        fix="Use a GPU with full-rate FP64 (A100, H100, H200, MI250X, MI300X), or run the FP64 parts on the CPU.",
        references=(
            "https://waredb.com/processor/nvidia-geforce-rtx-4090",
            "CUDA C Programming Guide, arithmetic instruction throughput table",
        ),
    ),
)


class Fp64RateChecker(WorkloadOnRigChecker):
    """Checks each GPU model of the rig once, in every node group (not only the first)."""

    name = "platform.fp64-rate"
    rules = (FP64,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        needs = workload.precision == "64-true" or bool(workload.run and workload.run.needs_fp64)
        where = ctx.workload_at(
            "/run/needs_fp64" if workload.run and workload.run.needs_fp64 else "/precision"
        )
        if not needs:
            yield FP64.passed(
                "the workload does not need FP64 (run.needs_fp64 is not set)",
                location=where,
                subject=ctx.subject,
            )
            return
        section = ctx.facts("platform")["fp64"]
        threshold = float(section["fail_below_ratio"])
        seen: set[str] = set()
        for group in ctx.nodes:
            for gpu in group.gpus:
                if gpu.facts.id in seen:
                    continue
                seen.add(gpu.facts.id)
                fp64 = gpu.facts.fp64_tensor_tflops or gpu.facts.fp64_tflops
                fp32 = gpu.facts.fp32_tflops
                subject = f"{ctx.subject} on {gpu.facts.name}"
                if not fp64 or not fp32:
                    yield FP64.skipped(
                        f"{gpu.facts.name}: FP64/FP32 rates not in the catalog",
                        location=where,
                        subject=subject,
                    )
                    continue
                ratio = fp64 / fp32
                evidence = {
                    "fp64_tflops": fp64,
                    "fp32_tflops": fp32,
                    "ratio": round(ratio, 4),
                    "fail_below_ratio": threshold,
                    **section.cite(),
                }
                told = f"{gpu.facts.name}: FP64 {fmt(fp64)} TFLOPS is 1/{fmt(1 / ratio, 0)} of FP32 {fmt(fp32)} TFLOPS"
                if (
                    FP64.graded(ratio, warn_at=None, fail_at=threshold, higher_is_worse=False)
                    is Severity.FAIL
                ):
                    yield FP64.failed(
                        told,
                        location=where,
                        related=[ctx.rig_at(f"{gpu.pointer}/model")],
                        evidence=evidence,
                        subject=subject,
                        fix="use A100/H100/H200 (FP64 at 1/2 of FP32) or run the FP64 work on CPUs",
                    )
                else:
                    yield FP64.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(Fp64RateChecker())
