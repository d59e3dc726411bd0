"""QLoRA on fake tensors: bitsandbytes' own 4-bit linear layers, with packed weights that hold no data.

``bitsandbytes.nn.Params4bit`` cannot wrap a fake tensor, and quantising real weights would need the
real weights. So each linear layer of the transformer blocks becomes a ``bitsandbytes.nn.Linear4bit``
(built on the meta device, so PEFT's LoRA wraps it exactly as it wraps a loaded 4-bit model) whose
weight is a fake ``uint8`` tensor of the packed size, with a ``QuantState`` of fake absmax tensors:
NF4 or FP4 in blocks of 64, the absmax in fp32, or, with double quantisation, in 8 bits with an fp32
absmax per 256 blocks (Dettmers et al., QLoRA, arXiv:2305.14314 section 3). Forward and backward are
bitsandbytes' ``MatMul4Bit``, saving what it saves.

One thing the fake kernels cannot show is inside bitsandbytes' CUDA ``gemm_4bit``: above 1,536 rows
(every training batch) it dequantises the weight to 16 bits and calls ``F.linear``
(``bitsandbytes/backends/cuda/ops.py``). :func:`cuda_gemm_4bit` makes the trace take that same path,
so the dequantised weight is counted; at 1,536 rows or fewer (decode) the fused kernel needs none.
"""

from __future__ import annotations

from typing import Any

#: bitsandbytes/backends/cuda/ops.py: _gemm_4bit_custom_max_m (dequantise + F.linear above this).
CUDA_FUSED_MAX_ROWS = 1536
BLOCKSIZE = 64
NESTED_BLOCKSIZE = 256


def _fake_quant_state(
    out_features: int, in_features: int, *, quant: str, double_quant: bool, dtype: Any
) -> Any:
    import torch
    from bitsandbytes.functional import QuantState

    blocks = -(-out_features * in_features // BLOCKSIZE)
    code = torch.empty(16, dtype=torch.float32)
    if not double_quant:
        return QuantState(
            absmax=torch.empty(blocks, dtype=torch.float32),
            shape=torch.Size([out_features, in_features]),
            code=code,
            blocksize=BLOCKSIZE,
            quant_type=quant,
            dtype=dtype,
        )
    nested = QuantState(
        absmax=torch.empty(-(-blocks // NESTED_BLOCKSIZE), dtype=torch.float32),
        code=torch.empty(256, dtype=torch.float32),
        blocksize=NESTED_BLOCKSIZE,
        dtype=torch.float32,
    )
    return QuantState(
        absmax=torch.empty(blocks, dtype=torch.uint8),
        shape=torch.Size([out_features, in_features]),
        code=code,
        blocksize=BLOCKSIZE,
        quant_type=quant,
        dtype=dtype,
        offset=torch.zeros((), dtype=torch.float32),
        state2=nested,
    )


def quantize_block_linears(model: Any, *, quant: str, double_quant: bool, compute_dtype: Any) -> int:
    """Replace every ``nn.Linear`` inside the transformer blocks with a 4-bit layer, as transformers'
    bitsandbytes integration does (embeddings, the LM head and norms keep their dtype). Returns how
    many layers were replaced."""
    import bitsandbytes as bnb
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    from rigcheck.trace.models import transformer_blocks

    blocks = transformer_blocks(model)
    replaced = 0
    for block in blocks:
        for _parent_name, parent in list(block.named_modules()):
            for child_name, child in list(parent.named_children()):
                if type(child) is not torch.nn.Linear:
                    continue
                out_features, in_features = child.out_features, child.in_features
                with unset_fake_temporarily():
                    layer = bnb.nn.Linear4bit(
                        in_features,
                        out_features,
                        bias=child.bias is not None,
                        compute_dtype=compute_dtype,
                        compress_statistics=double_quant,
                        quant_type=quant,
                        device="meta",
                    )
                packed = torch.empty(-(-out_features * in_features // 2), 1, dtype=torch.uint8)
                # A plain Parameter (Params4bit cannot wrap a fake tensor) given the Params4bit attributes
                # that bitsandbytes and PEFT read; torch's Parameter declares none of them.
                weight: Any = torch.nn.Parameter(packed, requires_grad=False)
                weight.quant_state = _fake_quant_state(
                    out_features, in_features, quant=quant, double_quant=double_quant, dtype=compute_dtype
                )
                weight.bnb_quantized = True
                weight.quant_type = quant
                weight.blocksize = BLOCKSIZE
                weight.compress_statistics = double_quant
                layer.weight = weight
                layer.quant_state = weight.quant_state
                if child.bias is not None:
                    layer.bias = torch.nn.Parameter(
                        torch.empty(out_features, dtype=compute_dtype), requires_grad=False
                    )
                layer.support_avx512bf16_for_cpu = False  # a CPU-only inference path; the GPU has none
                setattr(parent, child_name, layer)
                replaced += 1
    return replaced


def cuda_gemm_4bit() -> Any:
    """A dispatch mode that runs ``bitsandbytes::gemm_4bit`` the way its CUDA kernel does: above
    :data:`CUDA_FUSED_MAX_ROWS` rows, dequantise then ``F.linear`` (visible allocations)."""
    import torch
    from bitsandbytes.backends.default.ops import _gemm_4bit_default_impl
    from torch.utils._python_dispatch import TorchDispatchMode

    gemm = torch.ops.bitsandbytes.gemm_4bit.default

    class CudaGemm4bit(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func is gemm:
                rows = args[0].numel() // args[0].shape[-1]
                if rows > CUDA_FUSED_MAX_ROWS:
                    return _gemm_4bit_default_impl(*args, **kwargs)
            return func(*args, **kwargs)

    return CudaGemm4bit()
