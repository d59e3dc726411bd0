"""Issue 46: DeepSpeed ZeRO-3's GPU buffers beside the partitioned states, sized from the config's values
(specs/rules/memory.yaml deepspeed_zero3, from deepspeedai/DeepSpeed 0.19.6 and transformers' DeepSpeed
integration).

Hand-worked for Llama-2-70B (hidden 8,192, vocabulary 32,000; the largest module is the embedding,
32,000 x 8,192 = 262,144,000 parameters) in bf16:
- the gradient bucket, kept from start-up: DeepSpeed's default 5e8 elements x 2 B = 1,000,000,000 B; the
  Trainer's "auto" 8,192^2 = 67,108,864 elements x 2 B = 134,217,728 B;
- the gathered parameters: the module computing and its gradients (4 B x 262,144,000 = 1,048,576,000 B) and
  the prefetch bucket, 5e7 x 2 B = 100,000,000 B by default, int(0.9 x 8,192^2) = 60,397,977 elements
  (120,795,955 B; rigcheck keeps the fraction: 120,795,955.2) under "auto", none when
  stage3_max_live_parameters is 0 (axolotl's shipped config)."""

from __future__ import annotations

import pytest

from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset
from rigcheck.core.estimate.memory import MemoryInputs, estimate_memory

ARCH = architecture_from_mapping(find_preset("llama-2-70b"), name="llama-2-70b")
LARGEST = 32_000 * 8_192
FULL = MemoryInputs(ARCH, task="full_finetune", precision="bf16-mixed", dp=8, zero=3, seq_len=2048)


def test_the_largest_module_is_the_embedding() -> None:
    assert ARCH.largest_module_params == LARGEST == 262_144_000


def test_deepspeeds_defaults() -> None:
    estimate = estimate_memory(FULL)
    assert estimate.component("reduce_bucket").bytes == 1_000_000_000
    assert estimate.component("gathered_params").bytes == 4 * LARGEST + 2 * 50_000_000


def test_the_trainers_auto_values() -> None:
    estimate = estimate_memory(FULL.changed(deepspeed_reduce_bucket="auto", deepspeed_prefetch_bucket="auto"))
    assert estimate.component("reduce_bucket").bytes == 8_192**2 * 2 == 134_217_728
    assert estimate.component("gathered_params").bytes == pytest.approx(4 * LARGEST + 2 * 0.9 * 8_192**2)


def test_stated_sizes_and_no_prefetch_when_nothing_may_stay_live() -> None:
    estimate = estimate_memory(FULL.changed(deepspeed_reduce_bucket=2e8, deepspeed_max_live=0))
    assert estimate.component("reduce_bucket").bytes == 4e8
    assert estimate.component("gathered_params").bytes == 4 * LARGEST


def test_the_bucket_is_held_through_the_step() -> None:
    """Allocated once and kept: it adds its bytes to the peak, whatever phase the peak is in."""
    small, large = (
        estimate_memory(FULL.changed(deepspeed_reduce_bucket=value, deepspeed_max_live=0))
        for value in (1e8, 5e8)
    )
    assert large.allocated - small.allocated == pytest.approx(2 * (5e8 - 1e8))


def test_only_zero_3_keeps_them() -> None:
    assert estimate_memory(FULL.changed(zero=2)).component("reduce_bucket") is None


def test_a_workload_names_them_as_deepspeeds_config_does() -> None:
    """``parallelism.deepspeed`` takes the config's keys; the framework's shipped config fills what is not
    stated, and the estimate's notes say so."""
    from rigcheck.core.estimate.estimate import memory_inputs
    from rigcheck.core.spec.documents import parse_spec

    text = (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: z3\nmodel: {preset: llama-2-70b}\ntask: full_finetune\n"
        "framework: llama-factory\nparallelism: {dp: 8, zero: 3, deepspeed: {reduce_bucket_size: 3e8}}\n"
    )
    workload = parse_spec(text, "z3.yaml").model
    inputs = memory_inputs(workload, ARCH)
    assert (inputs.deepspeed_reduce_bucket, inputs.deepspeed_prefetch_bucket) == (3e8, "auto")
    assert any("deepspeed_buckets auto: the llama-factory default" in note for note in inputs.implied)
