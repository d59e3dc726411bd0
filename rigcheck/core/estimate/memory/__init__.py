"""Per-GPU memory of training and inference, as named components (docs/research/vram.md section 7).

    peak = the largest of the training step's phases (forward, backward start, late backward,
           optimizer step), each the sum of what is alive then: model states (weights, gradients,
           optimizer states, adapters), saved activations, autocast's weight copies, the loss's
           logits, gathered FSDP/ZeRO-3 units, backward and optimizer temporaries
    allocated = peak; reserved and device add the allocator, the CUDA context and NCCL

The modules: :mod:`.inputs` (what is read), :mod:`.flow` (dtypes), :mod:`.activations` (what a block
keeps), :mod:`.shards` (TP/PP/EP and ZeRO/FSDP splits), :mod:`.training`, :mod:`.inference`,
:mod:`.runtime`. The constants are data: ``specs/rules/memory.yaml``. The model is held to traces of
the real model code (``tests/test_traced_grid.py``) and to published measurements
(``benchmarks/memory_accuracy.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rigcheck.core.estimate.memory.inputs import MIXED, TRUE_16, MemoryInputs
from rigcheck.core.estimate.memory.result import CATEGORIES, GIB, Component, MemoryEstimate, fmt_bytes
from rigcheck.core.estimate.memory.shards import Shards, shard_count

#: A training step's part makers: states, saved activations, the forward's other terms
#: (:func:`~rigcheck.core.estimate.memory.training.states_of`, ``saved_of``, ``extras_apart_of``).
Parts = tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]

__all__ = [
    "CATEGORIES",
    "GIB",
    "MIXED",
    "TRUE_16",
    "Component",
    "MemoryEstimate",
    "MemoryInputs",
    "Parts",
    "Shards",
    "estimate_memory",
    "estimate_memory_below",
    "fmt_bytes",
    "shard_count",
]


def estimate_memory(inputs: MemoryInputs, facts: Mapping[str, Any] | None = None) -> MemoryEstimate:
    """Estimate one GPU's memory for a training or inference workload."""
    estimate = estimate_memory_below(inputs, None, facts)
    assert estimate is not None  # no ceiling: always made
    return estimate


def estimate_memory_below(
    inputs: MemoryInputs,
    ceiling: float | None,
    facts: Mapping[str, Any] | None = None,
    *,
    parts: Parts | None = None,
) -> MemoryEstimate | None:
    """:func:`estimate_memory`, or None when the estimate would come to ``ceiling`` bytes or more on the
    device and that shows half-way: the forward pass of a training step, at the loss, holds the model
    states that no moment frees (every state but the gradients and what is paged out) and every saved
    activation (:meth:`~rigcheck.core.estimate.memory.training.Training.floor`), so the peak is at
    least those, and the device total at least that with what the runtime adds to any peak
    (:func:`~rigcheck.core.estimate.memory.runtime.training_device_floor`); when that reaches
    ``ceiling``, so does the device total. The states and saved activations are tried first, before the
    forward's other terms are made (:func:`~rigcheck.core.estimate.memory.training.floor_before_extras`).
    ``ceiling`` None: always made.

    ``parts``: the three functions that make a training step's states, saved activations and other
    forward terms (default: :mod:`.training`'s own); a caller that estimates many neighbouring inputs
    (MEM001's search for fixes) passes the same functions kept by what they read. Pure: no estimate is
    kept here."""
    if facts is None:
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("memory")
    return _estimate(inputs, facts, ceiling, parts)


def _estimate(
    inputs: MemoryInputs, facts: Mapping[str, Any], ceiling: float | None, parts: Parts | None
) -> MemoryEstimate | None:
    if inputs.pp > 1 and inputs.stage is None:
        return _worst_stage(inputs, facts, ceiling, parts)
    return _one_stage(inputs, facts, ceiling, parts)


def _worst_stage(
    inputs: MemoryInputs, facts: Mapping[str, Any], ceiling: float | None, parts: Parts | None
) -> MemoryEstimate | None:
    """Pipeline parallelism: stages estimated on their own (their blocks, the first's embedding and
    most micro-batches in flight, the last's head, logits and loss), the GPU that needs the most
    reported and named. The middle stages differ only in blocks and micro-batches in flight, both
    largest on stage 1 (the remainder of the blocks goes to the first stages; 1F1B keeps p - r
    micro-batches on stage r), so stages 0, 1 and the last are the candidates. None when one reaches
    ``ceiling`` (then the worst does)."""
    import dataclasses

    candidates = sorted({0, 1, inputs.pp - 1})
    stages = {}
    for stage in candidates:
        estimate = _one_stage(inputs.changed(stage=stage), facts, ceiling, parts)
        if estimate is None:
            return None
        stages[stage] = estimate
    worst = max(candidates, key=lambda stage: stages[stage].device)
    where = "the first" if worst == 0 else "the last" if worst == inputs.pp - 1 else "the fullest middle one"
    listed = ", ".join(f"stage {stage} {stages[stage].device_gib:.1f} GiB" for stage in candidates)
    if inputs.pp > 3:
        listed += f" (stages 2-{inputs.pp - 2} need no more than stage 1)"
    note = f"pipeline stage {worst} of {inputs.pp} ({where}) needs the most: {listed}"
    chosen = stages[worst]
    return dataclasses.replace(chosen, inputs=inputs, notes=(*chosen.notes, note))


def _one_stage(
    inputs: MemoryInputs, facts: Mapping[str, Any], ceiling: float | None, parts: Parts | None
) -> MemoryEstimate | None:
    from rigcheck.core.estimate.memory.runtime import finish, training_device_floor

    if inputs.training:
        from rigcheck.core.estimate.memory import training as step

        make_states, make_saved, make_extras = parts or (step.states_of, step.saved_of, step.extras_apart_of)
        states, saved = make_states(inputs, facts), make_saved(inputs, facts)
        accumulating = step.accumulating(inputs, states.states)
        if ceiling is not None:  # the states and saved activations alone reach it: no need of the rest
            floor = step.floor_before_extras(states.states, saved, accumulating)
            if training_device_floor(floor, inputs, facts) >= ceiling:
                return None
        extras = make_extras(inputs, facts)._replace(accumulating=accumulating)
        if ceiling is not None:
            floor = step.floor_of(states.states, saved, extras)
            if training_device_floor(floor, inputs, facts) >= ceiling:
                return None
        training = step.Training(inputs, facts)
        training.adopt(states)
        components, peak, phase, phases, notes, host = training.estimate(saved=saved, extras=extras)
        return finish(components, peak, phase, inputs, facts, notes, phases=phases, host=host)
    from rigcheck.core.estimate.memory.inference import Inference

    inference = Inference(inputs, facts)
    components, peak = inference.estimate()
    return finish(components, peak, "inference", inputs, facts, inference.notes)
