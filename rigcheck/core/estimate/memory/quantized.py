"""Bytes of quantised weights: a scheme's bits per weight (specs/rules/memory.yaml
``quantization_bits``) or the workload's own ``quantization: {bits: ...}``, over the block linears
(GPTQ, AWQ, int8, NF4: embeddings, head and norms stay 16-bit) or over every parameter (GGUF and
EXL2 publish the whole file's bits per weight)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rigcheck.core.estimate.memory.inputs import MemoryInputs
from rigcheck.core.estimate.memory.result import billions
from rigcheck.core.estimate.memory.shards import Shards

#: The 4-bit schemes bitsandbytes' layers run, by ``quantization`` name: bnb_4bit_quant_type and
#: bnb_4bit_use_double_quant (the constants quantised too).
FOUR_BIT = {"nf4": ("nf4", False), "nf4-dq": ("nf4", True), "fp4": ("fp4", False)}


def four_bit_scheme(quant: str, double_quant: bool) -> str:
    """The ``quantization_bits`` row of a QLoRA base, from :data:`FOUR_BIT`: ``nf4-dq`` for NF4 with double
    quantisation (there is no double-quantised FP4 row: FP4 keeps its own)."""
    return next((name for name, form in FOUR_BIT.items() if form == (quant, double_quant)), quant)


def bits_per_weight(inputs: MemoryInputs, facts: Mapping[str, Any]) -> float | None:
    """The bits of a quantised weight, or None when the weights are not quantised."""
    name = inputs.quantization
    if not name or name == "none":
        return None
    if name == "bits":
        return float(inputs.quantization_bits or 16)
    return float(facts["quantization_bits"][name])


def quantized_linear_params(inputs: MemoryInputs, shards: Shards, facts: Mapping[str, Any]) -> float:
    """This rank's block-linear parameters the scheme quantises: all of them, or for a partial scheme
    (specs/rules/memory.yaml ``partial_quantization``: Meta's FP8 checkpoints) the MLP linears of its
    blocks, less the model's first and last block where this rank holds them."""
    partial = facts.get("partial_quantization", {}).get(inputs.quantization)
    if not partial:
        return shards.linear
    arch = inputs.arch
    blocks = shards.layers_local
    if partial.get("skip_first_and_last_blocks"):
        blocks -= int(inputs.holds_embedding) + int(inputs.holds_head)
    experts = arch.experts / max(1, inputs.ep) + arch.shared_experts
    mlp = arch.mlp_params_per_expert * experts / inputs.tp
    return min(shards.linear, max(0, blocks) * mlp)


def quantized_weight_bytes(
    inputs: MemoryInputs, shards: Shards, facts: Mapping[str, Any], other_bytes: float
) -> tuple[float, str] | None:
    """This rank's weight bytes under the quantisation, and the formula; None when unquantised."""
    bits = bits_per_weight(inputs, facts)
    if bits is None:
        return None
    b = bits / 8
    label = f"{bits:g} bits" if inputs.quantization == "bits" else inputs.quantization
    if inputs.quantization_scope == "all":
        return shards.params * b, f"{billions(shards.params)} params x {b:.4f} B ({label}, the whole model)"
    linear = quantized_linear_params(inputs, shards, facts)
    rest = shards.params - linear
    what = "MLP params of the inner blocks" if linear != shards.linear else "linear params"
    return linear * b + rest * other_bytes, (
        f"{billions(linear)} {what} x {b:.4f} B ({label}) + {billions(rest)} other params x {other_bytes:g} B"
    )
