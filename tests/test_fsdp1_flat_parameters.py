"""Issue 46: FSDP1's flat parameters under LoRA. Each transformer block is one flat parameter holding the
frozen weights and the adapters; since the adapters need gradients, so does the whole flat parameter,
and inside ``no_sync()`` (gradient accumulation in Lightning Fabric and accelerate) every rank keeps
the unsharded gradients of every block until the sync. litgpt's table (commit 8641822): Llama-2-13B
LoRA, bf16-true, FSDP over four A100 40GB, 35.57 GB of max_memory_allocated per GPU; two GPUs ran out
of memory. FSDP2 (``fully_shard``, per-parameter) and FSDP1 without LoRA are unchanged.

Hand-worked for Llama-2-13B (40 blocks of 5,120 hidden, 13,824 MLP width, 40 heads): a block holds
4 x 5120^2 attention + 3 x 5120 x 13824 MLP + 2 x 5120 norm weights = 317,204,480 parameters, so 40
blocks hold 12,688,179,200, and their bf16 gradients 25,376,358,400 bytes (23.63 GiB) on every rank."""

from __future__ import annotations

import pytest

from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset
from rigcheck.core.estimate.memory import GIB, MemoryInputs, estimate_memory

ARCH = architecture_from_mapping(find_preset("llama-2-13b"), name="llama-2-13b")
BLOCKS = 40 * (4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120)
LORA = MemoryInputs(
    ARCH,
    task="lora",
    precision="bf16-true",
    micro_batch=1,
    seq_len=1304,
    grad_accum=32,
    dp=4,
    fsdp="full_shard",
    fsdp_version=1,
    activation_checkpointing="full",
    lora_rank=8,
    lora_targets=("q_proj", "v_proj"),
    loss="chunked",
    framework="litgpt",
)


def test_the_block_parameter_count_is_the_hand_worked_one() -> None:
    assert BLOCKS == 12_688_179_200


def test_accumulating_in_no_sync_keeps_every_blocks_unsharded_gradients() -> None:
    estimate = estimate_memory(LORA)
    assert estimate.component("flat_parameter_gradients").bytes == BLOCKS * 2  # 23.63 GiB on each of 4 ranks
    # the rest of the allocated peak: 1/4 of the weights and the transients; the table's 35.57 GB is 33.13 GiB
    assert estimate.allocated / GIB == pytest.approx(35.57e9 / GIB, rel=0.03)


def test_without_accumulation_the_gradients_are_sharded() -> None:
    estimate = estimate_memory(LORA.changed(grad_accum=1))
    assert estimate.component("flat_parameter_gradients").bytes == BLOCKS * 2 / 4


def test_fewer_ranks_do_not_shrink_the_unsharded_gradients() -> None:
    """Two A100s: the sharded weights double and the gradients stay: litgpt's run out of memory."""
    four, two = estimate_memory(LORA), estimate_memory(LORA.changed(dp=2, grad_accum=64))
    assert two.component("flat_parameter_gradients").bytes == four.component("flat_parameter_gradients").bytes
    assert two.gib("weights") == pytest.approx(2 * four.gib("weights"))
    assert two.device / GIB > 40  # more than an A100 40GB has


@pytest.mark.parametrize(
    "changes",
    [
        {"fsdp_version": 2},
        {"task": "qlora"},
        {"task": "full_finetune", "lora_rank": 0, "lora_targets": ()},
        {"fsdp": None, "dp": 1},
        {"zero": 3, "fsdp": None},
    ],
)
def test_only_fsdp1_lora_has_them(changes: dict[str, object]) -> None:
    assert estimate_memory(LORA.changed(**changes)).component("flat_parameter_gradients") is None


WORKLOAD = """apiVersion: rigcheck/v1
kind: Workload
name: fsdp1-lora
model: {{preset: llama-2-13b}}
task: lora
precision: bf16-true
framework: {framework}
batch: {{micro: 1, grad_accum: 32, seq_len: 1304}}
lora: {{rank: 8, targets: [q_proj, v_proj]}}
parallelism: {{dp: 4, fsdp: full_shard, fsdp_version: 1}}
"""


@pytest.mark.parametrize(
    ("framework", "shared"), [("litgpt", True), ("transformers", False), ("axolotl", False)]
)
def test_the_transformers_trainer_gives_the_adapters_units_of_their_own(
    run_cli, tmp_path, framework: str, shared: bool
) -> None:  # type: ignore[no-untyped-def]
    """The transformers Trainer wraps a PEFT model under FSDP with peft's fsdp_auto_wrap_policy: the
    adapters get units of their own and the frozen blocks no gradients (frameworks.yaml
    fsdp_lora_units); litgpt's Block-level wrap shares them."""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(framework=framework), encoding="utf-8")
    result = run_cli("estimate", str(path), "-f", "json")
    components = result.json()["memory"]["per_gpu"]["components"]
    assert ("flat_parameter_gradients" in components) is shared
