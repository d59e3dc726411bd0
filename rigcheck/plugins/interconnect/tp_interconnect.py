"""ICX001-ICX002: tensor parallelism against the links between GPUs (docs/research/rules_facts.md NET-10).

Megatron-style TP does 4 all-reduces of b x s x h per layer per micro-batch (2 forward, 2 backward),
on the critical path. With P ~ 12 L h^2 and compute 6 P b s / (t F), the ratio of communication to
compute time is r ~ (t - 1) B F / (9 h BW): independent of batch and sequence.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import intra_node_link
from rigcheck.core.estimate.throughput import peak_tflops
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

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
        what="For training with `parallelism.tp > 1`, computes the communication/compute ratio `r = (t - 1) x "
        "B x F / (9 x h x BW)` (t the TP degree, B bytes per activation element, F the GPU's achieved FLOP/s at "
        "the default MFU, h the hidden size, BW the all-reduce bus bandwidth of the link: NVLink/NVSwitch, a "
        "2-GPU bridge, or PCIe, halved without peer-to-peer). For inference, where a decode step all-reduces "
        "only concurrency x h elements twice per layer and is bound by reading the weights, r is the "
        "all-reduces' time (bandwidth and latency of the link) over the rest of the decode step, from the "
        "decode model (warn above {facts:interconnect.tensor_parallel_serving.warn_above_ratio:g}: they take "
        "half the step; fail above {facts:interconnect.tensor_parallel_serving.fail_above_ratio:g}). "
        "Training warns above {facts:interconnect.tensor_parallel.warn_above_ratio:g} and fails "
        "above {facts:interconnect.tensor_parallel.fail_above_ratio:g}. Thresholds in `specs/rules/interconnect.yaml`.",
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


class TensorParallelChecker(WorkloadOnRigChecker):
    name = "interconnect.tensor-parallel"
    rules = (TP_LINKS, TP_NODES)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        t = workload.parallelism.tp
        where = ctx.workload_at("/parallelism/tp")
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
        if workload.task == "inference":
            yield self._serving(ctx, workload, node, gpu, where, subject, facts["tensor_parallel_serving"])
            return
        link = intra_node_link(node, gpu, facts)
        peak, field = peak_tflops(gpu.facts, workload.precision)
        mfu = float(ctx.facts("throughput")["training_mfu"]["default"])
        if not peak:
            yield TP_LINKS.skipped(f"{gpu.facts.name}: dense TFLOPS unknown", location=where, subject=subject)
            return
        element = 4 if workload.precision == "32-true" else 2
        achieved = peak * 1e12 * mfu
        assert ctx.arch is not None  # resolved with the workload
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
        yield _verdict(
            ratio, warn, fail, told, "communication exceeds compute", where, related, evidence, fix, subject
        )

    @staticmethod
    def _serving(
        ctx: CheckContext,
        workload: Workload,
        node: NodeView,
        gpu: GpuView,
        where: Location,
        subject: str,
        section: FactSection,
    ) -> Finding:
        """Decoding: the tensor-parallel all-reduces of one decode step (2 per layer of concurrency x h
        elements, latency-bound) against the rest of the step (reading the weights and KV cache), from
        rigcheck.core.estimate.decoding."""
        t = workload.parallelism.tp
        decode = ctx.estimate_on(node, gpu).estimate.decode
        if decode is None:
            return TP_LINKS.skipped(
                f"{gpu.facts.name}: memory bandwidth unknown, so the decode step is not timed",
                location=where,
                subject=subject,
            )
        serving = decode.serving
        if serving.untimed or not serving.collectives:
            return TP_LINKS.skipped(
                f"tp {t}: {serving.untimed or 'the all-reduces are not timed'}",
                location=where,
                subject=subject,
            )
        step = serving.steps[0]
        allreduce = serving.tp_seconds
        rest = max(step - allreduce, 1e-12)
        ratio = allreduce / rest
        warn, fail = float(section["warn_above_ratio"]), float(section["fail_above_ratio"])
        collective = serving.collectives[0]
        evidence = {
            "tp": t,
            "task": "inference",
            "concurrency": serving.concurrency,
            "allreduce": collective.describe(),
            "allreduce_ms": round(allreduce * 1e3, 4),
            "decode_step_ms": round(step * 1e3, 4),
            "ratio": round(ratio, 3),
            "formula": "r = TP all-reduce time / rest of the decode step (weights + KV cache read)",
            "warn_above": warn,
            "fail_above": fail,
            **section.cite(),
        }
        told = (
            f"tp {t} serving over {collective.over}: {fmt(collective.calls)} all-reduces of "
            f"{fmt(collective.bytes_per_call / 1e3, 1)} kB per decode step take {fmt(allreduce * 1e3, 2)} ms against "
            f"{fmt(rest * 1e3, 2)} ms for the rest of the step (r = {ratio:.2f})"
        )
        related = [ctx.rig_at(f"{node.pointer}/gpu_interconnect")]
        fix = (
            "lower tp (the model must still fit), use pipeline parallelism across these GPUs, or NVLink GPUs"
        )
        why = "the all-reduces take over three quarters of the step"
        return _verdict(ratio, warn, fail, told, why, where, related, evidence, fix, subject)


def _verdict(
    ratio: float,
    warn: float,
    fail: float,
    told: str,
    failing: str,
    where: Location,
    related: list[Location],
    evidence: dict[str, Any],
    fix: str,
    subject: str,
) -> Finding:
    """ICX001's finding for a ratio against its warn and fail thresholds; ``failing`` says what a fail means."""
    severity = TP_LINKS.graded(ratio, warn_at=warn, fail_at=fail)
    said = {Severity.PASS: "", Severity.WARN: f": above {warn:g}", Severity.FAIL: f": {failing}"}
    return TP_LINKS.judged(
        severity,
        told + said[severity],
        location=where,
        related=related,
        evidence=evidence,
        fix=fix,
        subject=subject,
    )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(TensorParallelChecker())
