"""ICX005: the data-parallel communication a step cannot hide, against its compute (NET-4).

The step-time model (rigcheck.core.estimate.steptime) times each collective over the path its
group takes: DDP's gradient all-reduce once per step, ZeRO/FSDP's all-gathers and reduce-scatters
per micro-batch, over NVLink, PCIe (with or without peer-to-peer) or the nodes' network; the part
compute does not hide is the exposed share.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

DP_SHARE = Rule(
    code="ICX005",
    name="data-parallel-communication-share-high",
    summary="Data-parallel communication adds a large share to each step",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="For `parallelism.dp > 1`: the collectives data parallelism makes per optimizer step (DDP and ZeRO-1: "
        "a ring all-reduce of the gradients once per step, 2(n-1)/n x S; ZeRO-2: a reduce-scatter every "
        "micro-batch; ZeRO-3/FSDP full shard: two all-gathers of the 16-bit parameters and a reduce-scatter of "
        "the gradients every micro-batch, (n-1)/n x S each), timed over the path their group takes (the GPU "
        "link within a node, the nodes' network share across nodes), less what compute hides (DDP's in the "
        "last backward, FSDP's in all of the compute, up to the overlap share of specs/rules/throughput.yaml). "
        "Warns when what is left adds more than {facts:interconnect.data_parallel.warn_above_share:.0%} to "
        "the step, fails when it adds more than the compute "
        "itself (the job runs at less than half its compute-bound speed).",
        why="DDP overlaps the all-reduce with backward, FSDP prefetches its all-gathers, but only up to the "
        "compute's length; beyond it every step waits for the links. A 7B model's gradients are 14 GB in bf16 "
        "(28 GB in fp32 under autocast): 1.2 s per step at 20 GB/s of PCIe, 0.06 s at 400 GB/s of NVLink.",
        example="```yaml\nparallelism: {dp: 8}\nbatch: {micro: 1, grad_accum: 1, seq_len: 512}   # 8B model on "
        "PCIe GPUs: ICX005\n```",
        fix="More gradient accumulation (one synchronisation per optimizer step with DDP), FSDP hybrid_shard or "
        "ZeRO-2 (shard within a node), faster links, or LoRA (adapters only are synchronised).",
        references=(
            "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md",
            "Li et al., PyTorch Distributed, arXiv:2006.15704",
            "Zhao et al., PyTorch FSDP, arXiv:2304.11277",
        ),
    ),
)


class DataParallelChecker(WorkloadOnRigChecker):
    name = "interconnect.data-parallel"
    rules = (DP_SHARE,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        par = workload.parallelism
        where = ctx.workload_at("/parallelism/dp")
        n = par.dp
        if n <= 1 or node is None or workload.task == "inference":
            yield DP_SHARE.passed(
                "no data-parallel gradient synchronisation (dp = 1 or inference)",
                location=where,
                subject=ctx.subject,
            )
            return
        gpu = node.gpus[0]
        on_rig = ctx.estimate_on(node, gpu)
        speed = on_rig.estimate.training
        if speed is None:
            yield DP_SHARE.skipped(
                f"{gpu.facts.name}: dense TFLOPS unknown", location=where, subject=ctx.subject
            )
            return
        step = speed.step
        data = [item for item in step.collectives if item.group == "data"]
        untimed = [item for item in data if not item.known]
        if untimed:
            why = untimed[0].over
            fix = (
                "add network links with gbps to the rig"
                if why.startswith("no network")
                else "give the rig the GPUs the ranks need, or lower dp"
            )
            yield DP_SHARE.skipped(
                f"dp {n}: the data-parallel collectives cannot be timed: {why}",
                location=where,
                subject=ctx.subject,
                fix=fix,
            )
            return
        exposed = step.exposed_for(lambda item: item.group == "data")
        compute = step.compute_seconds
        share = exposed / compute if compute else 0.0
        facts = ctx.facts("interconnect")["data_parallel"]
        warn, fail = float(facts["warn_above_share"]), float(facts["fail_above_share"])
        transfers = "; ".join(item.describe() for item in data)
        evidence = {
            "dp": n,
            "collectives": [
                {
                    "what": item.what,
                    "kind": item.kind,
                    "bytes_per_call": item.bytes_per_call,
                    "calls": item.calls,
                    "factor": round(item.factor, 4),
                    "over": item.over,
                    "busbw_gbps": round(item.busbw_gbps, 3),
                    "seconds": round(item.seconds, 4),
                }
                for item in data
            ],
            "comm_seconds": round(sum(item.seconds for item in data), 4),
            "exposed_seconds": round(exposed, 4),
            "compute_seconds": round(compute, 4),
            "share": round(share, 3),
            "overlap": step.overlap.default,
            "warn_above": warn,
            "fail_above": fail,
            **facts.cite(),
        }
        told = (
            f"dp {n}: {transfers}; {fmt(exposed, 3)} s of it not hidden behind {fmt(compute, 3)} s of compute per "
            f"step ({share:.0%})"
        )
        accum = workload.batch.grad_accum if workload.batch else 1
        fix = "use faster links, FSDP hybrid_shard or ZeRO-2 (shard within a node), or LoRA"
        if not (par.zero >= 2 or par.fsdp in ("full_shard", "hybrid_shard", "shard_grad_op")):
            fix = f"raise batch.grad_accum (to about {max(2, int(accum * share / warn) + 1)}), " + fix
        yield DP_SHARE.judged(
            DP_SHARE.graded(share, warn_at=warn, fail_at=fail),
            told,
            location=where,
            evidence=evidence,
            subject=ctx.subject,
            fix=fix,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(DataParallelChecker())
