"""ICX005: data-parallel gradient traffic per step against the step's compute time (NET-4).

Ring all-reduce of S bytes over n ranks takes 2(n-1)/n x S / busbw (nccl-tests PERFORMANCE.md);
ZeRO-3/FSDP full sharding moves 3(n-1)/n x the 16-bit parameters per step (two all-gathers and a
reduce-scatter).
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext
from rigcheck.core.estimate import estimate_workload
from rigcheck.core.estimation.links import intra_node_link, node_network_gbps
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

DP_SHARE = Rule(
    code="ICX005",
    name="data-parallel-communication-share-high",
    summary="Gradient synchronisation takes a large share of each step's compute time",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="For `parallelism.dp > 1`: bytes per optimizer step (DDP and ZeRO-1/2: a ring all-reduce of the "
        "trainable gradients, 2(n-1)/n x S; ZeRO-3/FSDP full shard: 3(n-1)/n x the 16-bit parameters), over "
        "the bus bandwidth of the slowest link in the ring (the GPU link within a node; across nodes the "
        "compute network's share per GPU), against the step's compute time (tokens x FLOPs per token over "
        "peak x MFU): warn above 25%.",
        why="DDP overlaps the all-reduce with backward, but only up to the backward's length; when communication "
        "is a large share of compute, every step waits for the network. A 7B model's bf16 gradients are 14 GB: "
        "1.2 s per step at 20 GB/s of PCIe, 0.06 s at 400 GB/s of NVLink.",
        example="```yaml\nparallelism: {dp: 8}\nbatch: {micro: 1, grad_accum: 1, seq_len: 512}   # 8B model on "
        "PCIe GPUs: ICX005\n```",
        fix="More gradient accumulation (communication once per optimizer step), ZeRO-2 or FSDP with faster links, "
        "or LoRA (adapters only are synchronised).",
        references=(
            "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md",
            "rules_facts.md NET-4, NET-6",
        ),
    ),
)


class DataParallelChecker(Checker):
    name = "interconnect.data-parallel"
    rules = (DP_SHARE,)
    needs_workload = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        workload = ctx.workload
        par = workload.parallelism
        where = ctx.workload_at("/parallelism/dp")
        node = next((n for n in ctx.nodes if n.gpus), None)
        n = par.dp
        if n <= 1 or node is None or workload.task == "inference":
            yield DP_SHARE.passed(
                "no data-parallel gradient synchronisation (dp = 1 or inference)",
                location=where,
                subject=ctx.subject,
            )
            return
        gpu = node.gpus[0]
        estimate = estimate_workload(workload, gpu=gpu.facts, gpus_per_node=node.gpus_per_node, arch=ctx.arch)
        speed = estimate.training
        if speed is None:
            yield DP_SHARE.skipped(
                f"{gpu.facts.name}: dense TFLOPS unknown", location=where, subject=ctx.subject
            )
            return
        facts = ctx.facts("interconnect")
        link = intra_node_link(node, gpu, facts)
        busbw, through = link.busbw_gbps, link.description
        ranks_per_node = min(node.gpus_per_node, par.world_size)
        if par.world_size > node.gpus_per_node:
            network = node_network_gbps(node)
            per_gpu = network / max(1, ranks_per_node) * float(facts["bus_bandwidth"]["efficiency"])
            if network and per_gpu < busbw:
                busbw, through = (
                    per_gpu,
                    f"the network: {fmt(network)} GB/s per node / {ranks_per_node} GPUs x 0.8",
                )
            elif not network:
                yield DP_SHARE.skipped(
                    "dp spans nodes but the nodes declare no network bandwidth",
                    location=where,
                    subject=ctx.subject,
                    fix="add network links with gbps to the rig",
                )
                return
        inputs = estimate.inputs
        arch = ctx.arch
        trainable = (
            arch.lora_params_per_layer(inputs.lora_rank, arch.lora_roles(inputs.lora_targets)) * arch.layers
            if inputs.frozen_base
            else arch.params
        )
        if par.zero >= 3 or par.fsdp in ("full_shard", "hybrid_shard"):
            factor, payload, what = 3 * (n - 1) / n, arch.params * 2, "3(n-1)/n x 16-bit params (ZeRO-3/FSDP)"
        else:
            grad_bytes = (
                4
                if (
                    workload.precision == "32-true"
                    or (workload.precision.endswith("mixed") and not par.zero and not par.fsdp)
                )
                else 2
            )
            factor, payload, what = (
                2 * (n - 1) / n,
                trainable * grad_bytes,
                f"2(n-1)/n x {grad_bytes} B gradients",
            )
        seconds_comm = factor * payload / (busbw * 1e9)
        seconds_compute = speed.step_seconds.default
        share = seconds_comm / seconds_compute
        warn = float(facts["data_parallel"]["warn_above_share"])
        evidence = {
            "dp": n,
            "payload_bytes": payload,
            "factor": round(factor, 4),
            "traffic": what,
            "busbw_gbps": round(busbw, 2),
            "link": through,
            "comm_seconds": round(seconds_comm, 4),
            "compute_seconds": round(seconds_compute, 4),
            "share": round(share, 3),
            "warn_above": warn,
            **facts["data_parallel"].cite(),
        }
        told = (
            f"dp {n}: {fmt(payload / 1e9, 2)} GB x {factor:.2f} over {fmt(busbw, 1)} GB/s = "
            f"{fmt(seconds_comm, 3)} s per step against {fmt(seconds_compute, 3)} s of compute ({share:.0%})"
        )
        if share > warn:
            accum = workload.batch.grad_accum if workload.batch else 1
            suggested = max(2, int(accum * share / warn) + 1)
            yield DP_SHARE.warned(
                told,
                location=where,
                evidence=evidence,
                subject=ctx.subject,
                fix=f"raise batch.grad_accum (to about {suggested}), use faster links, or LoRA",
            )
        else:
            yield DP_SHARE.passed(told, location=where, evidence=evidence, subject=ctx.subject)


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(DataParallelChecker())
