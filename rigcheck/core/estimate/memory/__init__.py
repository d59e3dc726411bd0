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

from collections.abc import Mapping
from typing import Any

from rigcheck.core.estimate.memory.inputs import MIXED, TRUE_16, MemoryInputs
from rigcheck.core.estimate.memory.result import CATEGORIES, GIB, Component, MemoryEstimate, fmt_bytes
from rigcheck.core.estimate.memory.shards import Shards, shard_count

__all__ = [
    "CATEGORIES",
    "GIB",
    "MIXED",
    "TRUE_16",
    "Component",
    "MemoryEstimate",
    "MemoryInputs",
    "Shards",
    "estimate_memory",
    "estimate_memory_below",
    "fmt_bytes",
    "shard_count",
]


#: Estimates already made: (inputs, the type of each input, id of the facts) -> (facts, estimate). The
#: estimate is a pure function of its inputs and facts, and rigcheck lint meets the same configuration
#: many times (each pair, and MEM001's candidate fixes); bounded, so memory stays flat.
_MADE: dict[tuple[Any, ...], tuple[Mapping[str, Any], MemoryEstimate]] = {}
_MADE_MAX = 4096


def estimate_memory(inputs: MemoryInputs, facts: Mapping[str, Any] | None = None) -> MemoryEstimate:
    """Estimate one GPU's memory for a training or inference workload."""
    estimate = estimate_memory_below(inputs, None, facts)
    assert estimate is not None  # no ceiling: always made
    return estimate


def estimate_memory_below(
    inputs: MemoryInputs, ceiling: float | None, facts: Mapping[str, Any] | None = None
) -> MemoryEstimate | None:
    """:func:`estimate_memory`, or None when the estimate would come to ``ceiling`` bytes or more on the
    device and that shows half-way: the forward pass of a training step, at the loss, holds the model
    states that no moment frees (every state but the gradients and what is paged out) and every saved
    activation (:meth:`~rigcheck.core.estimate.memory.training.Training.floor`), so the peak is at
    least those, and the device total at least that with what the runtime adds to any peak
    (:func:`~rigcheck.core.estimate.memory.runtime.training_device_floor`); when that reaches
    ``ceiling``, so does the device total. The states and saved activations are tried first, before the
    forward's other terms are made (:func:`~rigcheck.core.estimate.memory.training.floor_before_extras`:
    three in four of MEM001's half-way stops in a lint). A search that wants only what
    fits below ``ceiling`` (MEM001's fixes: a training estimate fits only below the usable memory) is
    spared the second half of each estimate that cannot. An estimate made already is returned whatever
    its size; ``ceiling`` None: always made."""
    from rigcheck.core.catalog import facts as rule_facts

    if facts is None:
        facts = rule_facts.load_rule_facts("memory")
    if rule_facts._READS is not None:  # recording which facts are read: every read must happen
        return _estimate(inputs, facts, None, kept=False)
    try:
        # the types too: 1 == 1.0 == True, but a formula may print them differently
        key = (inputs, tuple(map(type, vars(inputs).values())), id(facts))
        made = _MADE.get(key)
    except TypeError:  # an input that cannot be hashed (a list where a tuple belongs): not kept
        return _estimate(inputs, facts, ceiling)
    if made is not None and made[0] is facts:
        return made[1]
    estimate = _estimate(inputs, facts, ceiling)
    if estimate is None:
        return None
    if len(_MADE) >= _MADE_MAX:
        _MADE.clear()
    _MADE[key] = (facts, estimate)
    return estimate


def _estimate(
    inputs: MemoryInputs, facts: Mapping[str, Any], ceiling: float | None, *, kept: bool = True
) -> MemoryEstimate | None:
    from rigcheck.core.estimate.memory.runtime import finish, training_device_floor

    if inputs.training:
        from rigcheck.core.estimate.memory import training as step

        # the parts of the forward moment, kept by what they read (:mod:`.reads`), or made afresh
        parts = (_states, _saved, _extras) if kept else (step.states_of, step.saved_of, step.extras_apart_of)
        make_states, make_saved, make_extras = parts
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


def _kept(name: str) -> Any:
    """The training part ``name`` of :mod:`.training`, kept by what it reads (made when first asked, so
    that importing the estimator imports no training code)."""
    memo = None

    def part(inputs: MemoryInputs, facts: Mapping[str, Any]) -> Any:
        nonlocal memo
        if memo is None:
            from rigcheck.core.estimate.memory import training
            from rigcheck.core.estimate.memory.reads import ReadMemo

            memo = ReadMemo(getattr(training, name))
        return memo(inputs, facts)

    return part


_states, _saved, _extras = _kept("states_of"), _kept("saved_of"), _kept("extras_apart_of")
