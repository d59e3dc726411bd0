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


def partial_scheme(inputs: MemoryInputs, facts: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The row of specs/rules/memory.yaml ``partial_quantization`` for the workload's scheme (one that
    quantises only the MLP linears, e.g. Meta's FP8 checkpoints), or None."""
    return facts.get("partial_quantization", {}).get(inputs.quantization)


def quantized_blocks(partial: Mapping[str, Any], blocks: int, *, first: bool, last: bool) -> int:
    """Of ``blocks`` blocks, those whose MLP a partial scheme quantises: all, less the model's first and
    last block (``first``/``last``: among them) where the scheme skips those."""
    if partial.get("skip_first_and_last_blocks"):
        blocks -= int(first) + int(last)
    return max(0, blocks)


def quantized_linear_params(inputs: MemoryInputs, shards: Shards, facts: Mapping[str, Any]) -> float:
    """This rank's block-linear parameters the scheme quantises: all of them, or for a partial scheme
    (:func:`partial_scheme`) the MLP linears of its blocks that the scheme quantises."""
    partial = partial_scheme(inputs, facts)
    if not partial:
        return shards.linear
    blocks = quantized_blocks(
        partial, shards.layers_local, first=inputs.holds_embedding, last=inputs.holds_head
    )
    return min(shards.linear, blocks * shards.mlp_per_layer)


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
    what = "MLP params of the quantised blocks" if partial_scheme(inputs, facts) else "linear params"
    return linear * b + rest * other_bytes, (
        f"{billions(linear)} {what} x {b:.4f} B ({label}) + {billions(rest)} other params x {other_bytes:g} B"
    )
