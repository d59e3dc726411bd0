"""The dtypes a training step's tensors take, which decide how many bytes each saved tensor holds.

Three numbers and a flag describe it:

- ``residual``: the residual stream between blocks. fp32 when ``torch.autocast`` runs over an fp32
  model (autocast casts matmul inputs, not additions, so the stream stays fp32), else the model's dtype.
- ``compute``: what linear layers and attention produce: 2 bytes under autocast and 16-bit models.
- ``autocast``: autocast casts a linear's input for each call, so a normed activation read by the
  q, k and v projections is copied three times, each copy saved for backward (``cached_cast`` in
  PyTorch's autocast_mode.cpp caches only leaf tensors: the weights, once per forward).
- ``adapter``: LoRA adapters' dtype; PEFT casts an adapter's input to it (``_cast_input_dtype``).

Sources: PyTorch ``torch.autocast`` (CUDA op lists in aten/src/ATen/autocast_mode.h); PEFT
``LoraLayer`` (``autocast_adapter_dtype=True`` keeps adapters fp32 under a 16-bit base).
"""

from __future__ import annotations

from typing import NamedTuple

from rigcheck.core.estimate.memory.inputs import MIXED, TRUE_16, MemoryInputs


class Flow(NamedTuple):
    """The bytes per element of the tensors a step keeps and computes in, by precision."""

    residual: int
    compute: int
    autocast: bool
    weights: int  # bytes per element of the weights a forward reads (trainable or frozen)
    adapter: int = 4

    @property
    def widest(self) -> int:
        return max(self.residual, self.compute)


def flow_of(inputs: MemoryInputs) -> Flow:
    """The dtypes of ``inputs``' training step (see the module docstring)."""
    precision = inputs.precision
    if precision == "64-true":
        return Flow(8, 8, False, 8, 8)
    if precision == "32-true":
        return Flow(4, 4, False, 4, 4)
    if precision in TRUE_16:
        return Flow(2, 2, False, 2, 2)
    assert precision in MIXED
    if inputs.sharded:
        # DeepSpeed and FSDP mixed precision compute with 16-bit copies of the (fp32 master) weights,
        # adapters included: the forward never sees fp32 (FSDP2 MixedPrecisionPolicy(param_dtype=bf16),
        # DeepSpeed bf16/fp16).
        return Flow(2, 2, False, 2, 2)
    if inputs.frozen_base:
        base = {"fp32": 4, "bf16": 2, "fp16": 2}.get(inputs.lora_base_dtype or "bf16", 2)
        # PEFT's prepare_model_for_kbit_training upcasts the embeddings and norms of a 4-bit model to
        # fp32, so the residual stream is fp32 as well
        residual = 4 if inputs.kbit_upcast else base
        return Flow(residual, 2, True, base, 4)
    return Flow(4, 2, True, 4, 4)
