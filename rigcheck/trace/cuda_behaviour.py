"""What CUDA does differently from the CPU, applied to a CPU trace so that it measures a GPU run.

Two differences change the memory a step keeps.

**Autocast's op lists.** A trace runs on fake CPU tensors (fake CUDA tensors cannot run autograd in a
CPU build of torch), but the memory it measures must be the memory of a GPU run, and autocast does not cast the same ops
on both devices: CUDA runs ``pow``, ``layer_norm``, ``softmax``, ``exp``, ``rsqrt``, the losses and a
few more in float32 (their outputs, and what backward saves of them, are fp32), CPU autocast leaves
them in the input's dtype. GPT-2's ``gelu_new`` (``torch.pow(x, 3.0)``) is one place where that
changes the activation memory by a factor of two.

So, while a trace runs, the AutocastCPU kernels of CUDA's float32 ops are replaced with ones that
do what the AutocastCUDA kernels do. The lists are copied from PyTorch's
``aten/src/ATen/autocast_mode.h`` (``AT_FORALL_FP32`` and ``AT_FORALL_FP32_SET_OPT_DTYPE``); CUDA's
lower-precision list and CPU's agree on the ops a transformer uses (linear, matmul, bmm, addmm,
baddbmm, scaled_dot_product_attention).

**Dropout.** On a GPU, ``F.dropout`` in training is the fused ``native_dropout`` kernel, which keeps
a 1-byte mask; on the CPU it multiplies by a noise tensor of the input's dtype and keeps that (4
bytes per element under PEFT's fp32 adapters). :func:`cuda_attention_kernels` routes it to
``native_dropout`` (ATen's ``is_fused_kernel_acceptable``: CUDA input, 0 < p < 1).

**The attention kernel.** With dropout, ``scaled_dot_product_attention`` on the CPU falls back to
the math kernel, which keeps the s x s attention probabilities; on a GPU the flash kernel (16-bit)
or the memory-efficient kernel (fp32) runs with dropout and keeps only the output and its log-sum-exp
(PyTorch's ``sdp_utils.cpp`` backend selection). :func:`cuda_attention_kernels` calls those kernels,
whose fake implementations give their real output shapes.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

#: aten ops that CUDA autocast runs in float32 by casting their inputs (``fp32`` policy).
FP32_OPS = (
    "acos",
    "asin",
    "cosh",
    "erfinv",
    "exp",
    "expm1",
    "log",
    "log10",
    "log2",
    "log1p",
    "reciprocal",
    "rsqrt",
    "sinh",
    "tan",
    "pow.Tensor_Scalar",
    "pow.Tensor_Tensor",
    "pow.Scalar",
    "softplus",
    "layer_norm",
    "native_layer_norm",
    "group_norm",
    "cosine_similarity",
    "poisson_nll_loss",
    "cosine_embedding_loss",
    "nll_loss",
    "nll_loss2d",
    "hinge_embedding_loss",
    "kl_div",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "mse_loss",
    "margin_ranking_loss",
    "multilabel_margin_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "binary_cross_entropy_with_logits",
    "dist",
    "pdist",
    "cdist",
    "renorm",
    "logsumexp",
)

#: aten ops that CUDA autocast runs with ``dtype=torch.float32`` when no dtype is given
#: (``fp32_set_opt_dtype`` policy): the output is fp32, the input is not copied.
FP32_SET_DTYPE_OPS = (
    "softmax.int",
    "log_softmax.int",
    "cumsum",
    "cumprod",
    "sum",
    "sum.dim_IntList",
    "prod",
    "prod.dim_int",
)

AUTOCAST_SOURCE = (
    "pytorch/pytorch aten/src/ATen/autocast_mode.h (AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE)"
)


def _overload(name: str) -> Any:
    import torch

    op, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, op)
    return getattr(packet, overload or "default")


def _is_low_float(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16)


def _fp32_kernel(op: Any) -> Any:
    import torch
    from torch.utils._pytree import tree_map

    autocast_cpu = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)

    def cast(value: Any) -> Any:
        return value.float() if _is_low_float(value) else value

    def kernel(*args: Any, **kwargs: Any) -> Any:
        with torch._C._ExcludeDispatchKeyGuard(autocast_cpu):
            return op(*tree_map(cast, args), **tree_map(cast, kwargs))

    return kernel


def _set_dtype_kernel(op: Any) -> Any:
    import torch

    autocast_cpu = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        with torch._C._ExcludeDispatchKeyGuard(autocast_cpu):
            if args and _is_low_float(args[0]) and kwargs.get("dtype") is None:
                kwargs = {**kwargs, "dtype": torch.float32}
            return op(*args, **kwargs)

    return kernel


@contextlib.contextmanager
def cuda_autocast_policy() -> Iterator[None]:
    """Within this block, ``torch.autocast("cpu", ...)`` follows CUDA's float32 op lists."""
    import torch

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel" is the point
        for name in FP32_OPS:
            library.impl(name, _fp32_kernel(_overload(name)), "AutocastCPU")
        for name in FP32_SET_DTYPE_OPS:
            library.impl(name, _set_dtype_kernel(_overload(name)), "AutocastCPU")
    try:
        yield
    finally:
        library._destroy()


def cuda_attention_kernels() -> Any:
    """A torch function mode (``torch.overrides.TorchFunctionMode``, PyTorch's public hook for
    intercepting ``torch.nn.functional`` calls) in which SDPA with dropout runs CUDA's flash (16-bit)
    or efficient (fp32) kernel, and dropout CUDA's fused kernel. Modes travel with autograd's thread
    state, so checkpointing's recomputation takes the same path as the forward."""
    import torch.nn.functional as functional
    from torch.overrides import TorchFunctionMode

    sdpa, dropout = functional.scaled_dot_product_attention, functional.dropout

    class CudaAttentionKernels(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            routed = None
            if func is sdpa:
                routed = _route_sdpa(*args, **kwargs)
            elif func is dropout:
                routed = _route_dropout(*args, **kwargs)
            return routed if routed is not None else func(*args, **kwargs)

    return CudaAttentionKernels()


def _route_dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, **_: Any) -> Any:
    """``native_dropout`` (a bool mask) where CUDA would fuse it; None to leave the call alone."""
    import torch

    if not training or not 0 < p < 1 or inplace or not input.is_floating_point() or input.numel() == 0:
        return None
    return torch.ops.aten.native_dropout(input, p, True)[0]


def _route_sdpa(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Any:
    """The CUDA kernel's output for SDPA calls the CPU would send to the math kernel; None otherwise."""
    import torch

    if dropout_p <= 0 or attn_mask is not None or query.dim() != 4:
        return None
    if key.shape[1] != query.shape[1]:  # grouped K/V: the kernels read them repeated
        repeat = query.shape[1] // key.shape[1]
        key = key.repeat_interleave(repeat, dim=1)
        value = value.repeat_interleave(repeat, dim=1)
    if query.dtype in (torch.float16, torch.bfloat16):
        out = torch.ops.aten._scaled_dot_product_flash_attention(
            query, key, value, dropout_p, is_causal, False, scale=scale
        )
        return out[0]
    out = torch.ops.aten._scaled_dot_product_efficient_attention(
        query, key, value, None, True, dropout_p, is_causal, scale=scale
    )
    return out[0]
