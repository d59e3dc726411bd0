"""Issue 46: pipeline parallelism is estimated stage by stage, and the stage that needs the most is
reported by name. The parts were once summed on one GPU: the first stage's micro-batches in flight
(1F1B keeps p - r of them on stage r), the first stage's embedding and the last stage's head, logits and
loss. Hand-worked on Llama-3-8B (32 layers, hidden 4,096, vocabulary 128,256, head not tied)."""

from __future__ import annotations

import pytest

from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset
from rigcheck.core.estimate.memory import GIB, MemoryInputs, estimate_memory
from rigcheck.core.estimate.memory.shards import Shards, stage_layers

ARCH = architecture_from_mapping(find_preset("llama-3-8b"), name="llama-3-8b")
# bf16-true: the block input that full checkpointing keeps is 2 bytes per element
BASE = MemoryInputs(
    ARCH,
    task="full_finetune",
    precision="bf16-true",
    micro_batch=1,
    seq_len=2048,
    grad_accum=8,
    pp=4,
    activation_checkpointing="full",
)


def test_layers_split_evenly_the_remainder_on_the_first_stages() -> None:
    assert [stage_layers(32, 4, stage) for stage in range(4)] == [8, 8, 8, 8]
    assert [stage_layers(30, 4, stage) for stage in range(4)] == [8, 8, 7, 7]
    assert stage_layers(30, 4, None) == 8  # the most any stage holds
    assert sum(stage_layers(61, 8, stage) for stage in range(8)) == 61


@pytest.mark.parametrize(
    ("grad_accum", "in_flight"), [(8, [4, 3, 2, 1]), (2, [2, 2, 2, 1]), (1, [1, 1, 1, 1])]
)
def test_one_f_one_b_keeps_p_minus_r_micro_batches_on_stage_r(grad_accum: int, in_flight: list[int]) -> None:
    stages = [BASE.changed(grad_accum=grad_accum, stage=stage) for stage in range(4)]
    assert [inputs.micro_batches_in_flight for inputs in stages] == in_flight
    # no stage given: the first's, the most
    assert BASE.changed(grad_accum=grad_accum).micro_batches_in_flight == in_flight[0]


def test_the_embedding_lives_on_the_first_stage_and_the_head_on_the_last() -> None:
    embedding = head = 128_256 * 4_096  # untied: the head is a second vocabulary x hidden matrix
    outer = [Shards(BASE.changed(stage=stage)).outer for stage in range(4)]
    assert outer == [embedding, 0.0, 0.0, head + 4_096]  # the final norm beside the head
    blocks = Shards(BASE.changed(stage=1)).blocks
    # no stage given: the worst of each part
    assert Shards(BASE).params == pytest.approx(blocks + max(embedding, head) + 4_096)


def test_each_stage_keeps_its_own_activations_and_only_the_last_its_logits() -> None:
    estimates = [estimate_memory(BASE.changed(stage=stage)) for stage in range(4)]
    # full checkpointing keeps each block's input: 8 layers x in-flight micro-batches x 2,048 x 4,096 x 2 B
    per_micro_batch = 8 * 2048 * 4096 * 2 / GIB  # 0.125 GiB
    assert estimates[1].gib("activations") == pytest.approx(3 * per_micro_batch)
    assert estimates[2].gib("activations") == pytest.approx(2 * per_micro_batch)
    assert estimates[0].gib("activations") > 4 * per_micro_batch  # and the token ids
    assert [item.gib("logits") > 0 for item in estimates] == [False, False, False, True]
    # at the loss: the bf16 logits, their fp32 copy and the fp32 log-softmax, 2 + 4 + 4 B per element
    assert estimates[3].gib("logits") == pytest.approx(2048 * 128_256 * 10 / GIB)


def test_the_pipeline_estimate_is_its_worst_stage_named() -> None:
    stages = [estimate_memory(BASE.changed(stage=stage)) for stage in range(4)]
    whole = estimate_memory(BASE)
    assert whole.device == max(item.device for item in stages)
    assert whole.inputs == BASE  # changes to the workload (MEM001's fixes) apply to every stage
    (note,) = [text for text in whole.notes if text.startswith("pipeline stage")]
    worst = max(range(4), key=lambda stage: stages[stage].device)
    assert note.startswith(f"pipeline stage {worst} of 4")
    # the middle stages hold neither the embedding nor the head: less than the outer ones
    assert stages[1].device < stages[0].device and stages[2].device < stages[3].device


@pytest.mark.parametrize("pp", [2, 3, 5, 8])
@pytest.mark.parametrize("checkpointing", ["none", "full"])
def test_the_worst_stage_is_among_the_first_the_second_and_the_last(pp: int, checkpointing: str) -> None:
    """The middle stages differ only in blocks and micro-batches in flight, both largest on stage 1:
    estimating stages 0, 1 and the last finds the worst of all (a million-stage pipeline is three
    estimates)."""
    inputs = BASE.changed(pp=pp, activation_checkpointing=checkpointing, grad_accum=6)
    stages = [estimate_memory(inputs.changed(stage=stage)) for stage in range(pp)]
    worst = max(stages, key=lambda item: item.device)
    chosen = estimate_memory(inputs)  # from stages 0, 1 and the last only
    assert (chosen.components, chosen.device, chosen.peak_phase) == (
        worst.components,
        worst.device,
        worst.peak_phase,
    )


def test_no_stage_holds_what_summing_the_worst_of_each_part_gave() -> None:
    """Without checkpointing the first stage's four micro-batches of activations and the last stage's
    logits were put on one GPU; now each stage has its own, and the pipeline needs less than that sum."""
    inputs = BASE.changed(activation_checkpointing="none", seq_len=4096)
    stages = [estimate_memory(inputs.changed(stage=stage)) for stage in range(4)]
    first, last = stages[0], stages[-1]
    assert first.gib("logits") == 0 and last.gib("logits") > 0
    assert first.gib("activations") > 3 * last.gib("activations") > 0
    assert estimate_memory(inputs).device == max(item.device for item in stages)
