"""MEM001-MEM002: does the workload fit in each GPU's memory, and are there GPUs enough for its
parallelism (docs/research/vram.md; estimator in rigcheck.core.estimate.estimate)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.estimate import (
    GIB,
    MemoryEstimate,
    beside_budget,
    fit_verdict,
    largest_micro_batch,
    memory_inputs,
    pass_ceiling,
    passes,
    usable_bytes,
)
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

if TYPE_CHECKING:
    from rigcheck.core.estimate.fixes import Limits

VRAM_FIT = Rule(
    code="MEM001",
    name="vram-exceeds-gpu-memory",
    summary="The workload's estimated per-GPU memory, with its range, does not fit the GPU's usable VRAM",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Estimates the per-GPU memory of the workload, component by component (weights, gradients, "
        "optimizer states, adapters, saved activations, autocast's weight copies, the loss's logits, gathered "
        "FSDP/ZeRO-3 units, QLoRA dequantisation, backward and optimizer temporaries, KV cache, the allocator, "
        "the CUDA context), at the moment of the step where it peaks, with a range from the spread of the "
        "mechanisms at work (saved activations, an engine's workspaces, the caching allocator, the CUDA context). "
        "Fails when the estimate does not fit the GPU's usable VRAM, warns when the range reaches it, passes when "
        "its high end fits. For vLLM the budget is "
        "the engine's share of the card (gpu_memory_utilization, "
        "{facts:memory.inference.vllm_gpu_memory_utilization} by default), and the CUDA graphs and context "
        "it keeps beside that share must fit in the rest. With pipeline parallelism each stage is estimated on its "
        "own (the first holds the embedding and the most micro-batches in flight, the last the head, logits and "
        "loss) and the stage that needs the most is reported, named in the finding's notes.",
        why="Out-of-memory errors are the most common way a planned run fails, and the public calculators miss "
        "by 20-50% once sequence length, attention kernel, LoRA or the vocabulary size matter: `accelerate "
        "estimate-memory` counts weights only, DeepSpeed's estimators leave activations out. rigcheck's "
        "estimate is held to traces of the model code and to published measurements "
        "(benchmarks/memory_accuracy.py).",
        example="```yaml\nmodel: {preset: llama-3-8b}\ntask: full_finetune\nprecision: bf16\noptimizer: adamw\n"
        "batch: {micro: 4, seq_len: 4096}   # MEM001 on a 24 GB card: about 16 B/param of states alone\n```",
        fix="The finding lists changes that make the workload fit, each re-estimated before it is shown: the "
        "largest micro-batch (or concurrency, or context) that fits, chunked or fused loss, flash attention, "
        "activation checkpointing or offloading, an 8-bit or fused optimizer, sharding, offload (when the host "
        "has the memory), LoRA/QLoRA, tensor parallelism that divides the heads, pipeline stages for a serve "
        "(no fix needs more GPUs than the rig has); combinations when no single "
        "change is enough (the three cheapest that pass), where a micro-batch or length that fits at no value "
        "on its own takes the largest value that fits with the other changes; and, when nothing fits the GPUs "
        "the rig has, how many GPUs of this kind it needs.",
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

HOST_MEMORY = Rule(
    code="MEM003",
    name="offload-exceeds-host-memory",
    summary="What the workload offloads to the host (optimizer states, parameters) does not fit the node's RAM",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="With `parallelism.offload: cpu`, every rank on a node keeps its share of the optimizer states (and, "
        "with `offload_params`, of the parameters and gradients) in the node's memory. Compares that sum with the "
        "node's `memory_gib`, less a reserve for the OS and the data loaders.",
        why="An offloaded run that runs out of host memory is killed by the kernel's OOM killer or swaps until a "
        "step takes minutes; DeepSpeed's own estimator allots 1.5x the offloaded bytes on the host.",
        example="```yaml\nparallelism: {dp: 8, zero: 3, offload: cpu, offload_params: true}   # a 70B model\n"
        "# on a node "
        "with 256 GiB: 8 ranks x 70B x 16 B / 8 = 1,120 GB offloaded\n```",
        fix="Add host memory, shard over more nodes (each node then holds a smaller share), or offload the optimizer "
        "states only.",
        references=(
            "deepspeedai/DeepSpeed deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs (CPU side)",
            "PyTorch FSDP CPUOffload(offload_params=True)",
        ),
    ),
)

ASSUMED = Rule(
    code="MEM004",
    name="estimate-assumes-unstated-batch",
    summary="The memory estimate assumes a batch or sequence length the workload does not state",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Warns when the workload gives no `batch:` (training) or no context length, so the estimate used "
        "micro-batch 1 or the model's maximum length; says what was assumed.",
        why="Activations and the KV cache grow with the tokens per micro-batch: an estimate at the model's 128k "
        "maximum, or at micro-batch 1, can be far from the run that is planned, and nothing in the report would "
        "show it.",
        example="```yaml\nmodel: {preset: llama-3.1-8b}\ntask: lora          # no batch: estimated at 1 x 131,072 "
        "tokens\n```",
        fix="Write `batch: {micro: N, seq_len: S}` (training) or `inference: {context_len: S, concurrency: N}`.",
        references=("docs/specs.md (workload fields)",),
    ),
)


def _degrees_within(par: Any, available: int) -> str:
    """Degrees whose product fits ``available`` GPUs: the model's own split (tp x pp x cp) kept where it
    fits and dp filling the rest; else cp, then pp, then tp cut to the largest of their divisors that
    fit (a 2-GPU rig asked for tp 4 gets tp 2, not dp 1 with tp 4)."""

    def largest_divisor(value: int, most: int) -> int:
        return max(d for d in range(1, value + 1) if value % d == 0 and d <= max(1, most))

    tp, pp, cp = par.tp, par.pp, par.cp
    if tp * pp * cp > available:
        cp = largest_divisor(cp, available // (tp * pp)) if tp * pp <= available else 1
        pp = largest_divisor(pp, available // (tp * cp)) if tp * cp <= available else 1
        tp = largest_divisor(tp, available // (pp * cp))
    dp = max(1, available // (tp * pp * cp))
    parts = [f"dp {dp}", f"tp {tp}", f"pp {pp}"] + ([f"cp {cp}"] if cp > 1 else [])
    return ", ".join(parts[:-1]) + f" and {parts[-1]}"


class VramFitChecker(Checker):
    """MEM002 for the rig, MEM001/MEM003 once per GPU model and memory size, then MEM004: rig-wide findings
    around the walk, so a plain Checker."""

    name = "memory.vram-fit"
    rules = (VRAM_FIT, WORLD_SIZE, HOST_MEMORY, ASSUMED)
    needs_workload = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        workload = ctx.workload
        assert workload is not None
        yield self._world_size(ctx, workload)
        seen: set[tuple[str, float]] = set()
        for node in ctx.nodes:
            for gpu in node.gpus:
                key = (gpu.facts.id, gpu.memory_gib)
                if key in seen:
                    continue
                seen.add(key)
                yield from self._fit(ctx, node, gpu)
        yield from self._assumed(ctx)

    def _assumed(self, ctx: CheckContext) -> Iterator[Finding]:
        """MEM004: what the estimate assumed because the workload is silent."""
        inputs = memory_inputs(ctx.workload, ctx.arch) if ctx.arch is not None else None
        if inputs is None or not inputs.assumed:
            return
        training = inputs.training
        yield ASSUMED.warned(
            "the memory estimate assumes "
            + " and ".join(inputs.assumed)
            + ", which the workload does not state",
            location=ctx.workload_at("/batch" if training else "/inference"),
            evidence={"assumed": list(inputs.assumed)},
            subject=ctx.subject,
            fix="write batch: {micro: N, seq_len: S}"
            if training
            else "write inference: {context_len: S, concurrency: N}",
        )

    def _world_size(self, ctx: CheckContext, workload: Workload) -> Finding:
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
                fix=f"fit the degrees to {available} GPUs (for example {_degrees_within(par, available)}), or "
                "add nodes",
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

    def _fit(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        """MEM001 and MEM003 on one GPU type."""
        estimate = ctx.estimate_for(node, gpu)
        assert estimate is not None  # needs_workload
        subject = f"{ctx.subject} on {gpu.facts.name}"
        yield self._vram_fit(ctx, node, gpu, estimate, subject)
        yield from self._host(ctx, node, estimate.memory, subject)

    def _vram_fit(
        self, ctx: CheckContext, node: NodeView, gpu: GpuView, estimate: Any, subject: str
    ) -> Finding:
        """MEM001: the estimate against the GPU's usable memory, with the largest micro-batch that fits
        on a pass and the fixes that fit (each re-estimated) otherwise."""
        memory = estimate.memory
        facts = ctx.facts("memory")
        usable, usable_why = usable_bytes(gpu.facts, memory_gib=gpu.spec.memory_gib, ecc_enabled=gpu.spec.ecc)
        verdict = fit_verdict(memory, usable, facts)
        training = estimate.inputs.training
        where = ctx.workload_at("/batch/micro" if training else "/inference/concurrency")
        related = [ctx.rig_at(f"{gpu.pointer}/model")]
        breakdown = {item.name: round(item.gib, 3) for item in memory.components}
        evidence = {
            "gpu": gpu.facts.name,
            "usable_gib": round(usable / GIB, 3),
            "usable_from": usable_why,
            "budget_gib": round(verdict.capacity / GIB, 3),
            "need_gib": round(verdict.need / GIB, 3),
            "range_gib": [round(verdict.low / GIB, 3), round(verdict.high / GIB, 3)],
            "device_gib": round(memory.device_gib, 3),
            "allocated_gib": round(memory.allocated_gib, 3),
            "reserved_gib": round(memory.reserved_gib, 3),
            "share": round(verdict.share, 3),
            "components_gib": breakdown,
            "not_at_peak": [item.name for item in memory.components if not item.at_peak],
            "formulas": {item.name: item.formula for item in memory.components},
            "peak_phase": memory.peak_phase,
            "phases_gib": {name: round(value / GIB, 3) for name, value in memory.phases.items()},
            "model": estimate.arch.name,
            "params_b": round(estimate.arch.params / 1e9, 3),
            "notes": list(memory.notes),
            "range_from_gib": {
                name: [round(down / GIB, 3), round(up / GIB, 3)]
                for name, (down, up) in verdict.spread.items()
            },
            **facts["spread"].cite(),
        }
        if verdict.outside:
            evidence["beside_pool_gib"] = round(verdict.outside / GIB, 3)
            evidence["beside_pool"] = list(beside_budget(memory))
        peak = [item for item in memory.components if item.at_peak and item.category != "runtime"]
        top = ", ".join(
            f"{item.name} {item.gib:.1f}" for item in sorted(peak, key=lambda item: -item.bytes)[:3]
        )
        low, high, need = verdict.low / GIB, verdict.high / GIB, verdict.need / GIB
        budget = "budget" if verdict.capacity < usable else "usable"
        compared = (
            f"{fmt(need, 1)} GiB per GPU (range {fmt(low, 1)}-{fmt(high, 1)}; {top} GiB, peak in the "
            f"{memory.peak_phase}) against {fmt(verdict.capacity / GIB, 1)} GiB {budget} on the {gpu.facts.name}"
        )

        if verdict.severity == "pass":
            largest = largest_micro_batch(estimate.inputs, usable, facts)
            evidence["largest_fitting"] = largest
            what = "micro-batch" if training else "concurrency"
            return VRAM_FIT.passed(
                f"{compared}: the high end fits, {fmt((verdict.capacity - verdict.high) / GIB, 1)} GiB to spare; "
                f"largest {what} that fits: {largest}",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
            )

        def fits(candidate: Any) -> bool:
            return passes(candidate, usable, facts)

        def ceiling(inputs: Any) -> float | None:  # what the search for fixes may stop short of
            return pass_ceiling(inputs, usable, facts)

        # the search for fixes is imported only when a workload does not fit
        from rigcheck.core.estimate.fixes import find_fixes, gpus_needed

        limits = replace(_limits(ctx, node), usable=usable, outside=verdict.outside)

        found = find_fixes(estimate.inputs, fits, limits, facts=facts, ceiling=ceiling)
        evidence["fixes"] = [
            {
                "change": fix.description,
                "changes": _plain(fix.changes),
                "device_gib": round(fix.device_gib, 2),
            }
            for fix in found
        ]
        if found:
            fix_text = "fits with: " + "; ".join(
                f"{fix.description} -> {fix.device_gib:.1f} GiB" for fix in found
            )
        else:
            needed = None if limits.fixed_gpus else gpus_needed(estimate.inputs, fits, ceiling=ceiling)
            if needed:
                count, changes = needed
                evidence["gpus_needed"] = {"gpus": count, "changes": _plain(changes)}
                fix_text = (
                    f"no change fits the {limits.gpus} GPU(s) of this rig; it needs {count} GPUs of this kind "
                    f"({', '.join(f'{key} {value}' for key, value in changes.items())}), or GPUs with more memory"
                )
            else:
                fix_text = "no change fits this GPU; choose a GPU with more memory" + (
                    " (a larger instance type)" if limits.fixed_gpus else ""
                )
        message = f"{compared}: {verdict.reason}" + (
            f" ({fmt((verdict.need - verdict.capacity) / GIB, 1)} GiB over)"
            if verdict.need > verdict.capacity
            else ""
        )
        finding = VRAM_FIT.failed if verdict.severity == "fail" else VRAM_FIT.warned
        return finding(
            message, location=where, related=related, evidence=evidence, fix=fix_text, subject=subject
        )

    def _host(
        self, ctx: CheckContext, node: NodeView, memory: MemoryEstimate, subject: str
    ) -> Iterator[Finding]:
        """MEM003: offloaded states against the node's RAM (less the platform's reserve)."""
        if not memory.host:
            return
        ranks = min(memory.inputs.world, node.gpus_per_node)
        need = memory.host * ranks
        where = ctx.workload_at("/parallelism/offload")
        related = [ctx.rig_at(f"{node.pointer}/memory_gib")]
        evidence: dict[str, Any] = {
            "host_gib_per_gpu": round(memory.host / GIB, 3),
            "ranks_on_node": ranks,
            "need_gib": round(need / GIB, 3),
        }
        if node.spec.memory_gib is None:
            yield HOST_MEMORY.skipped(
                f"{fmt(need / GIB, 1)} GiB offloaded to the host ({ranks} ranks x {fmt(memory.host / GIB, 1)} GiB); "
                "the "
                f"rig does not give the node's memory_gib",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix="give the node's memory_gib",
            )
            return
        reserve = float(ctx.facts("memory")["host"]["reserve_fraction"])
        available = float(node.spec.memory_gib) * (1 - reserve) * GIB
        evidence.update(
            {
                "memory_gib": float(node.spec.memory_gib),
                "reserve_fraction": reserve,
                **ctx.facts("memory")["host"].cite(),
            }
        )
        text = (
            f"{fmt(need / GIB, 1)} GiB offloaded ({ranks} ranks x {fmt(memory.host / GIB, 1)} GiB) against "
            f"{fmt(available / GIB, 1)} GiB of the node's {fmt(float(node.spec.memory_gib), 0)} GiB "
            f"(less {reserve:.0%} for the OS "
            f"and data loaders)"
        )
        if need > available:
            yield HOST_MEMORY.failed(
                f"{text}: {fmt((need - available) / GIB, 1)} GiB short",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=f"give the node at least {fmt(need / (1 - reserve) / GIB, 0)} GiB, shard over more nodes, "
                "or offload "
                "the optimizer states only",
            )
        else:
            yield HOST_MEMORY.passed(
                text, location=where, related=related, evidence=evidence, subject=subject
            )


def _limits(ctx: CheckContext, node: NodeView) -> Limits:
    from rigcheck.core.estimate.fixes import Limits

    return Limits(
        gpus=sum(view.count * view.gpus_per_node for view in ctx.nodes),
        gpus_per_node=node.gpus_per_node,
        fixed_gpus=any(view.spec.instance for view in ctx.nodes),
        host_gib_per_node=float(node.spec.memory_gib) if node.spec.memory_gib is not None else None,
        utilization=float(ctx.facts("memory")["inference"]["vllm_gpu_memory_utilization"]),
    )


def _plain(changes: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in changes.items()}


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(VramFitChecker())
