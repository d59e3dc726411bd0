"""Speed: training step time and run length from FLOPs, decode speed from HBM bandwidth.

Training (compute-bound for transformer-sized matmuls)::

    FLOPs per token = 6 x P_matmul + 12 x L x (heads x head_dim) x s      (PaLM, arXiv:2204.02311, appendix B)
                      (4 x P_matmul for LoRA/QLoRA: frozen weights need no weight gradients;
                       + one more forward pass with full activation checkpointing)
    step time       = FLOPs / (GPUs x peak dense TFLOPS x MFU)

Decode (memory-bound: every step reads the weights once for the whole batch, and each sequence's
KV cache)::

    step time  = (weight bytes / tp + concurrency x KV bytes of one sequence / tp) / (HBM bandwidth x MBU)
    tokens/s per sequence = 1 / step time; compute time 2 x P x concurrency / (peak x MFU) is checked too,
    and the larger of the two says which resource binds.

Efficiency factors (MFU, MBU) are data with sources in ``specs/rules/throughput.yaml``; every
estimate is a range from the low to the high factor, with the default in between.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimation.memory import MemoryInputs, Shards


@dataclass(frozen=True)
class Range:
    """A value at the default efficiency, and at the low and high ends of the range."""

    default: float
    low: float  # the pessimistic end (lowest speed or longest time)
    high: float  # the optimistic end

    def as_dict(self, digits: int = 3) -> dict[str, float]:
        return {
            "default": round(self.default, digits),
            "low": round(self.low, digits),
            "high": round(self.high, digits),
        }


@dataclass(frozen=True)
class TrainingSpeed:
    flops_per_token: float
    peak_tflops: float
    peak_source: str
    gpus: int
    tokens_per_second: Range  # low = pessimistic
    step_seconds: Range
    tokens_per_step: float
    run_tokens: float | None
    run_hours: Range | None  # low = the optimistic (shortest) end, high = the pessimistic end
    binds: str
    formula: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "flops_per_token": self.flops_per_token,
            "peak_tflops": self.peak_tflops,
            "peak_source": self.peak_source,
            "gpus": self.gpus,
            "tokens_per_second": self.tokens_per_second.as_dict(0),
            "step_seconds": self.step_seconds.as_dict(),
            "tokens_per_step": self.tokens_per_step,
            "run_tokens": self.run_tokens,
            "run_hours": self.run_hours.as_dict(2) if self.run_hours else None,
            "binds": self.binds,
            "formula": self.formula,
        }


@dataclass(frozen=True)
class DecodeSpeed:
    bytes_per_step: float
    bandwidth_gbps: float
    tokens_per_second_per_seq: Range
    memory_seconds: float
    compute_seconds: float
    binds: str
    mbu: Range
    formula: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "bytes_per_step": self.bytes_per_step,
            "bandwidth_gbps": self.bandwidth_gbps,
            "tokens_per_second_per_seq": self.tokens_per_second_per_seq.as_dict(1),
            "memory_ms": round(self.memory_seconds * 1e3, 3),
            "compute_ms": round(self.compute_seconds * 1e3, 3),
            "binds": self.binds,
            "mbu": self.mbu.as_dict(2),
            "formula": self.formula,
        }


def peak_tflops(gpu: GpuSpec, precision: str) -> tuple[float | None, str]:
    """The dense tensor-core peak the workload's precision runs at, and which catalog field gave it."""
    candidates: list[tuple[str, float | None]]
    if precision == "fp8-mixed":
        candidates = [
            ("fp8_dense_tflops", gpu.fp8_dense_tflops),
            ("bf16_dense_tflops", gpu.bf16_dense_tflops),
        ]
    elif precision == "32-true":
        candidates = [("fp32_tflops", gpu.fp32_tflops)]
    elif precision == "64-true":
        candidates = [("fp64_tensor_tflops", gpu.fp64_tensor_tflops), ("fp64_tflops", gpu.fp64_tflops)]
    elif precision in ("16-mixed", "16-true"):
        candidates = [
            ("bf16_dense_tflops", gpu.bf16_dense_tflops),
            ("fp16_tensor_dense_tflops", gpu.fp16_tensor_dense_tflops),
        ]
    else:  # bf16: GPUs without bf16 tensor cores (Volta, Turing) run it far slower; use the fp32 rate
        candidates = [("bf16_dense_tflops", gpu.bf16_dense_tflops), ("fp32_tflops", gpu.fp32_tflops)]
    for name, value in candidates:
        if value:
            return float(value), name
    return None, "none"


def matmul_params(inputs: MemoryInputs) -> float:
    """Parameters that take part in matmuls for one token (blocks, active experts only, and the LM head)."""
    arch = inputs.arch
    inactive = (
        arch.layers * arch.mlp_params_per_expert * (arch.experts - arch.top_k) if arch.experts > 1 else 0
    )
    head = arch.vocab * arch.embedding_width if arch.head == "lm" else 0
    return arch.block_params - inactive + head


def training_speed(
    inputs: MemoryInputs, gpu: GpuSpec, facts: Mapping[str, Any], *, gpus: int, run_tokens: float | None
) -> TrainingSpeed | None:
    arch = inputs.arch
    peak, field = peak_tflops(gpu, inputs.precision)
    if not peak:
        return None
    p = matmul_params(inputs)
    passes = 4 if inputs.frozen_base else 6
    attention = 12 * arch.layers * arch.q_dim * inputs.seq_len
    if inputs.activation_checkpointing == "full":
        extra = float(facts["recompute"]["full_extra_forward"])
        passes += 2 * extra
        attention *= 1 + extra / 3
    per_token = passes * p + attention
    mfu = facts["training_mfu"]
    tokens_per_step = inputs.micro_batch * inputs.seq_len * inputs.grad_accum * max(1, inputs.dp)

    def rate(efficiency: float) -> float:
        return gpus * peak * 1e12 * efficiency / per_token

    speed = Range(rate(mfu["default"]), rate(mfu["low"]), rate(mfu["high"]))
    step = Range(tokens_per_step / speed.default, tokens_per_step / speed.low, tokens_per_step / speed.high)
    hours = None
    if run_tokens:
        hours = Range(
            run_tokens / speed.default / 3600, run_tokens / speed.high / 3600, run_tokens / speed.low / 3600
        )
    formula = (
        f"{passes:g} x {p / 1e9:.3f}B matmul params + 12 x {arch.layers} x {arch.q_dim} x {inputs.seq_len} "
        f"(attention) = {per_token / 1e9:.2f} GFLOP/token; {gpus} GPU(s) x {peak:g} TFLOPS ({field}) x MFU "
        f"{mfu['default']:g} ({mfu['low']:g}-{mfu['high']:g})"
    )
    return TrainingSpeed(
        per_token, peak, field, gpus, speed, step, tokens_per_step, run_tokens, hours, "compute", formula
    )


def decode_speed(
    inputs: MemoryInputs, gpu: GpuSpec, facts: Mapping[str, Any], *, weight_bytes: float, engine: str | None
) -> DecodeSpeed | None:
    if not gpu.memory_bandwidth_gbps:
        return None
    arch = inputs.arch
    shards = Shards(inputs)
    context = inputs.context_len or inputs.seq_len
    kv_per_token = (
        2 * shards.layers_local * max(1, arch.kv_heads // inputs.tp) * arch.head_dim * _kv_width(inputs)
    )
    kv_per_sequence = kv_per_token * context / 2  # on average a sequence is half-way through its context
    bytes_per_step = weight_bytes + inputs.concurrency * kv_per_sequence
    table = facts["decode_mbu"]
    band = table["optimized"] if (engine or "") in table["optimized_engines"] else table["portable"]
    bandwidth = gpu.memory_bandwidth_gbps * 1e9
    memory_seconds = bytes_per_step / (bandwidth * band["default"])
    peak, _ = peak_tflops(gpu, inputs.precision)
    compute_seconds = 0.0
    if peak:
        compute_seconds = (
            2 * shards.params * inputs.concurrency / (peak * 1e12 * facts["prefill_mfu"]["default"])
        )

    def rate(mbu: float) -> float:
        return 1 / max(bytes_per_step / (bandwidth * mbu), compute_seconds)

    tokens = Range(rate(band["default"]), rate(band["low"]), rate(band["high"]))
    binds = "memory bandwidth" if memory_seconds >= compute_seconds else "compute"
    formula = (
        f"({weight_bytes / 2**30:.2f} GiB weights + {inputs.concurrency} x {kv_per_sequence / 2**30:.3f} GiB "
        f"KV read per step) / ({gpu.memory_bandwidth_gbps:g} GB/s x MBU {band['default']:g})"
    )
    return DecodeSpeed(
        bytes_per_step,
        gpu.memory_bandwidth_gbps,
        tokens,
        memory_seconds,
        compute_seconds,
        binds,
        Range(band["default"], band["low"], band["high"]),
        formula,
    )


def _kv_width(inputs: MemoryInputs) -> float:
    width = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
    return width.get(inputs.kv_cache_dtype or "", 4 if inputs.precision == "32-true" else 2)
