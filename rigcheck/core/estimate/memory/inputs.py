"""What the memory estimator reads: one workload's settings, resolved (``rigcheck.core.estimate.estimate.memory_inputs``
builds them from a workload spec, applying the framework's defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from rigcheck.core.estimate.architecture import Architecture

MIXED = ("16-mixed", "bf16-mixed", "fp8-mixed")
TRUE_16 = ("bf16-true", "16-true")
#: FSDP strategies that keep flat parameters with gradients (no_shard is DDP's behaviour).
FLAT_SHARDING = ("full_shard", "hybrid_shard", "shard_grad_op")


@dataclass(frozen=True)
class MemoryInputs:
    """Everything the estimator reads."""

    arch: Architecture
    task: str = "full_finetune"
    precision: str = "bf16-mixed"
    optimizer: str | None = "adamw"
    quantization: str | None = None
    quantization_bits: float | None = (
        None  # bits per weight stated by the workload (quantization: {bits: ...})
    )
    quantization_scope: str = "linear"  # linear | all: what those bits, or the scheme's, apply to
    micro_batch: int = 1
    seq_len: int = 2048
    grad_accum: int = 1
    activation_checkpointing: str = "none"
    activation_offloading: bool = False
    attention: str = "sdpa"
    loss: str = "standard"  # standard | chunked | fused
    logits_upcast: bool = True  # the loss casts the logits to fp32 itself (transformers' logits.float())
    # where transformers' standard loss copies the shifted fp32 logits: "" (4.49 on: it shifts the labels), "loss"
    # (4.46-4.48: ForCausalLMLoss, beside the model's 16-bit logits), "model" (before 4.46): memory.yaml transformers
    shifted_logits_copy: str = ""
    dp: int = 1
    tp: int = 1
    pp: int = 1
    virtual_stages: int = 1  # interleaved 1F1B: model chunks per stage
    stage: int | None = None  # the pipeline stage (0 = the first) when pp > 1; None: every stage's worst part
    sp: bool = False
    cp: int = 1
    ep: int = 1
    zero: int = 0
    fsdp: str | None = None
    fsdp_version: int = 2  # 1: FullyShardedDataParallel's flat parameters; 2: fully_shard
    fsdp_lora_units: str = (
        "shared"  # FSDP1: adapters in their block's flat parameter, or in units of their own
    )
    offload: str = "none"
    offload_params: bool = False
    # DeepSpeed's zero_optimization bucket sizes (elements, or "auto"; None: DeepSpeed's default)
    deepspeed_reduce_bucket: float | str | None = None
    deepspeed_prefetch_bucket: float | str | None = None
    deepspeed_max_live: float | None = None
    deepspeed_overlap_comm: bool | None = None  # None: DeepSpeed's default (true for ZeRO-3 only)
    param_gather_overlap: bool = False  # a distributed optimizer's all-gather overlaps the next forward
    optimizer_in_backward: bool = False
    lora_rank: int = 0
    lora_targets: tuple[str, ...] = ()
    lora_dropout: float = 0.0
    lora_base_dtype: str | None = None  # bf16 | fp16 | fp32; None: 16-bit (fp32 under 32-true)
    modules_to_save: tuple[str, ...] = ()
    qlora_quant: str = "nf4"
    qlora_double_quant: bool = True
    concurrency: int = 1
    context_len: int | None = None
    prompt_len: int | None = None
    output_len: int | None = None
    kv_cache_dtype: str | None = None
    engine: str | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    vllm_version: tuple[int, ...] | None = (
        None  # versions.vllm (None: specs/rules/memory.yaml vllm_unset_version)
    )
    gpus_per_node: int = 8
    cuda_context_gib: float | None = None
    framework: str | None = None
    optimizer_implementation: str = "foreach"  # foreach | fused | for-loop (torch.optim's three)
    qlora_backend: str = "bitsandbytes"  # bitsandbytes | torchao (torchtune's NF4Tensor)
    # bitsandbytes' quantised linears keep their 16-bit input for the backward (int8; 4-bit before 0.43.2),
    # and its 8-bit ones an int8 transposed copy of it too (before 0.45.0): memory.yaml bitsandbytes
    quantized_linears_keep_input: bool = False
    int8_keeps_transposed: bool = False
    kbit_upcast: bool = False  # PEFT prepare_model_for_kbit_training: 16-bit params not quantised -> fp32
    implied: tuple[str, ...] = field(
        default=()
    )  # settings the framework's defaults gave (the estimate's notes)
    assumed: tuple[str, ...] = field(
        default=()
    )  # settings rigcheck assumed, the workload being silent (MEM004)

    def changed(self, **changes: Any) -> MemoryInputs:
        """A copy with ``changes``: ``dataclasses.replace`` without its per-field work (22 us, a fifth of
        MEM001's time in lint, which tries many changed inputs). The same copy, because the class has
        no ``__post_init__`` and every field is set by ``__init__`` (tests/test_estimate_components.py)."""
        unknown = changes.keys() - _FIELD_NAMES
        if unknown:
            raise TypeError(f"MemoryInputs has no field(s) {', '.join(sorted(unknown))}")
        copy = object.__new__(MemoryInputs)
        values = copy.__dict__
        values.update(self.__dict__)
        values.update(changes)
        return copy

    @property
    def fused_optimizer(self) -> bool:
        """A fused (or for-loop) optimizer step keeps no foreach temporaries (torch.optim docs)."""
        return self.optimizer_implementation != "foreach"

    @property
    def world(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def training(self) -> bool:
        return self.task != "inference"

    @property
    def frozen_base(self) -> bool:
        return self.task in ("lora", "qlora")

    @property
    def sharded_params(self) -> bool:
        """ZeRO-3 and FSDP full/hybrid shard split every parameter, trainable or frozen."""
        return self.zero >= 3 or self.fsdp in ("full_shard", "hybrid_shard")

    @property
    def sharded_grads(self) -> bool:
        return self.zero >= 2 or self.fsdp in ("full_shard", "hybrid_shard", "shard_grad_op")

    @property
    def sharded(self) -> bool:
        return bool(self.zero) or self.fsdp in ("full_shard", "hybrid_shard", "shard_grad_op")

    @property
    def holds_embedding(self) -> bool:
        """This GPU's pipeline stage holds the token embedding (the first; every stage when pp is 1)."""
        return self.pp == 1 or self.stage in (None, 0)

    @property
    def holds_head(self) -> bool:
        """This GPU's pipeline stage holds the final norm, the head, its logits and the loss (the last)."""
        return self.pp == 1 or self.stage in (None, self.pp - 1)

    @property
    def micro_batches_in_flight(self) -> int:
        """Micro-batches whose activations a pipeline stage holds at once under 1F1B: stage r runs
        p - r - 1 warm-up forwards and one more before its first backward (Megatron-LM
        ``forward_backward_pipelining_without_interleaving``: ``num_warmup_microbatches =
        pipeline_parallel_size - pipeline_parallel_rank - 1``), at most the micro-batches of a step.
        The first stage holds the most (stage None)."""
        if self.pp == 1:
            return 1
        rank = self.stage or 0
        return max(1, min(self.pp - rank, self.grad_accum))

    @property
    def flat_parameter_gradients(self) -> bool:
        """FSDP1 (flat parameters) with LoRA: each block is one flat parameter that mixes frozen
        weights and adapters, and autograd gives it a gradient of its whole size (torch 2.1
        ``flat_param.py``: the flat parameter requires grad when any of its tensors does;
        ``fully_sharded_data_parallel.py``: mixing frozen and trainable parameters makes the gradient
        memory "equivalent to not freezing those parameters"). Not where the adapters get units of their
        own (the transformers Trainer wraps them with peft's ``fsdp_auto_wrap_policy``)."""
        return (
            self.fsdp_version == 1
            and self.fsdp_lora_units == "shared"
            and self.task == "lora"
            and self.fsdp in FLAT_SHARDING
            and not self.zero
        )

    @property
    def megatron(self) -> bool:
        """Megatron-style blocks (Korthikanti et al.'s accounting, TP and SP splits)."""
        return self.framework == "megatron"


_FIELD_NAMES = frozenset(item.name for item in fields(MemoryInputs))
