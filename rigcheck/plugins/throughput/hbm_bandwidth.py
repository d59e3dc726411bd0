"""BW001-BW003: decode speed from HBM bandwidth, prefill latency and training time from FLOPs,
against the workload's targets (estimator in rigcheck.core.estimate.throughput)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.estimate import WorkloadEstimate, run_tokens_with_origin
from rigcheck.core.estimate.targets import against_target
from rigcheck.core.estimate.throughput import serving_peak
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

_EFFICIENCY = "Efficiency factors (MFU, MBU) and their sources are in `specs/rules/throughput.yaml`."

DECODE_SPEED = Rule(
    code="BW001",
    name="decode-speed-below-target",
    summary="Estimated decode tokens/s per sequence is below the workload's target",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Estimates decode speed per sequence: each step reads the weights once for the whole batch and each "
        "sequence's KV cache, so `tokens/s = HBM bandwidth x MBU / (weights/tp + concurrency x KV bytes)`; "
        "the compute time of the step is checked too, and the finding says which resource binds. Compared "
        "with `inference.target_tokens_per_s_per_seq`: fail when even the optimistic end of the range misses "
        "it, warn when only the optimistic end meets it. " + _EFFICIENCY,
        why="Decoding is memory-bound: a GPU with twice the TFLOPS but the same bandwidth decodes no faster. "
        "Sizing a serving rig by TFLOPS, or by weights alone, overestimates how many users it can serve.",
        example="```yaml\ninference: {concurrency: 64, context_len: 8192, target_tokens_per_s_per_seq: 30}\n"
        "# 8 x H100 for Llama-3-70B: 17 GB of weights per GPU + 64 x 1.3 GB of KV per step\n```",
        fix="Raise bandwidth per sequence: fewer concurrent sequences per replica, more tensor parallelism, "
        "quantised weights (int8/AWQ) or an fp8 KV cache, or GPUs with more HBM bandwidth (H200, B200).",
        references=(
            "Databricks, LLM Inference Performance Engineering: Best Practices (MBU), "
            "https://www.databricks.com/blog/llm-inference-performance-engineering-best-practices",
            "vLLM, Efficient Memory Management for LLM Serving with PagedAttention, arXiv:2309.06180",
        ),
    ),
)

PREFILL_LATENCY = Rule(
    code="BW002",
    name="prefill-latency-over-target",
    summary="Estimated time to first token exceeds the workload's target",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Estimates the prompt's forward pass, `2 x P x prompt tokens / (GPUs x peak TFLOPS x MFU)`, and "
        "compares it with `inference.target_ttft_ms`. " + _EFFICIENCY,
        why="Prefill is compute-bound; long prompts on few GPUs give a slow first token even when decode is fast.",
        example="```yaml\ninference: {prompt_len: 32000, target_ttft_ms: 500}\n```",
        fix="More tensor parallelism, a GPU with more dense TFLOPS, prefix caching, or shorter prompts.",
        references=("PaLM, arXiv:2204.02311 appendix B (FLOPs per token)",),
    ),
)

TRAINING_TIME = Rule(
    code="BW003",
    name="training-time-over-run-hours",
    summary="Estimated training time for the data exceeds the planned run hours",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Estimates training FLOPs per token (`6 x P + 12 x L x h x s`, `4 x P` for LoRA/QLoRA, one more "
        "forward with full activation checkpointing) over the GPUs' dense TFLOPS at a stated MFU, and the "
        "time to process `data.tokens` (or samples x sequence length, x epochs). Compared with `run.hours`: "
        "fail when even the optimistic end of the range is over (only warn when the tokens are the upper bound "
        "samples x sequence length), warn when the default estimate is over. Training is compute-bound for "
        "transformer-sized matmuls. Communication time is not included (see "
        "the ICX rules). " + _EFFICIENCY,
        why="A run planned for a weekend that needs two weeks changes the purchase, the checkpoint policy and "
        "the budget.",
        example="```yaml\ndata: {tokens: 2.0e10}\nrun: {hours: 24}   # BW003 on one RTX 4090 for an 8B model\n```",
        fix="More or faster GPUs, fewer tokens, a smaller model, or LoRA instead of full fine-tuning; or plan "
        "the run for the estimated hours.",
        references=(
            "Kaplan et al., Scaling Laws for Neural Language Models, arXiv:2001.08361 (C = 6 N D)",
            "PaLM, arXiv:2204.02311 appendix B (MFU)",
            "Narayanan et al., arXiv:2104.04473 (52% of A100 peak at scale)",
        ),
    ),
)


class _OnGpu(NamedTuple):
    """One GPU model's estimate and what its findings share (subject, related location, notes)."""

    ctx: CheckContext
    workload: Workload
    estimate: WorkloadEstimate
    gpu: GpuView
    where_gpu: dict[str, Any]
    notes: dict[str, Any]
    facts: Mapping[str, FactSection]


class HbmBandwidthChecker(Checker):
    """Each GPU model of the rig once, on the first node group that has it (so not a PerGpuTypeChecker)."""

    name = "throughput.hbm-bandwidth"
    rules = (DECODE_SPEED, PREFILL_LATENCY, TRAINING_TIME)
    needs_workload = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        workload = ctx.workload
        if workload is None:  # the engine skips a needs_workload checker before this
            return
        seen: set[str] = set()
        for node in ctx.nodes:
            for gpu in node.gpus:
                if gpu.facts.id in seen:
                    continue
                seen.add(gpu.facts.id)
                yield from self._one(ctx, workload, node, gpu)

    def _one(self, ctx: CheckContext, workload: Workload, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        on_rig = ctx.estimate_on(node, gpu)
        estimate = on_rig.estimate
        where_gpu = {
            "subject": f"{ctx.subject} on {gpu.facts.name}",
            "related": [ctx.rig_at(f"{gpu.pointer}/model")],
        }
        notes = {"gpu_notes": list(on_rig.gpu_notes)} if on_rig.gpu_notes else {}
        on_gpu = _OnGpu(ctx, workload, estimate, gpu, where_gpu, notes, ctx.facts("throughput"))
        if estimate.inputs.training:
            yield self._training(on_gpu)
        else:
            yield self._decode(on_gpu)
            yield self._prefill(on_gpu)

    def _decode(self, on_gpu: _OnGpu) -> Finding:
        ctx, workload, estimate, gpu = on_gpu.ctx, on_gpu.workload, on_gpu.estimate, on_gpu.gpu
        where_gpu, notes, facts = on_gpu.where_gpu, on_gpu.notes, on_gpu.facts
        speed = estimate.decode
        inference = workload.inference
        per_seq_target = inference.target_tokens_per_s_per_seq if inference else None
        total_target = inference.target_tokens_per_s if inference else None
        pointer = (
            "/inference/target_tokens_per_s_per_seq"
            if per_seq_target
            else "/inference/target_tokens_per_s"
            if total_target
            else "/inference"
        )
        where = ctx.workload_at(pointer)
        if speed is None:
            return DECODE_SPEED.skipped(
                f"{gpu.facts.name}: no memory bandwidth in the catalog", location=where, **where_gpu
            )
        tps, total = speed.tokens_per_second_per_seq, speed.aggregate_tokens_per_second
        c = estimate.inputs.concurrency
        evidence = {
            **speed.as_dict(),
            **notes,
            "gpu": gpu.facts.name,
            "target_tokens_per_s_per_seq": per_seq_target,
            "target_tokens_per_s": total_target,
            **facts["decode_mbu"].cite(),
        }
        told = (
            f"{fmt(tps.default, 1)} tokens/s per sequence ({fmt(tps.low, 1)}-{fmt(tps.high, 1)}) and "
            f"{fmt(total.default, 0)} output tokens/s in all ({fmt(total.low, 0)}-{fmt(total.high, 0)}) at "
            f"concurrency {c}, bound by {speed.binds}: {speed.formula}"
        )
        if per_seq_target is not None:
            target, value, what = per_seq_target, tps, "tokens/s per sequence"
            fix = (
                f"to reach {fmt(target)} tokens/s per sequence: serve about "
                f"{max(1, int(c * tps.default / target))} sequences per replica, raise tensor parallelism, "
                f"quantise weights or the KV cache (fp8), or use GPUs with more memory bandwidth"
            )
        elif total_target is not None:
            target, value, what = total_target, total, "output tokens/s in all"
            fix = (
                f"to reach {fmt(target)} output tokens/s: more replicas or GPUs, a larger batch where memory "
                f"allows, quantised weights, or GPUs with more memory bandwidth"
            )
        else:
            return DECODE_SPEED.skipped(
                f"no inference.target_tokens_per_s_per_seq or target_tokens_per_s; estimate {told}",
                location=where,
                evidence=evidence,
                fix="set inference.target_tokens_per_s_per_seq (or target_tokens_per_s) to check the rig against it",
                **where_gpu,
            )
        if speed.binds != "memory bandwidth":
            fix += f" (this step is bound by {speed.binds})"
        return against_target(
            DECODE_SPEED,
            f"{told}; target {fmt(target)} {what}",
            optimistic_misses=value.high < target,
            default_misses=value.default < target,
            fix=fix,
            location=where,
            evidence=evidence,
            **where_gpu,
        )

    def _prefill(self, on_gpu: _OnGpu) -> Finding:
        ctx, workload, estimate, gpu = on_gpu.ctx, on_gpu.workload, on_gpu.estimate, on_gpu.gpu
        where_gpu, notes, facts = on_gpu.where_gpu, on_gpu.notes, on_gpu.facts
        inputs = estimate.inputs
        inference = workload.inference
        target = inference.target_ttft_ms if inference else None
        where = ctx.workload_at("/inference/target_ttft_ms" if target else "/inference")
        speed = estimate.decode
        if speed is None or speed.ttft_ms is None:
            return PREFILL_LATENCY.skipped(
                f"{gpu.facts.name}: no dense TFLOPS or memory bandwidth in the catalog",
                location=where,
                **where_gpu,
            )
        ttft = speed.ttft_ms
        gpus = inputs.tp * inputs.pp
        mfu = facts["prefill_mfu"]
        evidence = {
            "prompt_tokens": speed.serving.prompt_tokens,
            "gpus": gpus,
            "ttft_ms": ttft.as_dict(1),
            "target_ttft_ms": target,
            **notes,
            **mfu.cite(),
        }
        peak, field = serving_peak(gpu.facts, inputs)
        evidence["peak_tflops"], evidence["peak_field"] = peak, field
        told = (
            f"prefill of {speed.serving.prompt_tokens:,} tokens about {fmt(ttft.default, 0)} ms "
            f"({fmt(ttft.low, 0)}-{fmt(ttft.high, 0)}) on {gpus} x {gpu.facts.name} (MFU {mfu['default']:g} of "
            f"{fmt(peak or 0)} TFLOPS, {field}"
            + (", with its tensor-parallel all-reduces" if inputs.tp > 1 else "")
            + ")"
        )
        if target is None:
            return PREFILL_LATENCY.skipped(
                f"no inference.target_ttft_ms; {told}", location=where, evidence=evidence, **where_gpu
            )
        if ttft.default > target:
            return PREFILL_LATENCY.warned(
                f"{told}; target {fmt(target)} ms",
                location=where,
                evidence=evidence,
                fix="more tensor parallelism, a faster GPU, prefix caching or shorter prompts",
                **where_gpu,
            )
        return PREFILL_LATENCY.passed(
            f"{told}; target {fmt(target)} ms", location=where, evidence=evidence, **where_gpu
        )

    def _training(self, on_gpu: _OnGpu) -> Finding:
        ctx, workload, estimate, gpu = on_gpu.ctx, on_gpu.workload, on_gpu.estimate, on_gpu.gpu
        where_gpu, notes, facts = on_gpu.where_gpu, on_gpu.notes, on_gpu.facts
        speed = estimate.training
        run = workload.run
        hours_planned = run.hours if run else None
        where = ctx.workload_at("/run/hours" if hours_planned else "/run")
        if speed is None:
            return TRAINING_TIME.skipped(
                f"{gpu.facts.name}: no dense TFLOPS for {estimate.inputs.precision} in the catalog",
                location=where,
                **where_gpu,
            )
        tps = speed.tokens_per_second
        step = speed.step
        evidence = {
            **speed.as_dict(),
            **notes,
            "gpu": gpu.facts.name,
            "run_hours_planned": hours_planned,
            **facts["training_hfu"].cite(),
            "communication_source": facts["communication"].source,
        }
        parts = ", ".join(f"{name} {fmt(seconds, 3)} s" for name, seconds in step.parts())
        exposed = ""
        if step.untimed:
            exposed = f"; communication not timed: {step.untimed[0].over}, so the step takes at least this"
        elif step.collectives:
            worst = max(step.collectives, key=lambda item: item.seconds)
            exposed = f"; largest transfer: {worst.describe()}"
        told = (
            f"{fmt(tps.default, 0)} tokens/s ({fmt(tps.low, 0)}-{fmt(tps.high, 0)}) on {speed.gpus} x "
            f"{gpu.facts.name}, bound by {speed.binds} (step {fmt(step.step_seconds, 3)} s = {parts}{exposed}); "
            f"{speed.formula}"
        )
        if speed.run_hours is None:
            return TRAINING_TIME.skipped(
                f"data.tokens (or samples) not given, so the run length is unknown; {told}",
                location=ctx.workload_at("/data"),
                evidence=evidence,
                fix="add data.tokens (or data.samples) to the workload",
                **where_gpu,
            )
        hours = speed.run_hours
        _, origin = run_tokens_with_origin(workload, estimate.inputs.seq_len)
        upper_bound = origin != "data.tokens"
        evidence["run_tokens_from"] = origin
        bound = " (samples x seq_len, an upper bound)" if upper_bound else ""
        told = (
            f"{speed.run_tokens:,.0f} tokens{bound} take about {fmt(hours.default, 1)} h ({fmt(hours.low, 1)}-"
            f"{fmt(hours.high, 1)} h) at {told}"
        )
        if hours_planned is None:
            return TRAINING_TIME.skipped(
                f"run.hours not given; {told}",
                location=where,
                evidence=evidence,
                fix="add run.hours to check the plan against the estimate",
                **where_gpu,
            )
        lora = (
            " or LoRA instead of full fine-tuning"
            if estimate.inputs.task in ("pretrain", "full_finetune")
            else ""
        )
        if speed.binds == "compute":
            fix = f"plan about {fmt(hours.default, 0)} h, or cut the time with more or faster GPUs, fewer tokens{lora}"
        else:
            fix = (
                f"plan about {fmt(hours.default, 0)} h, or cut the communication: a faster network or NVLink, "
                f"more gradient accumulation (fewer synchronisations per token), FSDP hybrid_shard or ZeRO-2 "
                f"(shard within a node), or fewer, larger nodes"
            )
        if step.untimed and not hours.low > hours_planned:
            return TRAINING_TIME.skipped(
                f"not checked: the communication is not timed, and the compute alone fits the plan; {told}; "
                f"planned {fmt(hours_planned)} h",
                location=where,
                evidence=evidence,
                fix="declare the network between the nodes (nodes[].network) so that its collectives can be timed",
                **where_gpu,
            )
        if hours.low > hours_planned and upper_bound:
            return TRAINING_TIME.warned(
                f"{told}; planned {fmt(hours_planned)} h",
                location=where,
                evidence=evidence,
                fix=fix
                + "; give data.tokens for a firm verdict (this counts every sample at the full length)",
                **where_gpu,
            )
        return against_target(
            TRAINING_TIME,
            f"{told}; planned {fmt(hours_planned)} h",
            optimistic_misses=hours.low > hours_planned,
            default_misses=hours.default > hours_planned,
            fix=fix,
            location=where,
            evidence=evidence,
            **where_gpu,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(HbmBandwidthChecker())
