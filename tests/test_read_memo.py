"""The estimator's parts kept by the inputs they read (rigcheck.core.estimate.memory.reads, issue 20):
a kept result is returned only where every value its making read is the same, and the estimates made
from kept parts are the estimates made without them, to the last bit and character."""

from __future__ import annotations

from typing import Any

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset
from rigcheck.core.estimate.memory import MemoryInputs, estimate_memory, estimate_memory_below
from rigcheck.core.estimate.memory.reads import ReadMemo

FACTS = load_rule_facts("memory")


def _inputs(**changes: Any) -> MemoryInputs:
    return MemoryInputs(architecture_from_mapping(find_preset("llama-2-7b"), name="llama-2-7b"), **changes)


def test_a_kept_result_answers_inputs_that_read_the_same_and_only_those() -> None:
    made: list[tuple[str, int]] = []

    def part(inputs: Any, facts: Any) -> str:  # reads the micro-batch only for LoRA
        made.append((inputs.task, inputs.micro_batch if inputs.task == "lora" else 0))
        return f"{inputs.task} {inputs.micro_batch if inputs.task == 'lora' else '-'}"

    memo: ReadMemo[str] = ReadMemo(part)
    assert memo(_inputs(task="full_finetune", micro_batch=1), FACTS) == "full_finetune -"
    # the micro-batch is not read on this branch: kept
    assert memo(_inputs(task="full_finetune", micro_batch=8, seq_len=512), FACTS) == "full_finetune -"
    assert len(made) == 1
    # another branch reads it: made, and kept by it
    assert memo(_inputs(task="lora", micro_batch=2), FACTS) == "lora 2"
    assert memo(_inputs(task="lora", micro_batch=4), FACTS) == "lora 4"
    assert memo(_inputs(task="lora", micro_batch=2, optimizer="sgd"), FACTS) == "lora 2"
    assert made == [("full_finetune", 0), ("lora", 2), ("lora", 4)]
    assert len(memo) == 3
    # equal but of another type (2.0 == 2): made again, as its formula may print it differently
    assert memo(_inputs(task="lora", micro_batch=2.0), FACTS) == "lora 2.0"  # type: ignore[arg-type]
    # other facts: nothing kept for them
    memo(_inputs(task="lora", micro_batch=2), dict(FACTS))
    assert len(made) == 5


def test_kept_results_stay_bounded() -> None:
    memo: ReadMemo[int] = ReadMemo(lambda inputs, facts: inputs.micro_batch * 2, most=4)
    assert [memo(_inputs(micro_batch=k), FACTS) for k in range(1, 11)] == [2 * k for k in range(1, 11)]
    assert len(memo) <= 4


GRID = [
    dict(task=task, micro_batch=micro, seq_len=seq, activation_checkpointing=ckpt, loss=loss, **extra)
    for task, extra in (
        ("full_finetune", {}),
        ("full_finetune", {"dp": 4, "fsdp": "full_shard"}),
        ("full_finetune", {"dp": 4, "zero": 2, "offload": "cpu"}),
        ("full_finetune", {"optimizer": "adamw-8bit", "grad_accum": 4}),
        ("pretrain", {"grad_accum": 4, "precision": "bf16-true", "tp": 2}),
        ("lora", {"lora_rank": 16, "lora_targets": ("all-linear",)}),
        ("qlora", {"lora_rank": 16, "lora_targets": ("all-linear",), "dp": 2, "fsdp": "full_shard"}),
    )
    for micro, seq in ((1, 512), (4, 2048), (8, 4096))
    for ckpt in ("none", "full")
    for loss in ("standard", "chunked")
]


def test_estimates_from_kept_parts_are_the_estimates_made_whole() -> None:
    """Every grid point estimated twice through parts kept by what they read (the second time from them
    alone) and once with the estimator's own parts: the same components, totals, phases, notes and
    host bytes; and with a ceiling, None only where the whole estimate reaches it."""
    from rigcheck.core.estimate.memory import training

    parts = (ReadMemo(training.states_of), ReadMemo(training.saved_of), ReadMemo(training.extras_apart_of))
    for settings in GRID:
        inputs = _inputs(**settings)
        whole = estimate_memory(inputs, FACTS)
        for _ in range(2):
            kept = estimate_memory_below(inputs, None, FACTS, parts=parts)
            assert kept == whole and repr(kept) == repr(whole)
        for ceiling in (whole.device * 0.5, whole.device * 0.999, whole.device * 2):
            cut = estimate_memory_below(inputs, ceiling, FACTS, parts=parts)
            assert cut == whole if cut is not None else whole.device >= ceiling
