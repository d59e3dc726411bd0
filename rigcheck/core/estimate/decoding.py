"""Serving speed: decode steps, prefill and time to first token, at a concurrency.

A decode step reads every weight once for the whole batch and each sequence's KV cache, and is
bound by memory bandwidth until the batch is large enough for the matmuls to bind (Databricks, "LLM
Inference Performance Engineering": MBU; Kwon et al., vLLM, arXiv:2309.06180)::

    memory time    (weights on the GPU + sequences x KV read per sequence) / (bandwidth x MBU)
    compute time   2 x active params x sequences / (peak x decode MFU)
    step           max(memory, compute) x pipeline stages + tensor-parallel all-reduces
    per sequence   1 / step tokens/s;  aggregate  sequences / step

MBU depends on the engine and on the memory (``specs/rules/throughput.yaml`` ``decode_mbu``: HBM,
GDDR, unified LPDDR). With pipeline stages (llama.cpp's layer split, ``parallelism.pp``) one token
goes through the stages one after another, so each step reads all the weights at one GPU's
bandwidth; engines that pipeline several batches (vLLM) overlap the stages once there are as many
batches in flight as stages. Tensor parallelism reads 1/t of the weights per GPU but adds two
all-reduces of ``sequences x hidden`` per layer per step, latency-bound at decode sizes.

Prefill is compute-bound: ``(2 x active params + 4 x layers x q_dim x prompt / 2) x prompt tokens``
over the GPUs' peak x prefill MFU, plus its tensor-parallel all-reduces; time to first token is one
prompt's prefill. The aggregate output rate of an offline run (``benchmark_throughput``) is
``sequences x output / (prefill of all prompts + output x step)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from rigcheck.core.catalog.catalog import GpuSpec
from rigcheck.core.estimate.collectives import Collective
from rigcheck.core.estimate.memory import MemoryInputs, Shards
from rigcheck.core.estimate.topology import Topology

ENGINE_GROUPS = {
    "vllm": "vllm",
    "sglang": "vllm",
    "trt-llm": "trt-llm",
    "tgi": "vllm",
    "llama.cpp": "llama.cpp",
    "ollama": "llama.cpp",
    "gpt-fast": "gpt-fast",
    "exllama": "exllama",
    "mlc": "mlc",
    "transformers": "transformers",
    "lmdeploy": "lmdeploy",
}


def memory_class(gpu: GpuSpec) -> str:
    """hbm | gddr | unified, from the catalog's memory type."""
    kind = (gpu.memory_type or "").lower()
    if "hbm" in kind:
        return "hbm"
    if "lpddr" in kind or "unified" in kind:
        return "unified"
    return "gddr"


class Band(NamedTuple):
    """A published efficiency range: its default, low and high, and what it is based on."""

    default: float
    low: float
    high: float
    basis: str


def weight_format(bits: float | None) -> str:
    """w16, w8 or w4: the weight format a decode kernel reads."""
    if bits is None or bits > 10:
        return "w16"
    return "w8" if bits > 6 else "w4"


def mbu_for(engine: str | None, gpu: GpuSpec, facts: Mapping[str, Any], bits: float | None = None) -> Band:
    """The engine's bandwidth utilisation on this kind of memory for this weight format."""
    table = facts["decode_mbu"]["engines"]
    group = ENGINE_GROUPS.get(engine or "", "other")
    kind, fmt = memory_class(gpu), weight_format(bits)
    rows = table.get(group, {})
    row = None
    for memory in (kind, "any"):
        cells = rows.get(memory) or {}
        row = cells.get(fmt) or cells.get("any")
        if row:
            break
    if row is None:
        row = table["other"][kind]["any"]
    label = f"{engine or 'an unnamed engine'} on {kind.upper()}, {fmt[1:]}-bit weights"
    return Band(float(row["default"]), float(row["low"]), float(row["high"]), label)


def expert_share_read(inputs: MemoryInputs, sequences: int) -> float:
    """The share of a mixture of experts' weights one decode step reads: the dense part, and of each
    layer's experts those the batch's tokens are routed to, E x (1 - (1 - k/E)^sequences) of E when
    tokens pick their k experts independently (a batch of one reads k of E)."""
    arch = inputs.arch
    if arch.experts <= 1:
        return 1.0
    experts = arch.layers * arch.mlp_params_per_expert * arch.experts
    share = experts / max(1, arch.params)
    touched = 1 - (1 - arch.top_k / arch.experts) ** max(1, sequences)
    return 1 - share * (1 - touched)


class Serving(NamedTuple):
    """One decode step of a serving job: the bytes it reads, the bandwidth, and its memory and compute time."""

    concurrency: int
    weight_bytes: float  # read per step per GPU (this stage's)
    kv_bytes_per_sequence: float  # read per step
    bandwidth_gbps: float
    mbu: Band
    stages: int
    memory_seconds: float  # one stage's, at the default MBU
    compute_seconds: float
    tp_seconds: float
    steps: tuple[float, float, float]  # default, pessimistic, optimistic (seconds per decode step)
    prefill_seconds: tuple[float, float, float] | None  # one prompt's, default / pessimistic / optimistic
    prompt_tokens: int
    output_tokens: int | None
    collectives: tuple[Collective, ...] = ()
    untimed: str = ""  # why the tensor-parallel all-reduces are not in the step, when they are not

    def tokens_per_second_per_seq(self, which: int = 0) -> float:
        return 1 / self.steps[which]

    def aggregate_tokens_per_second(self, which: int = 0) -> float:
        """Output tokens per second of all sequences; with an output length, the prefill of every prompt
        is paid once per request."""
        step = self.steps[which]
        c = self.concurrency
        if self.output_tokens and self.prefill_seconds:
            return c * self.output_tokens / (c * self.prefill_seconds[which] + self.output_tokens * step)
        return c / step

    @property
    def binds(self) -> str:
        if self.tp_seconds > max(self.memory_seconds * self.stages, self.compute_seconds):
            return "tensor-parallel all-reduce latency"
        return "memory bandwidth" if self.memory_seconds >= self.compute_seconds else "compute"


def serving_speed(
    inputs: MemoryInputs,
    gpu: GpuSpec,
    facts: Mapping[str, Any],
    *,
    weight_bytes: float,
    peak_tflops: float | None,
    active_params: float,
    topology: Topology | None,
    pipelined_engine: bool,
    bits: float | None = None,
) -> Serving | None:
    """Decode and prefill of ``inputs`` on ``gpu``; ``weight_bytes`` are one GPU's (one stage's)."""
    if not gpu.memory_bandwidth_gbps:
        return None
    arch, c = inputs.arch, max(1, inputs.concurrency)
    shards = Shards(inputs)
    t, stages = max(1, inputs.tp), max(1, inputs.pp)
    prompt = inputs.prompt_len or (inputs.context_len or inputs.seq_len)
    output = inputs.output_len
    context = inputs.context_len or (prompt + (output or 0)) or inputs.seq_len
    average = min(context, prompt + (output or 0) / 2) if output else context / 2
    kv_width = _kv_width(inputs)
    kv_per_token = 2 * shards.layers_local * max(1, arch.kv_heads // t) * arch.head_dim * kv_width
    kv_per_sequence = kv_per_token * average
    mbu = mbu_for(inputs.engine, gpu, facts, bits)
    bandwidth = gpu.memory_bandwidth_gbps * 1e9
    read = weight_bytes * expert_share_read(inputs, c) + c * kv_per_sequence
    overhead = (
        float(facts["decode_mbu"]["decode_overhead_us"].get(inputs.engine or "", 0)) * 1e-6 * arch.layers
    )
    mfu = facts["decode_mfu"]
    compute = (
        2 * active_params / (t * stages) * c / (peak_tflops * 1e12 * float(mfu["default"]))
        if peak_tflops
        else 0.0
    )
    items: list[Collective] = []
    tp_seconds = 0.0
    if t > 1 and topology is not None and topology.path(t).busbw_gbps > 0:
        path = topology.path(t)
        element = 4 if inputs.precision == "32-true" else 2
        items.append(
            Collective(
                "all-reduce",
                t,
                c * arch.hidden * element,
                2 * arch.layers,
                path.busbw_gbps,
                path.latency_us,
                "tensor-parallel all-reduces (2 per layer per token)",
                path.description,
                False,
                "tensor",
            )
        )
        tp_seconds = items[0].seconds
    untimed = ""
    if t > 1 and topology is not None and topology.path(t).busbw_gbps <= 0:
        untimed = f"tensor-parallel all-reduces not timed: {topology.path(t).description}"
    overlap = min(stages, c) if pipelined_engine else 1

    def step(efficiency: float) -> float:
        memory = read / (bandwidth * efficiency)
        return max(memory, compute) * stages / overlap + tp_seconds + overhead

    steps = (step(mbu.default), step(mbu.low), step(mbu.high))
    prefill = None
    if peak_tflops:
        pmfu = facts["prefill_mfu"]
        flops = (2 * active_params + 2 * arch.layers * arch.q_dim * prompt) * prompt
        gpus = t * stages
        tp_prefill = 0.0
        if t > 1 and topology is not None and topology.path(t).busbw_gbps > 0:
            path = topology.path(t)
            element = 4 if inputs.precision == "32-true" else 2
            tp_prefill = Collective(
                "all-reduce",
                t,
                prompt * arch.hidden * element,
                2 * arch.layers,
                path.busbw_gbps,
                path.latency_us,
                "",
                "",
                False,
            ).seconds

        def fill(efficiency: float) -> float:
            return flops / (gpus * peak_tflops * 1e12 * efficiency) + tp_prefill

        prefill = (fill(float(pmfu["default"])), fill(float(pmfu["low"])), fill(float(pmfu["high"])))
    return Serving(
        c,
        weight_bytes,
        kv_per_sequence,
        gpu.memory_bandwidth_gbps,
        mbu,
        stages,
        read / (bandwidth * mbu.default),
        compute,
        tp_seconds,
        steps,
        prefill,
        prompt,
        output,
        tuple(items),
        untimed,
    )


def _kv_width(inputs: MemoryInputs) -> float:
    width = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
    return width.get(inputs.kv_cache_dtype or "", 4 if inputs.precision == "32-true" else 2)
