"""Issue 46: what bitsandbytes' frozen quantised linears keep for the backward changed between releases
(specs/rules/memory.yaml bitsandbytes, from bitsandbytes/autograd/_functions.py as released):
MatMul4Bit kept its 16-bit input until 0.43.1 (``ctx.tensors = (A, B)``; 0.43.2: ``(None, B)``);
MatMul8bitLt keeps it in every release, and until 0.44.x also CAt, an int8 transposed copy per layer.

Hand-worked for Llama-2-7B (32 layers, hidden 4,096, MLP 11,008), bf16-true, adapters on q_proj and
v_proj, no checkpointing, 2 x 512 tokens: the adapters keep the attention input already, and SDPA the
attention output (o_proj's input). What a layer that keeps its input adds per token: the MLP's input
(the norm output, 2 B x 4,096, shared by gate and up) and the down projection's (the product,
2 B x 11,008): 30,208 B, x 32 layers x 1,024 tokens = 989,855,744 B. CAt adds 1 B per element of every
quantised layer's input: q, k, v, gate, up 5 x 4,096, o 4,096, down 11,008 = 35,584 B per token and
layer, x 32 x 1,024 = 1,166,016,512 B."""

from __future__ import annotations

import pytest

from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset
from rigcheck.core.estimate.estimate import memory_inputs
from rigcheck.core.estimate.memory import estimate_memory
from rigcheck.core.spec.documents import parse_spec

ARCH = architecture_from_mapping(find_preset("llama-2-7b"), name="llama-2-7b")
KEPT = 32 * 1024 * (2 * 4096 + 2 * 11008)
TRANSPOSED = 32 * 1024 * (5 * 4096 + 4096 + 11008)


def _inputs(task: str, version: str | None, quantization: str | None = None):  # type: ignore[no-untyped-def]
    text = (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: q\nmodel: {preset: llama-2-7b}\n"
        f"task: {task}\nprecision: bf16-true\nbatch: {{micro: 2, seq_len: 512}}\n"
        "lora: {rank: 32, targets: [q_proj, v_proj]}\n"
        + (f"quantization: {quantization}\n" if quantization else "")
        + (f"versions: {{bitsandbytes: '{version}'}}\n" if version else "")
    )
    return memory_inputs(parse_spec(text, "q.yaml").model, ARCH)


def _saved(inputs) -> float:  # type: ignore[no-untyped-def]
    return estimate_memory(inputs).component("activations").bytes  # type: ignore[union-attr]


def test_the_hand_worked_numbers() -> None:
    assert KEPT == 989_855_744 and TRANSPOSED == 1_166_016_512


@pytest.mark.parametrize("old", ["0.41.0", "0.42.0", "0.43.1"])
def test_4bit_layers_before_0_43_2_keep_their_input(old: str) -> None:
    assert _saved(_inputs("qlora", old)) - _saved(_inputs("qlora", "0.43.2")) == KEPT


def test_an_unstated_version_is_the_newest_behaviour() -> None:
    assert _saved(_inputs("qlora", None)) == _saved(_inputs("qlora", "0.50.2"))


def test_8bit_layers_keep_their_input_in_every_release_and_an_int8_copy_before_0_45() -> None:
    plain = _saved(_inputs("lora", None))
    assert _saved(_inputs("lora", "0.45.0", "int8")) - plain == KEPT
    assert _saved(_inputs("lora", "0.44.1", "int8")) - plain == KEPT + TRANSPOSED


def test_torchtunes_nf4_is_not_bitsandbytes() -> None:
    """torchao's NF4Tensor (torchtune's QLoRA) keeps nothing of the kind, whatever bitsandbytes version is named."""
    text = (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: q\nmodel: {preset: llama-2-7b}\ntask: qlora\n"
        "framework: torchtune\nversions: {bitsandbytes: '0.42.0'}\n"
    )
    assert _inputs("qlora", "0.42.0").quantized_linears_keep_input
    assert not memory_inputs(parse_spec(text, "q.yaml").model, ARCH).quantized_linears_keep_input
