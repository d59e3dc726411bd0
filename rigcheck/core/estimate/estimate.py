"""The shared estimates: per-GPU memory, training speed and decode speed of a workload on a GPU.

This is the module checkers and third-party plugins import::

    from rigcheck.core.estimate.estimate import estimate_workload

    estimate = estimate_workload(ctx.workload, gpu=node.gpus[0].facts, gpus_per_node=8)
    estimate.memory.device_gib, estimate.memory.component("activations"), estimate.training

The arithmetic lives in ``rigcheck.core.estimate`` (architecture, memory, throughput); this
module turns a workload spec into its inputs, searches for the largest micro-batch that fits, and
re-estimates the changes that would make a workload fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rigcheck.core.catalog.catalog import GpuSpec
from rigcheck.core.estimate.architecture import ALL_LINEAR, Architecture, resolve_architecture
from rigcheck.core.estimate.largest import largest_fitting
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, MemoryInputs, estimate_memory
from rigcheck.core.estimate.throughput import DecodeSpeed, TrainingSpeed, decode_speed, training_speed
from rigcheck.core.estimate.topology import Topology

__all__ = [
    "GIB",
    "Architecture",
    "FitVerdict",
    "MemoryEstimate",
    "MemoryInputs",
    "WorkloadEstimate",
    "beside_budget",
    "estimate_memory",
    "estimate_workload",
    "fit_verdict",
    "largest_micro_batch",
    "memory_inputs",
    "pass_ceiling",
    "passes",
    "required_bytes",
    "resolve_architecture",
    "run_tokens",
    "spread_of",
    "usable_bytes",
]


def framework_defaults(framework: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings a named framework implies (specs/rules/frameworks.yaml) and where each comes from."""
    if not framework:
        return {}, {}
    from rigcheck.core.catalog.facts import load_rule_facts

    section = load_rule_facts("frameworks").get(framework)
    if section is None:
        return {}, {}
    return dict(section["defaults"]), dict(section["basis"])


#: llama.cpp's GGUF types: their bits per weight are the whole file's (specs/rules/memory.yaml).
GGUF_TYPES = ("q2_k", "q3_k_m", "q4_0", "q4_k_m", "q5_0", "q5_k_m", "q6_k", "q8_0")


def _quantization_name(value: Any) -> str | None:
    """The scheme's name; ``bits`` for ``quantization: {bits: ...}``."""
    if value is None or isinstance(value, str):
        return value
    return "bits"


def _implied(name: str, value: Any, framework: str, basis: str | None) -> str:
    """How a framework default reads in the estimate's notes: ``loss chunked: the torchtune default; code (...)``."""
    return f"{name} {value}: the {framework} default" + (f"; {basis}" if basis else "")


#: One architecture of each set of fields (bounded): the estimator's parts are kept by the values they
#: read (:mod:`rigcheck.core.estimate.memory.reads`), and an architecture that is the same object
#: compares at once where an equal one compares field by field.
_ARCHITECTURES: dict[Architecture, Architecture] = {}


def _one_of(arch: Architecture) -> Architecture:
    known = _ARCHITECTURES.get(arch)
    if known is None:
        if len(_ARCHITECTURES) >= 256:
            _ARCHITECTURES.clear()
        known = _ARCHITECTURES[arch] = arch
    return known


def _bitsandbytes_keeps(workload: Any, qlora_backend: str) -> dict[str, bool]:
    """What bitsandbytes' frozen quantised linears keep for the backward at the workload's version
    (specs/rules/memory.yaml bitsandbytes; unset: the newest behaviour): int8 layers their 16-bit
    input (and, before 0.45.0, an int8 copy of it), 4-bit layers their input before 0.43.2."""
    from rigcheck.core.catalog.cuda_compat import parse_version
    from rigcheck.core.catalog.facts import load_rule_facts

    int8 = workload.task == "lora" and workload.quantization == "int8"
    four_bit = workload.task == "qlora" and qlora_backend == "bitsandbytes"
    if not (int8 or four_bit):
        return {}
    facts = load_rule_facts("memory")["bitsandbytes"]
    version = _version_of(workload, "bitsandbytes")

    def before(key: str) -> bool:
        return version is not None and version < (parse_version(str(facts[key])) or ())

    return {
        "quantized_linears_keep_input": int8 or before("four_bit_keeps_input_before"),
        "int8_keeps_transposed": int8 and before("eight_bit_keeps_transposed_before"),
    }


def _shifted_logits_copy(workload: Any) -> str:
    """Where transformers' standard loss copies the shifted fp32 logits at the workload's version
    (specs/rules/memory.yaml transformers; unset: the newest behaviour, no copy): "model" before 4.46.0,
    "loss" (ForCausalLMLoss) before 4.49.0, else ""."""
    from rigcheck.core.catalog.cuda_compat import parse_version
    from rigcheck.core.catalog.facts import load_rule_facts

    version = _version_of(workload, "transformers")
    if version is None:
        return ""
    facts = load_rule_facts("memory")["transformers"]
    if version < (parse_version(str(facts["shifted_logits_copy_from"])) or ()):
        return "model"
    if version < (parse_version(str(facts["shifted_logits_copy_before"])) or ()):
        return "loss"
    return ""


def _version_of(workload: Any, library: str) -> tuple[int, ...] | None:
    """``versions.<library>`` as a release (``0.5.3.post1`` is 0.5.3: ``cuda_compat.release_version``), or
    None when unset or not a version."""
    from rigcheck.core.catalog.cuda_compat import release_version

    return release_version(getattr(workload.versions, library, None) if workload.versions else None)


def memory_inputs(workload: Any, arch: Architecture, *, gpus_per_node: int = 8) -> MemoryInputs:
    """The estimator's inputs from a validated Workload model: what the workload states, else what its
    framework does by default (said in ``implied``), else rigcheck's defaults (said in ``assumed``)."""
    batch, par, lora, qlora, inference = (
        workload.batch,
        workload.parallelism,
        workload.lora,
        workload.qlora,
        workload.inference,
    )
    training = workload.task != "inference"
    stated = workload.model_fields_set
    defaults, basis = framework_defaults(workload.framework)
    implied: list[str] = []
    assumed: list[str] = []

    def pick(name: str, value: Any, is_stated: bool, fallback: Any) -> Any:
        if is_stated:
            return value
        if name in defaults:
            implied.append(_implied(name, defaults[name], workload.framework, basis.get(name)))
            return defaults[name]
        return fallback

    seq_len = (batch.seq_len if batch and batch.seq_len else None) or (
        inference.context_len if inference else None
    )
    if seq_len is None:
        seq_len = arch.max_position or 2048
        assumed.append(
            f"{'batch.seq_len' if training else 'inference.context_len'} {seq_len:,} "
            f"({'the model' + chr(39) + 's maximum length' if arch.max_position else 'rigcheck' + chr(39) + 's default'})"  # noqa: E501
        )
    if training and batch is None:
        assumed.append("batch.micro 1")
    optimizer = pick(
        "optimizer", workload.optimizer, workload.optimizer is not None, "adamw" if training else "none"
    )
    # FSDP1 only: whether a block's adapters share its flat parameter (the framework's wrap policy)
    fsdp_lora_units = "shared"
    if par.fsdp_version == 1:
        fsdp_lora_units = str(pick("fsdp_lora_units", None, False, "shared"))
    # DeepSpeed's buckets: the workload's, else its framework's config ("auto" in the Trainer's), else DeepSpeed's
    zero_config = par.deepspeed
    reduce_bucket = zero_config.reduce_bucket_size if zero_config else None
    prefetch_bucket = zero_config.stage3_prefetch_bucket_size if zero_config else None
    if par.zero >= 3 and (reduce_bucket is None or prefetch_bucket is None):
        framework_buckets = pick("deepspeed_buckets", None, False, None)
        reduce_bucket = framework_buckets if reduce_bucket is None else reduce_bucket
        prefetch_bucket = framework_buckets if prefetch_bucket is None else prefetch_bucket
    overlap_grads = zero_config.overlap_comm if zero_config else None
    overlap_params = False
    if par.zero in (1, 2) and overlap_grads is None:  # the framework's sharded optimizer, where it says
        overlap = str(pick("zero_overlap", None, False, "none"))
        overlap_grads = True if overlap in ("grads", "grads_and_params") else None
        overlap_params = overlap == "grads_and_params"
    max_live = zero_config.stage3_max_live_parameters if zero_config else None
    if par.zero >= 3 and max_live is None:
        max_live = pick("deepspeed_max_live", None, False, None)
    qlora_backend = (
        str(pick("qlora_backend", None, False, "bitsandbytes"))
        if workload.task == "qlora"
        else "bitsandbytes"
    )
    if "activation" in defaults and arch.act_fn != defaults["activation"]:
        from dataclasses import replace as _replace

        arch = _replace(arch, activation=defaults["activation"])
        implied.append(
            _implied("activation", defaults["activation"], workload.framework, basis.get("activation"))
        )
    frozen = workload.task in ("lora", "qlora")
    lora_targets = tuple(lora.targets) if lora and lora.targets else ()
    if frozen and not lora_targets:
        # a framework's default roles, those of them this model has: PEFT adapts the modules that exist
        # (a plain MLP has no gate), and a missing one is no error
        default = tuple(pick("lora_targets", (), False, ()))
        lora_targets = tuple(t for t in default if t.lower() in ALL_LINEAR or t in arch.linear_shapes())
    lora_rank = lora.rank if lora else (int(pick("lora_rank", 8, False, 8)) if frozen else 0)
    lora_dropout = lora.dropout if lora and lora.dropout is not None else None
    if lora_dropout is None:
        lora_dropout = float(pick("lora_dropout", 0.0, False, 0.0)) if frozen else 0.0
    return MemoryInputs(
        arch=_one_of(arch),
        task=workload.task,
        precision=pick("precision", workload.precision, "precision" in stated, workload.precision),
        optimizer=optimizer,
        quantization=_quantization_name(workload.quantization),
        quantization_bits=getattr(workload.quantization, "bits", None),
        quantization_scope=getattr(workload.quantization, "applies_to", None)
        or ("all" if _quantization_name(workload.quantization) in GGUF_TYPES else "linear"),
        micro_batch=batch.micro if batch else 1,
        seq_len=seq_len,
        grad_accum=batch.grad_accum if batch else 1,
        activation_checkpointing=pick(
            "activation_checkpointing",
            workload.activation_checkpointing,
            "activation_checkpointing" in stated,
            workload.activation_checkpointing,
        ),
        activation_offloading=bool(
            pick(
                "activation_offloading",
                workload.activation_offloading,
                workload.activation_offloading is not None,
                False,
            )
        ),
        attention=pick("attention", workload.attention, workload.attention is not None, "sdpa"),
        loss=pick("loss", workload.loss, "loss" in stated, workload.loss),
        dp=par.dp,
        tp=par.tp,
        pp=par.pp,
        virtual_stages=par.virtual_stages,
        sp=par.sp,
        cp=par.cp,
        ep=par.ep,
        zero=par.zero,
        fsdp=par.fsdp,
        fsdp_version=par.fsdp_version or 2,
        fsdp_lora_units=fsdp_lora_units,
        offload=par.offload,
        offload_params=par.offload_params,
        deepspeed_max_live=max_live,
        deepspeed_overlap_comm=overlap_grads,
        param_gather_overlap=overlap_params,
        deepspeed_reduce_bucket=reduce_bucket,
        deepspeed_prefetch_bucket=prefetch_bucket,
        optimizer_in_backward=bool(
            pick(
                "optimizer_in_backward",
                workload.optimizer_in_backward,
                "optimizer_in_backward" in stated,
                False,
            )
        ),
        lora_rank=lora_rank,
        lora_targets=lora_targets,
        lora_dropout=lora_dropout,
        modules_to_save=tuple(lora.modules_to_save) if lora and lora.modules_to_save else (),
        lora_base_dtype=lora.base_dtype if lora else None,
        qlora_quant=qlora.quant if qlora else "nf4",
        qlora_double_quant=qlora.double_quant if qlora else True,
        concurrency=inference.concurrency if inference else (batch.micro if batch else 1),
        context_len=inference.context_len if inference and inference.context_len else seq_len,
        prompt_len=inference.prompt_len if inference else None,
        output_len=inference.output_len if inference else None,
        kv_cache_dtype=inference.kv_cache_dtype if inference else None,
        engine=inference.engine if inference else None,
        gpu_memory_utilization=inference.gpu_memory_utilization if inference else None,
        max_num_seqs=inference.max_num_seqs if inference else None,
        max_num_batched_tokens=inference.max_num_batched_tokens if inference else None,
        vllm_version=_version_of(workload, "vllm"),
        gpus_per_node=gpus_per_node,
        framework=workload.framework,
        optimizer_implementation=pick(
            "optimizer_implementation",
            workload.optimizer_implementation,
            workload.optimizer_implementation is not None,
            "foreach",
        ),
        qlora_backend=qlora_backend,
        **_bitsandbytes_keeps(workload, qlora_backend),
        kbit_upcast=workload.task == "qlora" and bool(qlora and qlora.kbit_training),
        logits_upcast=bool(pick("logits_upcast", True, False, True)),
        shifted_logits_copy=_shifted_logits_copy(workload),
        implied=tuple(implied),
        assumed=tuple(assumed),
    )


def run_tokens(workload: Any, seq_len: int) -> float | None:
    """Tokens the run processes: ``data.tokens`` (x epochs), else samples x sequence length (an upper
    bound: samples shorter than the sequence length are padded or packed)."""
    tokens, _ = run_tokens_with_origin(workload, seq_len)
    return tokens


def run_tokens_with_origin(workload: Any, seq_len: int) -> tuple[float | None, str]:
    data = workload.data
    if data is None:
        return None, "none"
    epochs = data.epochs or 1
    if data.tokens:
        return data.tokens * epochs, "data.tokens"
    if data.samples:
        return data.samples * seq_len * epochs, "samples x seq_len (upper bound)"
    return None, "none"


class WorkloadEstimate(NamedTuple):
    """A workload's architecture, memory inputs and estimate, and its speed when a rig is known."""

    arch: Architecture
    inputs: MemoryInputs
    memory: MemoryEstimate
    training: TrainingSpeed | None = None
    decode: DecodeSpeed | None = None


def estimate_workload(
    workload: Any,
    *,
    gpu: GpuSpec | None = None,
    gpus_per_node: int = 8,
    arch: Architecture | None = None,
    document: Any = None,
    topology: Topology | None = None,
) -> WorkloadEstimate:
    """Memory (and, with a GPU, speed) of a workload. ``document`` positions model errors;
    ``topology`` (the rig's links, :func:`rigcheck.core.estimate.topology.topology_of`) adds the
    communication to the training step and the tensor-parallel all-reduces to decoding."""
    if arch is None:
        import os

        base_dir = os.path.dirname(document.path) if document is not None else None
        arch = resolve_architecture(workload.model, document=document, base_dir=base_dir)
    inputs = memory_inputs(workload, arch, gpus_per_node=gpus_per_node)
    memory = estimate_memory(inputs)
    train = decode = None
    if gpu is not None:
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("throughput")
        if inputs.training:
            train = training_speed(
                inputs,
                gpu,
                facts,
                gpus=inputs.world,
                run_tokens=run_tokens(workload, inputs.seq_len),
                topology=topology,
            )
        else:
            weights = memory.component("weights")
            decode = decode_speed(
                inputs,
                gpu,
                facts,
                weight_bytes=weights.bytes if weights else 0.0,
                engine=inputs.engine,
                topology=topology,
            )
    return WorkloadEstimate(arch, inputs, memory, train, decode)


# -- fitting ----------------------------------------------------------------------------------------------


def usable_bytes(
    gpu: GpuSpec,
    *,
    memory_gib: float | None = None,
    ecc_enabled: bool | None = None,
    facts: Mapping[str, Any] | None = None,
) -> tuple[float, str]:
    """VRAM a process can use: the catalog's measured usable figure (what nvidia-smi reports as
    total), else a fraction of capacity. A GDDR card with optional ECC gives part of its memory to check
    bits while ECC is on (memory.yaml ``fit.ecc_reserved_fraction``, 1/16): a figure from capacity
    loses it when the rig says ECC is on; a measured figure is corrected only where it was measured in
    the other state (``usable_with_ecc_on``: an A10G's 23,028 MiB is already the ECC-on total, and is
    not cut again)."""
    if facts is None:
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("memory")
    fraction = float(facts["fit"]["usable_fallback_fraction"])
    share = round(1 / float(facts["fit"]["ecc_reserved_fraction"]))  # ECC on takes 1/share: 16
    if memory_gib is not None:
        value, why = memory_gib * fraction, f"{memory_gib:g} GiB (rig) x {fraction:g}"
    elif gpu.usable_gib_approx:
        value, why = (
            gpu.usable_gib_approx,
            f"{gpu.usable_gib_approx:g} GiB usable (catalog, as nvidia-smi reports)",
        )
    else:
        value, why = gpu.memory_gib * fraction, f"{gpu.memory_gib:g} GiB x {fraction:g} (catalog)"
    if gpu.ecc == "optional" and ecc_enabled is not None:
        measured = memory_gib is None and bool(gpu.usable_gib_approx)
        on_already = measured and gpu.usable_with_ecc_on is True
        if ecc_enabled and not on_already:
            value *= (share - 1) / share
            why += f" x {share - 1}/{share} (ECC on)"
        elif not ecc_enabled and on_already:
            value *= share / (share - 1)
            why += f" x {share}/{share - 1} (measured with ECC on; the rig has it off)"
    return value * GIB, why


def _vllm(estimate: MemoryEstimate) -> bool:
    return _serves_with_vllm(estimate.inputs)


def _serves_with_vllm(inputs: MemoryInputs) -> bool:
    return inputs.engine == "vllm" and not inputs.training


#: vLLM's memory: weights, the profile run's activations, its non-torch memory, the KV cache, the CUDA context,
#: NCCL's set-up (tp > 1) and the CUDA graphs. Which of them its gpu_memory_utilization share holds depends on
#: the release (specs/rules/memory.yaml ``vllm_versions``: :func:`vllm_release`); the rest lies beside it and
#: must fit in the part of the GPU the share leaves free.
VLLM_COMPONENTS = (
    "weights",
    "activations",
    "nccl_buffers",
    "kv_cache",
    "cuda_context",
    "nccl_init",
    "cuda_graphs",
)


def required_bytes(estimate: MemoryEstimate) -> float:
    """What must fit: the device total; for vLLM what its share holds (all but :func:`beside_budget`)."""
    if _vllm(estimate):
        beside = beside_budget(estimate)
        return sum(estimate.gib(name) * GIB for name in VLLM_COMPONENTS if name not in beside)
    return estimate.device


def beside_budget(estimate: MemoryEstimate) -> tuple[str, ...]:
    """The components not counted against the capacity: those vLLM's release keeps beside its share."""
    if not _vllm(estimate):
        return ()
    from rigcheck.core.estimate.memory.inference import vllm_release

    return tuple(vllm_release(estimate.inputs)["beside"])


def outside_pool(estimate: MemoryEstimate) -> float:
    """vLLM: the bytes beside its pool (:func:`beside_budget`), which must fit in the share it leaves free."""
    return sum(estimate.gib(name) * GIB for name in beside_budget(estimate))


def capacity_for(estimate: MemoryEstimate, usable: float, facts: Mapping[str, Any] | None = None) -> float:
    """What the workload may use: the usable VRAM, or vLLM's share of it (gpu_memory_utilization)."""
    return _capacity(estimate.inputs, usable, facts)


def _capacity(inputs: MemoryInputs, usable: float, facts: Mapping[str, Any] | None) -> float:
    """:func:`capacity_for`, which reads only the inputs."""
    if _serves_with_vllm(inputs):
        if facts is None:
            from rigcheck.core.catalog.facts import load_rule_facts

            facts = load_rule_facts("memory")
        utilization = inputs.gpu_memory_utilization or float(
            facts["inference"]["vllm_gpu_memory_utilization"]
        )
        return usable * utilization
    return usable


#: How far above the exact bound :func:`pass_ceiling` lies (relative): a few bytes on any GPU.
_ROUNDING = 1e-9


def pass_ceiling(inputs: MemoryInputs, usable: float, facts: Mapping[str, Any]) -> float | None:
    """Device bytes at or above which :func:`fit_verdict` cannot pass a training estimate of
    ``inputs`` on a GPU with ``usable`` bytes: what a search for what fits may stop short of
    (:func:`rigcheck.core.estimate.memory.estimate_memory_below`). A training estimate's need is its
    device total and its capacity the usable memory; a pass needs the high end of its range at or
    under the capacity, and no mechanism's spread takes the high end below the need
    (:func:`spread_of`): so need <= usable. None for inference, whose need and capacity are measured
    otherwise (vLLM: its pool's contents against its share of the GPU)."""
    if not inputs.training:
        return None
    return usable * (1 + _ROUNDING)


@dataclass(frozen=True)
class FitVerdict:
    """MEM001's decision for one GPU: ``severity`` is pass | warn | fail; ``low``/``high`` the range of
    the need, the sum of each mechanism's spread (``spread``: bytes below and above the need, by
    mechanism; specs/rules/memory.yaml ``spread``)."""

    severity: str
    need: float  # bytes the workload needs (device basis; vLLM: its pool's contents)
    capacity: float  # bytes it may use (usable VRAM, or vLLM's share of it)
    low: float
    high: float
    usable: float = 0.0
    outside: float = 0.0  # vLLM: beside the pool
    reason: str = ""
    spread: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def share(self) -> float:
        if self.outside and self.usable:
            return max(self.need / self.capacity, (self.capacity + self.outside) / self.usable)
        return self.need / self.capacity


def spread_of(estimate: MemoryEstimate, facts: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Each mechanism at work and how far it may take the need down and up (bytes; specs/rules/memory.yaml
    ``spread``, fitted on the dev measurements): what a framework keeps for the backward (a share of
    the saved activations, logits and loss), an inference engine's workspaces (GiB), the caching
    allocator's reserve (a share of the allocated peak, from measured reserved/allocated ratios) and
    the CUDA context (the measured range, unless the workload states it). Model states, counted from
    the shapes, spread nothing. vLLM's pool holds no allocator slack and its context lies outside."""
    spread, inputs = facts["spread"], estimate.inputs
    parts: dict[str, tuple[float, float]] = {}
    if inputs.training:
        saved = spread["saved_activations"]
        kept = sum(c.bytes for c in estimate.components if c.at_peak and c.name in saved["components"])
        parts["saved_activations"] = (
            kept * min(0.0, float(saved["low"])),
            kept * max(0.0, float(saved["high"])),
        )
    else:
        workspace = spread["engine_workspace"]
        parts["engine_workspace"] = (
            min(0.0, float(workspace["low_gib"])) * GIB,
            max(0.0, float(workspace["high_gib"])) * GIB,
        )
    if _vllm(estimate):
        return parts
    if estimate.component("allocator_overhead"):
        allocator, central = spread["allocator_reserve"], float(facts["runtime"]["allocator_overhead"])
        parts["allocator_reserve"] = (
            estimate.allocated * min(0.0, float(allocator["low"]) - central),
            estimate.allocated * max(0.0, float(allocator["high"]) - central),
        )
    if inputs.cuda_context_gib is None:
        context, value = spread["cuda_context"], estimate.gib("cuda_context")
        parts["cuda_context"] = (
            min(0.0, float(context["low_gib"]) - value) * GIB,
            max(0.0, float(context["high_gib"]) - value) * GIB,
        )
    return parts


def need_range(estimate: MemoryEstimate, need: float, facts: Mapping[str, Any]) -> tuple[float, float]:
    """The range the true need lies in: the need with every mechanism's spread (:func:`spread_of`)."""
    parts = spread_of(estimate, facts).values()
    return need + sum(low for low, _ in parts), need + sum(high for _, high in parts)


def fit_verdict(
    estimate: MemoryEstimate, usable: float, facts: Mapping[str, Any] | None = None
) -> FitVerdict:
    """Fail when the estimate does not fit the capacity, warn when the spread of the mechanisms at work
    reaches it, pass when the high end fits. vLLM must also fit its pool plus what lives beside it
    (context, CUDA graphs) in the whole GPU."""
    if facts is None:
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("memory")
    capacity = capacity_for(estimate, usable, facts)
    need = required_bytes(estimate)
    spread = spread_of(estimate, facts)
    low = need + sum(down for down, _ in spread.values())
    high = need + sum(up for _, up in spread.values())
    outside = outside_pool(estimate)
    reasons = []
    if need >= capacity:
        severity = "fail"
        reasons.append(
            "even the low end does not fit" if low > capacity else "the estimate reaches the capacity"
        )
    elif high > capacity:
        severity = "warn"
        widest = max(spread, key=lambda name: spread[name][1])
        reasons.append(f"the capacity lies within the estimate's range (widest: {widest.replace('_', ' ')})")
    else:
        severity = "pass"
    if outside and capacity + outside > usable:
        severity = "fail"
        reasons.append(
            f"vLLM's share ({capacity / GIB:.1f} GiB) and what it keeps beside it ({outside / GIB:.1f} GiB: context, "
            f"CUDA graphs) exceed the GPU's {usable / GIB:.1f} GiB"
        )
    reason = "; ".join(reasons)
    return FitVerdict(severity, need, capacity, low, high, usable, outside, reason, spread)


def passes(estimate: MemoryEstimate, usable: float, facts: Mapping[str, Any] | None = None) -> bool:
    """What "fits" means wherever something is searched for (the largest micro-batch, MEM001's fixes,
    the GPUs needed): :func:`fit_verdict` passes."""
    return fit_verdict(estimate, usable, facts).severity == "pass"


def largest_micro_batch(
    inputs: MemoryInputs,
    usable: float,
    facts: Mapping[str, Any] | None = None,
    *,
    limit: int = 4096,
) -> int:
    """The largest micro-batch (training) or concurrency (inference) that :func:`fit_verdict` passes
    on a GPU with ``usable`` bytes; 0 if none. MEM001 and ``estimate`` report this one number.

    Predicted from the need at 1 and 2, then verified (:func:`~rigcheck.core.estimate.largest.largest_fitting`):
    about four estimates where the need is affine in the value; where it is not (chunked loss, full
    recomputation) the walk still ends on the boundary, as the doubling search from 1 did (the answer is
    the same wherever fitting is monotone in the value: tests/test_estimate_components.py).
    """
    if facts is None:
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("memory")
    needs: dict[int, float] = {}

    def ok(value: int) -> bool:
        trial = inputs.changed(micro_batch=value) if inputs.training else inputs.changed(concurrency=value)
        estimate = estimate_memory(trial)
        needs[value] = required_bytes(estimate)
        return passes(estimate, usable, facts)

    return largest_fitting(ok, needs.__getitem__, 1, limit, _capacity(inputs, usable, facts)) or 0
