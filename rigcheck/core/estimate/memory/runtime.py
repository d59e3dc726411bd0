"""What the device holds beyond the tensors a step allocates: the caching allocator's slack, the CUDA
context and kernels, and NCCL's buffers (docs/research/vram.md section 6; specs/rules/memory.yaml runtime).

    allocated = the peak of live tensors        torch.cuda.max_memory_allocated
    reserved  = allocated x (1 + overhead)      torch.cuda.max_memory_reserved
    device    = reserved + context (+ NCCL)     what nvidia-smi shows
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rigcheck.core.estimate.memory.inputs import MemoryInputs
from rigcheck.core.estimate.memory.result import GIB, Component, MemoryEstimate


def _context_gib(inputs: MemoryInputs, runtime: Mapping[str, Any]) -> float:
    return (
        inputs.cuda_context_gib if inputs.cuda_context_gib is not None else float(runtime["cuda_context_gib"])
    )


def training_device_floor(peak: float, inputs: MemoryInputs, facts: Mapping[str, Any]) -> float:
    """The least device total :func:`finish` can give a training step whose peak is at least ``peak``:
    the allocator's share of it, the CUDA context, and NCCL's buffers where there are other ranks
    (what it adds to any peak; the engine's own buffers only add to that)."""
    runtime = facts["runtime"]
    device = peak * (1 + float(runtime["allocator_overhead"])) + _context_gib(inputs, runtime) * GIB
    if inputs.world > 1:
        device += float(runtime["nccl_buffers_gib"]) * GIB
    return device


def finish(
    components: list[Component],
    peak: float,
    phase: str,
    inputs: MemoryInputs,
    facts: Mapping[str, Any],
    notes: list[str],
    *,
    phases: Mapping[str, float] | None = None,
    host: float = 0.0,
) -> MemoryEstimate:
    runtime = facts["runtime"]
    overhead = float(runtime["allocator_overhead"])
    context_gib = _context_gib(inputs, runtime)
    items = list(components)
    vllm = inputs.engine == "vllm" and not inputs.training
    own_allocator = not inputs.training and inputs.engine in runtime["engines_without_caching_allocator"]
    if vllm or own_allocator:  # vLLM's pool is one allocation, its profiler's figures its own; TensorRT,
        reserved = peak  # ggml and TVM allocate what they planned: no caching allocator's slack
    else:
        reserved = peak * (1 + overhead)
        items.append(
            Component(
                "allocator_overhead",
                reserved - peak,
                f"{overhead:.0%} of allocated (caching allocator rounding and fragmentation)",
                "runtime",
                category="runtime",
            )
        )
    context = context_gib * GIB
    items.append(
        Component(
            "cuda_context",
            context,
            f"{context / GIB:g} GiB CUDA context and kernels",
            "runtime",
            category="runtime",
        )
    )
    if (
        vllm and inputs.tp > 1
    ):  # NCCL's communicators, set up when the worker starts (apart: vLLM releases count
        init = float(facts["inference"]["vllm_nccl_init_gib"]) * GIB  # them inside or beside its share)
        items.append(
            Component(
                "nccl_init",
                init,
                f"{init / GIB:g} GiB NCCL set-up at tp {inputs.tp} (vLLM's worker start)",
                "runtime",
                category="runtime",
            )
        )
        context += init
    device = reserved + context
    engine = sum(item.bytes for item in items if item.name in ("nccl_buffers", "cuda_graphs"))
    device += engine
    if inputs.world > 1 and not vllm:
        nccl = float(runtime["nccl_buffers_gib"]) * GIB
        items.append(
            Component(
                "nccl_buffers",
                nccl,
                f"{runtime['nccl_buffers_gib']:g} GiB NCCL buffers",
                "runtime",
                category="runtime",
            )
        )
        device += nccl
    return MemoryEstimate(
        tuple(items),
        peak,
        reserved,
        device,
        phase,
        inputs,
        tuple(dict.fromkeys(notes)),
        phases=dict(phases or {}),
        host=host,
    )
