"""ICX001-ICX002: tensor parallelism against the links between GPUs (rules_facts.md NET-10).

Megatron-style TP does 4 all-reduces of b x s x h per layer per micro-batch (2 forward, 2 backward),
on the critical path. With P ~ 12 L h^2 and compute 6 P b s / (t F), the ratio of communication to
compute time is r ~ (t - 1) B F / (9 h BW): independent of batch and sequence.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext
from rigcheck.core.estimation.links import intra_node_link
from rigcheck.core.estimation.throughput import peak_tflops
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

_REFS = (
    "Shoeybi et al., Megatron-LM, arXiv:1909.08053",
    "https://github.com/stas00/ml-engineering/blob/master/network/README.md",
)

TP_LINKS = Rule(
    code="ICX001",
    name="tensor-parallel-over-slow-links",
    summary="Tensor-parallel communication takes a large share of compute time on these links",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For `parallelism.tp > 1`, computes the communication/compute ratio `r = (t - 1) x B x F / "
        "(9 x h x BW)` (t the TP degree, B bytes per activation element, F the GPU's achieved FLOP/s at the "
        "default MFU, h the hidden size, BW the all-reduce bus bandwidth of the link: NVLink/NVSwitch, a "
        "2-GPU bridge, or PCIe, halved without peer-to-peer): warn above 0.3, fail above 1. Thresholds in "
        "`specs/rules/interconnect.yaml`.",
        why="TP's all-reduces sit on the critical path of every layer. Over PCIe they can take several times the "
        "compute (TP 8 at 400 TFLOP/s over 25 GB/s: r of about 6); over NVLink 4 the same is about 0.4. "
        "'One doesn't use TP degree of more than 8, because TP is only efficient at NVLink speed.'",
        example="```yaml\nparallelism: {tp: 4}   # on 4 x RTX 4090 over PCIe without P2P: ICX001 fail\n```",
        fix="Use pipeline parallelism or FSDP/ZeRO data parallelism across PCIe GPUs, keep TP within NVLink "
        "domains, or lower the TP degree.",
        references=_REFS,
    ),
)

TP_NODES = Rule(
    code="ICX002",
    name="tensor-parallel-across-nodes",
    summary="The tensor-parallel group spans nodes",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Fails when `parallelism.tp` is larger than the GPUs in one node, so a TP group's all-reduces cross "
        "the network.",
        why="Even 400 Gb/s InfiniBand (50 GB/s) is an order of magnitude below NVLink 4 (450 GB/s each way); "
        "TP across nodes makes every layer wait for the network.",
        example="```yaml\nparallelism: {tp: 16}   # nodes of 8 GPUs: ICX002\n```",
        fix="Keep TP within a node (tp <= GPUs per node) and use pipeline or data parallelism across nodes.",
        references=_REFS,
    ),
)


class TensorParallelChecker(Checker):
    name = "interconnect.tensor-parallel"
    rules = (TP_LINKS, TP_NODES)
    needs_workload = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        workload = ctx.workload
        t = workload.parallelism.tp
        where = ctx.workload_at("/parallelism/tp")
        node = next((n for n in ctx.nodes if n.gpus), None)
        if t <= 1 or node is None:
            yield TP_LINKS.passed("no tensor parallelism (tp = 1)", location=where, subject=ctx.subject)
            return
        gpu = node.gpus[0]
        subject = f"{ctx.subject} on {gpu.facts.name}"
        if t > node.gpus_per_node:
            yield TP_NODES.failed(
                f"tp {t} spans nodes of {node.gpus_per_node} GPUs",
                location=where,
                related=[ctx.rig_at(f"{node.pointer}/gpus")],
                subject=subject,
                evidence={"tp": t, "gpus_per_node": node.gpus_per_node},
                fix=f"tp {node.gpus_per_node} or less, with pipeline or data parallelism across nodes",
            )
            return
        yield TP_NODES.passed(
            f"tp {t} within nodes of {node.gpus_per_node} GPUs", location=where, subject=subject
        )
        facts = ctx.facts("interconnect")
        link = intra_node_link(node, gpu, facts)
        peak, field = peak_tflops(gpu.facts, workload.precision)
        mfu = float(ctx.facts("throughput")["training_mfu"]["default"])
        if not peak:
            yield TP_LINKS.skipped(f"{gpu.facts.name}: dense TFLOPS unknown", location=where, subject=subject)
            return
        element = 4 if workload.precision == "32-true" else 2
        achieved = peak * 1e12 * mfu
        hidden = ctx.arch.hidden
        ratio = (t - 1) * element * achieved / (9 * hidden * link.busbw_gbps * 1e9)
        section = facts["tensor_parallel"]
        warn, fail = float(section["warn_above_ratio"]), float(section["fail_above_ratio"])
        evidence = {
            "tp": t,
            "bytes_per_element": element,
            "achieved_tflops": round(achieved / 1e12, 1),
            "peak_tflops": peak,
            "peak_field": field,
            "mfu": mfu,
            "hidden": hidden,
            "link": link.description,
            "busbw_gbps": round(link.busbw_gbps, 2),
            "ratio": round(ratio, 3),
            "formula": "r = (t - 1) x B x F / (9 x h x BW)",
            "warn_above": warn,
            "fail_above": fail,
            **section.cite(),
        }
        told = (
            f"tp {t} over {link.kind} ({fmt(link.busbw_gbps, 1)} GB/s bus bandwidth): r = {t - 1} x {element} B x "
            f"{fmt(achieved / 1e12, 0)} TFLOP/s / (9 x {hidden} x {fmt(link.busbw_gbps, 1)} GB/s) = {ratio:.2f}"
        )
        fix = (
            "use pipeline parallelism or FSDP/ZeRO across these GPUs instead of TP, lower tp, or use "
            "NVLink/NVSwitch GPUs"
        )
        related = [ctx.rig_at(f"{node.pointer}/gpu_interconnect")]
        if ratio > fail:
            yield TP_LINKS.failed(
                f"{told}: communication exceeds compute",
                location=where,
                related=related,
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        elif ratio > warn:
            yield TP_LINKS.warned(
                f"{told}: above {warn:g}",
                location=where,
                related=related,
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        else:
            yield TP_LINKS.passed(told, location=where, related=related, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(TensorParallelChecker())
