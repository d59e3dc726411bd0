"""MEM001-MEM002: does the workload fit in each GPU's memory, and are there GPUs enough for its
parallelism (research/vram.md; estimator in rigcheck.core.estimate)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext, GpuView, NodeView
from rigcheck.core.estimate import (
    GIB,
    alternatives,
    capacity_for,
    estimate_workload,
    largest_micro_batch,
    required_bytes,
    usable_bytes,
)
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

VRAM_FIT = Rule(
    code="MEM001",
    name="vram-exceeds-gpu-memory",
    summary="The workload's estimated per-GPU memory exceeds the GPU's usable VRAM (or leaves under 10%)",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Estimates the per-GPU memory of the workload, component by component (weights, 16-bit copies, "
        "gradients, master weights, optimizer states, adapters, activations, logits, KV cache, gathered "
        "ZeRO-3 layers, QLoRA dequantisation, allocator overhead, CUDA context), and compares the device "
        "total (what nvidia-smi would show) with the GPU's usable VRAM: fail when it exceeds it, warn above "
        "90%, pass with the headroom and the largest micro-batch that fits. For vLLM the budget is the "
        "engine's share of the card (gpu_memory_utilization, 0.9 by default).",
        why="Out-of-memory errors are the most common way a planned run fails, and the public calculators miss "
        "by 20-50% once sequence length, attention kernel, LoRA or the vocabulary size matter: `accelerate "
        "estimate-memory` counts weights only, DeepSpeed's estimators leave activations out. rigcheck's "
        "estimate is checked against published measurements (benchmarks/memory_accuracy.py).",
        example="```yaml\nmodel: {preset: llama-3-8b}\ntask: full_finetune\nprecision: bf16\noptimizer: adamw\n"
        "batch: {micro: 4, seq_len: 4096}   # MEM001 on a 24 GB card: about 18 B/param of states alone\n```",
        fix="The finding lists the changes that make it fit, each re-estimated, cheapest first: a smaller "
        "micro-batch with more gradient accumulation (same global batch), chunked loss, flash attention, "
        "activation checkpointing, an 8-bit optimizer, LoRA/QLoRA, a higher ZeRO stage, CPU offload, or more "
        "GPUs.",
        references=(
            "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models, arXiv:2205.05198",
            "Rajbhandari et al., ZeRO, arXiv:1910.02054",
            "Dettmers et al., QLoRA, arXiv:2305.14314",
            "HF transformers, Model training anatomy (docs/source/en/model_memory_anatomy.md)",
        ),
    ),
)

WORLD_SIZE = Rule(
    code="MEM002",
    name="parallelism-needs-more-gpus",
    summary="The workload's dp x tp x pp x cp needs more GPUs than the rig has",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares the workload's world size (data x tensor x pipeline x context parallel degrees) with the "
        "number of GPUs in the rig (all node groups).",
        why="A launcher asked for more ranks than there are GPUs waits forever or fails at start; the memory "
        "estimate of MEM001 also assumes every rank has its own GPU.",
        example="```yaml\nparallelism: {dp: 32, zero: 3}   # MEM002 on a rig of 2 x 8 GPUs\n```",
        fix="Lower the degrees to the GPUs available (the finding gives the count), or add nodes.",
        references=("PyTorch torchrun: world size = nnodes x nproc_per_node",),
    ),
)


class VramFitChecker(Checker):
    name = "memory.vram-fit"
    rules = (VRAM_FIT, WORLD_SIZE)
    needs_workload = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        workload = ctx.workload
        assert workload is not None
        yield self._world_size(ctx)
        seen: set[tuple[str, float]] = set()
        for node in ctx.nodes:
            for gpu in node.gpus:
                key = (gpu.facts.id, gpu.memory_gib)
                if key in seen:
                    continue
                seen.add(key)
                yield self._fit(ctx, node, gpu)

    def _world_size(self, ctx: CheckContext) -> Finding:
        workload = ctx.workload
        par = workload.parallelism
        world = par.world_size
        available = sum(node.count * node.gpus_per_node for node in ctx.nodes)
        evidence = {
            "dp": par.dp,
            "tp": par.tp,
            "pp": par.pp,
            "cp": par.cp,
            "world_size": world,
            "rig_gpus": available,
            "formula": "world = dp x tp x pp x cp",
        }
        where = ctx.workload_at("/parallelism")
        subject = ctx.subject
        related = [ctx.rig_at("/nodes")]
        if world > available:
            return WORLD_SIZE.failed(
                f"dp {par.dp} x tp {par.tp} x pp {par.pp} x cp {par.cp} = {world} ranks, but {ctx.rig.name} has "
                f"{available} GPUs",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=f"fit the degrees to {available} GPUs (for example dp {max(1, available // (par.tp * par.pp))} "
                f"with tp {par.tp} and pp {par.pp}), or add nodes",
            )
        used = "" if world == available else f" ({available - world} left idle)"
        ranks = "1 rank" if world == 1 else f"{world} ranks"
        return WORLD_SIZE.passed(
            f"{ranks} on {available} GPU{'s' if available != 1 else ''}{used}",
            location=where,
            related=related,
            evidence=evidence,
            subject=subject,
        )

    def _fit(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Finding:
        workload = ctx.workload
        estimate = estimate_workload(workload, gpu=gpu.facts, gpus_per_node=node.gpus_per_node, arch=ctx.arch)
        memory = estimate.memory
        usable, usable_why = usable_bytes(gpu.facts, memory_gib=gpu.spec.memory_gib, ecc_enabled=gpu.spec.ecc)
        capacity = capacity_for(memory, usable)
        need = required_bytes(memory)
        share = need / capacity
        warn_above = float(ctx.facts("memory")["fit"]["warn_above_fraction"])
        training = estimate.inputs.training
        subject = f"{ctx.subject} on {gpu.facts.name}"
        where = ctx.workload_at("/batch/micro" if training else "/inference/concurrency")
        related = [ctx.rig_at(f"{gpu.pointer}/model")]
        breakdown = {item.name: round(item.gib, 3) for item in memory.components}
        evidence = {
            "gpu": gpu.facts.name,
            "usable_gib": round(usable / GIB, 3),
            "usable_from": usable_why,
            "budget_gib": round(capacity / GIB, 3),
            "device_gib": round(memory.device_gib, 3),
            "allocated_gib": round(memory.allocated_gib, 3),
            "reserved_gib": round(memory.reserved_gib, 3),
            "share": round(share, 3),
            "warn_above": warn_above,
            "components_gib": breakdown,
            "formulas": {item.name: item.formula for item in memory.components},
            "peak_phase": memory.peak_phase,
            "model": estimate.arch.name,
            "params_b": round(estimate.arch.params / 1e9, 3),
            "notes": list(memory.notes),
            **ctx.facts("memory")["fit"].cite(),
        }
        top = ", ".join(
            f"{name} {gib:.1f}" for name, gib in sorted(breakdown.items(), key=lambda kv: -kv[1])[:3]
        )
        compared = (
            f"{fmt(memory.device_gib, 1)} GiB per GPU ({top} GiB) against {fmt(capacity / GIB, 1)} GiB "
            f"{'budget' if capacity < usable else 'usable'} on the {gpu.facts.name}"
        )
        if share <= warn_above:
            largest = largest_micro_batch(estimate.inputs, capacity)
            evidence["largest_fitting"] = largest
            what = "micro-batch" if training else "concurrency"
            return VRAM_FIT.passed(
                f"{compared}: {share:.0%} used, {fmt((capacity - need) / GIB, 1)} GiB free; largest {what} that "
                f"fits: {largest}",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
            )
        target = capacity * (warn_above if share <= 1 else 1.0)
        options = alternatives(estimate.inputs, target)
        fitting = [option for option in options if option.fits]
        evidence["alternatives"] = [
            {
                "change": option.description,
                "device_gib": round(option.estimate.device_gib, 2),
                "fits": option.fits,
            }
            for option in options
        ]
        if fitting:
            fix = "fits with: " + "; ".join(
                f"{option.description} -> {option.estimate.device_gib:.1f} GiB" for option in fitting[:3]
            )
        else:
            fix = (
                "no single change fits; combine them (e.g. "
                + ", ".join(option.name for option in options[:3])
                + ") or use a GPU with more memory"
            )
        if share > 1:
            return VRAM_FIT.failed(
                f"{compared}: {fmt((need - capacity) / GIB, 1)} GiB over",
                location=where,
                related=related,
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        return VRAM_FIT.warned(
            f"{compared}: {share:.0%} used, above {warn_above:.0%}",
            location=where,
            related=related,
            evidence=evidence,
            fix=fix,
            subject=subject,
        )


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(VramFitChecker())
