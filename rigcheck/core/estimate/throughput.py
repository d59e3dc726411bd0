"""Speed: a training workload's tokens/s and run time, a served model's decode and prefill speed.

Training: :mod:`rigcheck.core.estimate.steptime` (compute at the framework's HFU, the pipeline
bubble, the communication compute does not hide). Serving: :mod:`rigcheck.core.estimate.decoding`
(decode steps bound by memory bandwidth at the engine's MBU for the GPU's memory, or by compute at a
large batch; prefill and time to first token). This module picks the peak TFLOPS the precision runs
at, counts the matmul parameters one token passes through, and gives each estimate as a range from
the pessimistic to the optimistic efficiency (``specs/rules/throughput.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from rigcheck.core.catalog.catalog import GpuSpec
from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.estimate.decoding import Serving, serving_speed
from rigcheck.core.estimate.memory import MemoryInputs
from rigcheck.core.estimate.memory.quantized import bits_per_weight, partial_scheme, quantized_blocks
from rigcheck.core.estimate.steptime import StepTime, step_time
from rigcheck.core.estimate.topology import Topology


class Range(NamedTuple):
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


class TrainingSpeed(NamedTuple):
    """A training job's expected tokens per second and step time, with the FLOPs and peak they come from."""

    flops_per_token: float  # model FLOPs (6 P + attention), what MFU is measured on
    executed_flops_per_token: float  # with the recomputed forward
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
    step: StepTime

    @property
    def comm_share(self) -> float:
        return self.step.comm_share

    def as_dict(self) -> dict[str, Any]:
        step = self.step
        return {
            "flops_per_token": self.flops_per_token,
            "executed_flops_per_token": self.executed_flops_per_token,
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
            "hfu": {
                "default": step.hfu.default,
                "low": step.hfu.low,
                "high": step.hfu.high,
                "basis": step.hfu.basis,
            },
            "parts_seconds": {name: round(value, 4) for name, value in step.parts()},
            "communication": [
                {
                    "what": item.what,
                    "kind": item.kind,
                    "ranks": item.ranks,
                    "bytes_per_call": item.bytes_per_call,
                    "calls": item.calls,
                    "bytes_per_gpu": item.bytes_per_gpu,
                    "over": item.over,
                    "busbw_gbps": round(item.busbw_gbps, 3),
                    "seconds": round(item.seconds, 4),
                    "overlappable": item.overlappable,
                }
                for item in step.collectives
            ],
            "comm_share": round(step.comm_share, 4),
            "topology_known": step.topology_known,
        }


class DecodeSpeed(NamedTuple):
    """An inference job's expected decode speed, per sequence and in all, and what bounds it."""

    bytes_per_step: float
    bandwidth_gbps: float
    tokens_per_second_per_seq: Range
    aggregate_tokens_per_second: Range
    memory_seconds: float
    compute_seconds: float
    binds: str
    mbu: Range
    formula: str
    serving: Serving
    ttft_ms: Range | None = None  # low = the optimistic (shortest) end

    def as_dict(self) -> dict[str, Any]:
        out = {
            "bytes_per_step": self.bytes_per_step,
            "bandwidth_gbps": self.bandwidth_gbps,
            "tokens_per_second_per_seq": self.tokens_per_second_per_seq.as_dict(1),
            "aggregate_tokens_per_second": self.aggregate_tokens_per_second.as_dict(1),
            "concurrency": self.serving.concurrency,
            "memory_ms": round(self.memory_seconds * 1e3, 3),
            "compute_ms": round(self.compute_seconds * 1e3, 3),
            "tensor_parallel_ms": round(self.serving.tp_seconds * 1e3, 3),
            "stages": self.serving.stages,
            "binds": self.binds,
            "mbu": {**self.mbu.as_dict(2), "basis": self.serving.mbu.basis},
            "formula": self.formula,
        }
        if self.ttft_ms is not None:
            out["ttft_ms"] = self.ttft_ms.as_dict(1)
            out["prompt_tokens"] = self.serving.prompt_tokens
        if self.serving.output_tokens:
            out["output_tokens"] = self.serving.output_tokens
        return out


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


def serving_peak(gpu: GpuSpec, inputs: MemoryInputs) -> tuple[float | None, str]:
    """The tensor peak a served model's GEMMs run at: FP8 where its weights are FP8 and the GPU has FP8
    tensor cores (vLLM's and TensorRT-LLM's FP8 checkpoints quantise the activations too and call FP8
    GEMMs: vLLM ``Fp8LinearMethod``, cutlass_scaled_mm); weight-only schemes (AWQ, GPTQ, NF4) dequantise
    to 16 bits and run at the precision's peak, as does FP8 on a GPU without FP8 (Ampere: weight-only)."""
    if inputs.quantization == "fp8" and gpu.fp8_dense_tflops:
        return float(gpu.fp8_dense_tflops), "fp8_dense_tflops"
    peak, field = peak_tflops(gpu, inputs.precision)
    if inputs.quantization == "fp8-mlp" and gpu.fp8_dense_tflops and peak:
        # a partial scheme's FP8 GEMMs at the FP8 peak, the rest at the precision's: each share's time added
        share = fp8_matmul_share(inputs)
        blended = 1 / (share / float(gpu.fp8_dense_tflops) + (1 - share) / peak)
        return blended, f"fp8_dense_tflops for {share:.0%} of the matmuls, {field} for the rest"
    return peak, field


def fp8_matmul_share(inputs: MemoryInputs) -> float:
    """The share of one token's matmul parameters in FP8 under a partial scheme (``fp8-mlp``): the active
    MLP of the blocks it quantises (:func:`~rigcheck.core.estimate.memory.quantized.quantized_blocks`)."""
    partial = partial_scheme(inputs, load_rule_facts("memory"))
    if not partial:
        return 0.0
    arch = inputs.arch
    active = (arch.top_k + arch.shared_experts) if arch.experts > 1 else 1
    blocks = quantized_blocks(partial, arch.layers, first=True, last=True)
    return blocks * arch.mlp_params_per_expert * active / matmul_params(inputs)


def matmul_params(inputs: MemoryInputs) -> float:
    """Parameters that take part in matmuls for one token (blocks, active experts only, and the LM head)."""
    arch = inputs.arch
    inactive = (
        arch.layers * arch.mlp_params_per_expert * (arch.experts - arch.top_k) if arch.experts > 1 else 0
    )
    head = arch.vocab * arch.embedding_width if arch.head == "lm" else 0
    return arch.block_params - inactive + head


def training_speed(
    inputs: MemoryInputs,
    gpu: GpuSpec,
    facts: Mapping[str, Any],
    *,
    gpus: int,
    run_tokens: float | None,
    topology: Topology | None = None,
) -> TrainingSpeed | None:
    """Tokens/s and run time of a training workload (:mod:`rigcheck.core.estimate.steptime`)."""
    arch = inputs.arch
    peak, field = peak_tflops(gpu, inputs.precision)
    if not peak:
        return None
    p = matmul_params(inputs)
    step = step_time(
        inputs, matmul=p, peak_tflops=peak, facts=facts, topology=topology, architecture=gpu.architecture
    )
    speed = Range(step.tokens_per_second(0), step.tokens_per_second(1), step.tokens_per_second(2))
    seconds = Range(*step.steps)
    hours = None
    if run_tokens:
        hours = Range(
            run_tokens / speed.default / 3600, run_tokens / speed.high / 3600, run_tokens / speed.low / 3600
        )
    hfu = step.hfu
    passes = 4 if inputs.frozen_base else 6
    formula = (
        f"{passes} x {p / 1e9:.3f}B matmul params + 12 x {arch.layers} x {arch.q_dim} x {inputs.seq_len} (attention) "
        f"= {step.model_flops_per_token / 1e9:.2f} GFLOP/token"
        + (
            f", {step.executed_flops_per_token / 1e9:.2f} with the recomputed forward"
            if step.executed_flops_per_token > step.model_flops_per_token
            else ""
        )
        + f"; {gpus} GPU(s) x {peak:g} TFLOPS ({field}) x HFU {hfu.default:g} ({hfu.low:g}-{hfu.high:g}, {hfu.basis})"
    )
    return TrainingSpeed(
        step.model_flops_per_token,
        step.executed_flops_per_token,
        peak,
        field,
        gpus,
        speed,
        seconds,
        step.tokens_per_step,
        run_tokens,
        hours,
        step.binds,
        formula,
        step,
    )


def decode_speed(
    inputs: MemoryInputs,
    gpu: GpuSpec,
    facts: Mapping[str, Any],
    *,
    weight_bytes: float,
    engine: str | None,
    topology: Topology | None = None,
) -> DecodeSpeed | None:
    """Decode speed per sequence and in aggregate, and the prefill's time to first token
    (:mod:`rigcheck.core.estimate.decoding`)."""
    peak, _ = serving_peak(gpu, inputs)
    active = matmul_params(inputs)  # the whole model's, for one token
    pipelined = (engine or "") in tuple(facts["decode_mbu"]["pipelining_engines"])
    serving = serving_speed(
        inputs,
        gpu,
        facts,
        weight_bytes=weight_bytes,
        peak_tflops=peak,
        active_params=active,
        topology=topology,
        pipelined_engine=pipelined,
        bits=bits_per_weight(inputs, load_rule_facts("memory")),
    )
    if serving is None:
        return None
    per_seq = Range(*(1 / step for step in serving.steps))
    aggregate = Range(*(serving.aggregate_tokens_per_second(which) for which in range(3)))
    ttft = None
    if serving.prefill_seconds:
        default, worst, best = serving.prefill_seconds
        ttft = Range(default * 1e3, best * 1e3, worst * 1e3)
    read = weight_bytes + serving.concurrency * serving.kv_bytes_per_sequence
    stages = f" x {serving.stages} stages in turn" if serving.stages > 1 else ""
    formula = (
        f"({weight_bytes / 2**30:.2f} GiB weights + {serving.concurrency} x "
        f"{serving.kv_bytes_per_sequence / 2**30:.3f} GiB KV read per step) / ({gpu.memory_bandwidth_gbps:g} GB/s x "
        f"MBU {serving.mbu.default:g}, {serving.mbu.basis}){stages}"
        + (
            f" + {serving.tp_seconds * 1e3:.2f} ms of tensor-parallel all-reduces"
            if serving.tp_seconds
            else ""
        )
        + (f" ({serving.untimed})" if serving.untimed else "")
    )
    mbu = serving.mbu
    return DecodeSpeed(
        read,
        gpu.memory_bandwidth_gbps or 0.0,
        per_seq,
        aggregate,
        serving.memory_seconds,
        serving.compute_seconds,
        serving.binds,
        Range(mbu.default, mbu.low, mbu.high),
        formula,
        serving,
        ttft,
    )
