"""The workload spec: what will run on a rig (docs/design.md section 3).

Names follow the tools people already use: precision uses PyTorch Lightning's names
(``bf16-mixed``...), parallelism DeepSpeed's and PyTorch FSDP's, LoRA PEFT's.
"""

from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema

from rigcheck.core.spec.fields import (
    ApiVersion,
    Before,
    Choice,
    Number,
    Port,
    Quantity,
    SpecModel,
    StringMap,
    VersionString,
    Whole,
    choice_pattern,
    spec_name_field,
)

# Upper bounds no real workload reaches (issue 15): they keep every number finite downstream.
#: Transformer layers.
MAX_LAYERS = 100_000
#: Widths: hidden, FFN, head_dim, vocabulary (2**24; the largest published is 256k).
MAX_WIDTH = 2**24
#: Attention heads and key/value heads.
MAX_HEADS = 2**20
#: Tokens in one sequence: 2**30 (published contexts reach 10M).
MAX_TOKENS = 2**30
#: Parallel degrees, micro-batches, accumulation steps, concurrency: a million.
MAX_DEGREE = 1_000_000
#: Experts of a mixture-of-experts layer.
MAX_EXPERTS = 100_000

Degree = Annotated[int, Whole(le=MAX_DEGREE)]
Tokens = Annotated[int, Whole(le=MAX_TOKENS)]
#: Durations (run hours, checkpoint interval, restart time): a million hours.
MAX_HOURS = 1_000_000

Task = Annotated[
    str,
    Choice(
        "pretrain",
        "full_finetune",
        "lora",
        "qlora",
        "inference",
        aliases={
            "finetune": "full_finetune",
            "full-ft": "full_finetune",
            "sft": "full_finetune",
            "serving": "inference",
            "serve": "inference",
            "train": "pretrain",
        },
        description="pretrain | full_finetune | lora | qlora | inference",
    ),
]

Precision = Annotated[
    str,
    Choice(
        "32-true",
        "16-mixed",
        "bf16-mixed",
        "bf16-true",
        "16-true",
        "fp8-mixed",
        "64-true",
        aliases={
            "fp32": "32-true",
            "32": "32-true",
            "float32": "32-true",
            "fp16": "16-mixed",
            "16": "16-mixed",
            "amp": "16-mixed",
            "bf16": "bf16-mixed",
            "bfloat16": "bf16-mixed",
            "pure-bf16": "bf16-true",
            "fp16-true": "16-true",
            "fp8": "fp8-mixed",
            "fp64": "64-true",
            "64": "64-true",
            "float64": "64-true",
        },
        description="PyTorch Lightning names: 32-true (fp32), 16-mixed (fp16), bf16-mixed (bf16, fp32 master weights), "
        "bf16-true and 16-true (all 16-bit), fp8-mixed, 64-true (fp64).",
    ),
]

QuantizationName = Annotated[
    str,
    Choice(
        "none",
        "int8",
        "int4",
        "nf4",
        "nf4-dq",
        "fp4",
        "gptq",
        "awq",
        "fp8",
        "fp8-mlp",
        # llama.cpp's GGUF types: bits per weight of the whole file (specs/rules/memory.yaml quantization_bits)
        "q2_k",
        "q3_k_m",
        "q4_0",
        "q4_k_m",
        "q5_0",
        "q5_k_m",
        "q6_k",
        "q8_0",
        aliases={
            "8bit": "int8",
            "4bit": "nf4",
            "llm.int8": "int8",
            "bnb.nf4": "nf4",
            "bnb.nf4-dq": "nf4-dq",
            "bnb.fp4": "fp4",
            "q4_k": "q4_k_m",
            "q5_k": "q5_k_m",
        },
        description="A quantisation scheme: int8, int4, nf4, nf4-dq (NF4 with its constants quantised too, "
        "bnb_4bit_use_double_quant; litgpt's bnb.nf4-dq), fp4, gptq, awq, fp8 (the linear layers), fp8-mlp (Meta's "
        "Llama 3.1 FP8 checkpoints: the MLP of every block but the first and the last), or a GGUF type "
        "(q4_0, q4_k_m, q8_0, ...: the whole file at its published bits per weight).",
    ),
]


class QuantizationBits(SpecModel):
    """Weights at a stated number of bits each (EXL2's bpw, a GGUF file's size x 8 / parameters)."""

    bits: Annotated[float, Number(gt=1, le=16)] = Field(
        description="Bits per weight, scales and zero points included."
    )
    applies_to: Annotated[str, Choice("all", "linear")] = Field(
        "all", description="all: every parameter (GGUF, EXL2 report it so); linear: the block linears only."
    )


Quantization = QuantizationName

Optimizer = Annotated[
    str,
    Choice(
        "adamw",
        "adam",
        "adamw-8bit",
        "paged-adamw-8bit",
        "paged-adamw",
        "sgd",
        "sgd-momentum",
        "adafactor",
        "lion",
        "none",
        aliases={
            "adamw8bit": "adamw-8bit",
            "adam8bit": "adamw-8bit",
            "bnb-adamw-8bit": "adamw-8bit",
            "paged-adamw8bit": "paged-adamw-8bit",
            "paged-adamw-32bit": "paged-adamw",
            "momentum": "sgd-momentum",
        },
    ),
]

Attention = Annotated[
    str,
    Choice(
        "eager",
        "sdpa",
        "flash",
        aliases={
            "flash-attention": "flash",
            "flash-attention-2": "flash",
            "flash-attn": "flash",
            "fa2": "flash",
            "flash-attention-2.0": "flash",
            "math": "eager",
        },
        description="eager keeps the s x s attention scores; sdpa and flash do not.",
    ),
]


#: What ``activation_checkpointing:`` takes as text (any case, white space around), and what it means.
_CHECKPOINTING = {
    "full": "full",
    "true": "full",
    "selective": "selective",
    "none": "none",
    "false": "none",
    "off": "none",
    "on": "full",
}


def _checkpointing(value: object) -> object:
    if value is True:
        return "full"
    if value is False or value is None:
        return "none"
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _CHECKPOINTING:
            return _CHECKPOINTING[lowered]
    raise ValueError(f"{value!r} is not one of true (full), false or 'selective'")


ActivationCheckpointing = Annotated[
    Literal["none", "full", "selective"],
    Before(_checkpointing),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": ["boolean", "null"]},
                {"type": "string", "pattern": choice_pattern(_CHECKPOINTING)},
            ],
            "examples": [False, True, "selective"],
            "description": "false, true (= full) or selective.",
        }
    ),
]


class Moe(SpecModel):
    """Mixture-of-experts layers."""

    experts: Annotated[int, Whole(ge=2, le=MAX_EXPERTS)] = Field(description="Experts in each MoE layer.")
    top_k: Annotated[int, Whole(le=MAX_EXPERTS)] = Field(description="Experts each token is routed to.")
    expert_ffn: Annotated[int, Whole(le=MAX_WIDTH)] | None = Field(
        None, description="FFN width of one expert (default: model.ffn)."
    )
    shared_experts: Annotated[int, Whole(ge=0, le=MAX_EXPERTS)] = Field(
        0, description="Experts every token goes through (DeepSeek's shared experts)."
    )


class ModelSpec(SpecModel):
    """The model: a preset, explicit architecture numbers, a Hugging Face config.json on disk, or a
    Hugging Face model id whose config is in the local cache."""

    preset: str | None = Field(None, description="A preset name: llama-3-8b, gpt2-124m, qwen-1.8b, ...")
    name: str | None = Field(None, description="A name for the model.")
    hf_config: str | None = Field(
        None, description="Path to a Hugging Face config.json (read without transformers)."
    )
    hf: str | None = Field(
        None,
        description="A Hugging Face model id, org/name: its config.json is read from the local Hugging Face "
        "cache (HF_HUB_CACHE, HF_HOME); one not cached is fetched (the config alone) by estimate and plan "
        "unless --offline, by check and lint only with --allow-network.",
    )
    revision: str | None = Field(
        None, description="The hub revision of `hf` (a branch, tag or commit; main when unset)."
    )
    params_b: Annotated[float, Number(gt=0, le=1e6)] | None = Field(None, description="Parameters, billions.")
    layers: Annotated[int, Whole(le=MAX_LAYERS)] | None = Field(None, description="Transformer layers.")
    hidden: Annotated[int, Whole(le=MAX_WIDTH)] | None = Field(None, description="Hidden size (d_model).")
    heads: Annotated[int, Whole(le=MAX_HEADS)] | None = Field(None, description="Attention heads.")
    kv_heads: Annotated[int, Whole(le=MAX_HEADS)] | None = Field(
        None, description="Key/value heads (grouped-query attention)."
    )
    head_dim: Annotated[int, Whole(le=MAX_WIDTH)] | None = Field(
        None, description="Width of one attention head (default hidden / heads)."
    )
    ffn: Annotated[int, Whole(le=MAX_WIDTH)] | None = Field(None, description="MLP intermediate size.")
    vocab: Annotated[int, Whole(le=MAX_WIDTH)] | None = Field(None, description="Vocabulary size.")
    max_position: Tokens | None = Field(
        None, description="Longest sequence the model takes (max_position_embeddings)."
    )
    mlp: (
        Annotated[
            str, Choice("swiglu", "geglu", "gelu", "relu", aliases={"silu": "swiglu", "gated-silu": "swiglu"})
        ]
        | None
    ) = Field(None, description="MLP kind: swiglu and geglu (gated, three matrices), gelu or relu (two).")
    tied_embeddings: bool | None = Field(
        None, description="The output head shares the input embedding's weights."
    )
    moe: Moe | None = None
    architecture: Annotated[str, Choice("decoder", "encoder", "encoder-decoder")] | None = Field(
        None, description="decoder (GPT, Llama), encoder (BERT) or encoder-decoder (T5)."
    )
    family: (
        Annotated[
            str,
            Choice(
                "llama",
                "mixtral",
                "gpt2",
                "gpt_bigcode",
                "qwen1",
                "falcon",
                "chatglm",
                "opt",
                "bert",
                "phi",
                "t5",
                description="Module naming for LoRA targets (llama: q_proj ... down_proj; gpt2: c_attn, c_proj, "
                "c_fc; ...).",
            ),
        ]
        | None
    ) = None
    norm: Annotated[str, Choice("rmsnorm", "layernorm")] | None = Field(
        None, description="Normalisation layers: rmsnorm or layernorm."
    )
    head: (
        Annotated[
            str,
            Choice(
                "lm",
                "classification",
                description="lm: logits over the vocabulary; classification: a few labels.",
            ),
        ]
        | None
    ) = None
    dropout: bool | None = Field(None, description="The model trains with dropout (GPT-2, BERT, OPT do).")


class Batch(SpecModel):
    """Sequences per step: the micro-batch of each GPU, accumulation and length."""

    micro: Degree = Field(description="Micro-batch per GPU (sequences).")
    grad_accum: Degree = Field(1, description="Gradient accumulation steps.")
    seq_len: Tokens | None = Field(None, description="Tokens per sequence.")


#: A DeepSpeed bucket size: elements, or "auto" (the Hugging Face Trainer and accelerate size it from the
#: model's hidden width; specs/rules/memory.yaml deepspeed_zero3).
BucketSize = Annotated[float, Number(ge=0, le=1e13)] | Literal["auto"]


class DeepSpeedZero(SpecModel):
    """The ``zero_optimization`` settings of a DeepSpeed config that size its GPU buffers (stage 3) and
    decide whether its gradient reduction overlaps the backward."""

    reduce_bucket_size: BucketSize | None = Field(
        None,
        description="Elements of the gradient bucket ZeRO-3 keeps on the GPU (16-bit): a number or auto. "
        "Unset: the framework's (auto for the Hugging Face Trainer and frameworks on it), else DeepSpeed's 5e8.",
    )
    stage3_prefetch_bucket_size: BucketSize | None = Field(
        None,
        description="Elements of parameters ZeRO-3 gathers ahead of the module that needs them: a number or auto. "
        "Unset: the framework's, else DeepSpeed's 5e7.",
    )
    stage3_max_live_parameters: Annotated[float, Number(ge=0, le=1e13)] | None = Field(
        None,
        description="Most gathered parameter elements resident at once (bounds prefetching). Unset: 1e9.",
    )
    overlap_comm: bool | None = Field(
        None,
        description="Overlap the gradient reduction with the backward. Unset: DeepSpeed's default, true for "
        "ZeRO-3 and false for ZeRO-1 and 2.",
    )


class Parallelism(SpecModel):
    """Data, tensor, pipeline, sequence and expert parallelism; ZeRO / FSDP sharding and offload."""

    dp: Degree = Field(1, description="Data-parallel replicas.")
    tp: Degree = Field(1, description="Tensor-parallel degree.")
    pp: Degree = Field(1, description="Pipeline stages.")
    virtual_stages: Degree = Field(
        1,
        description="Model chunks per pipeline stage in an interleaved 1F1B schedule (Megatron's virtual "
        "pipeline size, torchtitan's Interleaved1F1B): the bubble shrinks by this factor, the sends grow by it.",
    )
    sp: bool = Field(False, description="Sequence parallelism (Megatron-style, with tp).")
    cp: Degree = Field(1, description="Context-parallel degree.")
    ep: Degree = Field(1, description="Expert-parallel degree.")
    zero: Literal[0, 1, 2, 3] = Field(0, description="DeepSpeed ZeRO stage.")
    fsdp: Annotated[str, Choice("full_shard", "hybrid_shard", "shard_grad_op", "no_shard")] | None = Field(
        None, description="PyTorch FSDP sharding strategy."
    )
    fsdp_version: Literal[1, 2] | None = Field(
        None,
        description=(
            "PyTorch FSDP's API: 1 (FullyShardedDataParallel's flat parameters: accelerate's default, "
            "Lightning's FSDPStrategy) or 2 (fully_shard, per-parameter: torchtune, torchtitan). Unset: 2."
        ),
    )
    offload: Annotated[str, Choice("none", "cpu", "nvme")] = Field(
        "none", description="Where ZeRO or FSDP offloads the optimizer states: none, cpu or nvme."
    )
    offload_params: bool = Field(
        False, description="Offload parameters too (ZeRO-3 / FSDP), not only optimizer states."
    )
    deepspeed: DeepSpeedZero | None = Field(
        None,
        description="DeepSpeed's zero_optimization settings: ZeRO-3's buffers and whether reductions overlap.",
    )

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp * self.cp


class Lora(SpecModel):
    """LoRA adapters (PEFT's LoraConfig)."""

    rank: Annotated[int, Whole(le=MAX_HEADS)] = Field(description="Adapter rank r.")
    alpha: Annotated[float, Number(ge=-1e6, le=1e6)] | None = Field(
        None, description="Scaling alpha (PEFT lora_alpha)."
    )
    dropout: Annotated[float, Number(ge=0, lt=1)] | None = Field(
        None, description="Adapter dropout (PEFT lora_dropout)."
    )
    targets: list[str] | None = Field(
        None, description="Module names adapters attach to: q_proj, v_proj, ..."
    )
    modules_to_save: list[str] | None = Field(
        None, description="Modules trained in full beside the adapters (PEFT modules_to_save)."
    )
    base_dtype: Annotated[str, Choice("bf16", "fp16", "fp32")] | None = Field(
        None,
        description="dtype of the frozen base weights (LoRA): 16-bit by default, fp32 where the model is loaded "
        "without torch_dtype and trained under autocast or FSDP mixed precision.",
    )


class Qlora(SpecModel):
    """QLoRA's 4-bit frozen base (bitsandbytes' BitsAndBytesConfig)."""

    quant: Annotated[str, Choice("nf4", "fp4")] = Field(
        "nf4", description="4-bit type of the base weights (bnb_4bit_quant_type)."
    )
    double_quant: bool = Field(
        True, description="The quantisation constants are quantised too (bnb_4bit_use_double_quant)."
    )
    compute_dtype: Annotated[str, Choice("bf16", "fp16", "fp32")] = Field(
        "bf16", description="dtype the 4-bit weights are computed in (bnb_4bit_compute_dtype)."
    )
    kbit_training: bool = Field(
        False,
        description="The base's 16-bit parameters (embeddings, norms, head) cast to fp32, as PEFT's "
        "prepare_model_for_kbit_training does.",
    )


class Data(SpecModel):
    """The data set and how it is read."""

    samples: Annotated[float, Number(ge=0, le=1e15)] | None = Field(
        None, description="Training samples (or requests) in the data set."
    )
    tokens: Annotated[float, Number(ge=0, le=1e18)] | None = Field(
        None, description="Tokens in the data set (or to train on)."
    )
    bytes_per_token: Annotated[float, Number(gt=0, le=1e6)] | None = Field(
        None, description="2 for uint16 token files, 4 for uint32."
    )
    bytes_per_sample: Annotated[float, Quantity("bytes", "B", le=1e12)] | None = Field(
        None, description="Bytes of one sample on disk."
    )
    size_gb: Annotated[float, Quantity("bytes", "GB", le=1e9)] | None = Field(
        None, description="Size of the data set on disk, GB."
    )
    access: Annotated[str, Choice("random", "sequential", "streaming")] | None = Field(
        None, description="How the data loader reads: random, sequential or streaming."
    )
    num_workers: Annotated[int, Whole(ge=0, le=100_000)] | None = Field(
        None, description="Data-loader workers per GPU process."
    )
    format: str | None = Field(None, description="File format: jsonl, parquet, arrow, ...")
    storage: str | None = Field(None, description="Name of the rig storage device the data is read from.")
    epochs: Annotated[float, Number(gt=0, le=1e6)] | None = Field(
        None, description="Passes over the data set."
    )


class Checkpoint(SpecModel):
    """What a checkpoint writes, how many are kept, and where."""

    kind: Annotated[str, Choice("full", "weights-only", "sharded")] = Field(
        "full",
        description="full (weights and optimizer states), weights-only, or sharded (each rank writes its shard).",
    )
    keep: Annotated[int, Whole(le=1_000_000)] | None = Field(None, description="Checkpoints kept on disk.")
    storage: str | None = Field(
        None, description="Name of the rig storage device checkpoints are written to."
    )
    asynchronous: bool | None = Field(
        None, description="Checkpoints are written in the background while training goes on.", alias="async"
    )


class Run(SpecModel):
    """How long the job runs, how it checkpoints, and how often it may be interrupted."""

    hours: Annotated[float, Quantity("duration", "h", le=MAX_HOURS)] | None = Field(
        None, description="Planned wall-clock duration, hours."
    )
    checkpoint_interval_min: (
        Annotated[float, Quantity("duration", "min", gt=0, ge=None, le=MAX_HOURS * 60)] | None
    ) = Field(None, description="Minutes between checkpoints.")
    checkpoint: Checkpoint | None = None
    needs_fp64: bool | None = Field(
        None, description="The job does double-precision math (solvers, simulation)."
    )
    failure_prior: Annotated[
        str, Choice("default", "pessimistic", aliases={"llama3": "default", "opt": "pessimistic"})
    ] = Field(
        "default",
        description="Interruptions per GPU-hour to plan for: default (Llama 3 on H100s, 1.97e-5) or pessimistic "
        "(OPT-175B on a new cloud cluster, 8.1e-5).",
    )
    failure_rate_per_gpu_hour: Annotated[float, Number(gt=0, lt=1)] | None = Field(
        None, description="Your own fleet's interruptions per GPU-hour; replaces failure_prior."
    )
    restart_minutes: Annotated[float, Quantity("duration", "min", le=MAX_HOURS * 60)] | None = Field(
        None, description="Time from a failure to training again (detect, reschedule, load the checkpoint)."
    )


class Inference(SpecModel):
    """Serving: the engine, the concurrency, the lengths and the targets."""

    engine: (
        Annotated[
            str,
            Choice(
                "vllm",
                "tgi",
                "sglang",
                "trt-llm",
                "llama.cpp",
                "transformers",
                "ollama",
                "gpt-fast",
                "exllama",
                "mlc",
                "lmdeploy",
                "other",
                aliases={
                    "turbomind": "lmdeploy",
                    "tensorrt-llm": "trt-llm",
                    "hf": "transformers",
                    "exllamav2": "exllama",
                    "exl2": "exllama",
                    "mlc-llm": "mlc",
                    "llamacpp": "llama.cpp",
                },
            ),
        ]
        | None
    ) = Field(None, description="The serving engine.")
    concurrency: Degree = Field(1, description="Sequences served at once.")
    context_len: Tokens | None = Field(None, description="Tokens per sequence (prompt + output).")
    prompt_len: Tokens | None = Field(None, description="Prompt tokens of a request.")
    output_len: Tokens | None = Field(None, description="Output tokens of a request.")
    kv_cache_dtype: (
        Annotated[str, Choice("fp32", "bf16", "fp16", "fp8", "int8", "int4", aliases={"auto": "bf16"})] | None
    ) = Field(None, description="dtype of the KV cache (auto: the model's 16-bit type).")
    gpu_memory_utilization: Annotated[float, Number(gt=0, le=1)] | None = Field(
        None, description="vLLM's share of VRAM to use."
    )
    max_num_seqs: Degree | None = Field(
        None,
        description="vLLM/SGLang: sequences scheduled at once (sets the profile run's sampled logits).",
    )
    max_num_batched_tokens: Tokens | None = Field(
        None,
        description="vLLM: tokens in one scheduled batch (the size of its memory-profiling forward pass).",
    )
    target_tokens_per_s_per_seq: Annotated[float, Number(gt=0, le=1e9)] | None = Field(
        None, description="Output tokens/s each sequence should get."
    )
    target_tokens_per_s: Annotated[float, Number(gt=0, le=1e12)] | None = Field(
        None, description="Aggregate output tokens/s of all sequences at this concurrency."
    )
    target_ttft_ms: Annotated[float, Number(gt=0, le=1e9)] | None = Field(
        None, description="Time to the first token to meet, ms."
    )


class Versions(SpecModel):
    """Versions of the libraries whose memory behaviour changed between releases (unset: the newest
    behaviour; for vLLM the release the estimate was fitted on, 0.19)."""

    bitsandbytes: VersionString | None = Field(
        None,
        description="bitsandbytes.__version__: before 0.43.2 its 4-bit layers kept their 16-bit input for the "
        "backward (QLoRA); before 0.45.0 its 8-bit layers also kept an int8 copy of it.",
    )
    transformers: VersionString | None = Field(
        None,
        description="transformers.__version__: before 4.49.0 its causal-LM loss copied the shifted fp32 logits "
        "(in the model before 4.46.0, in ForCausalLMLoss from 4.46.0).",
    )
    vllm: VersionString | None = Field(
        None,
        description="vllm.__version__: what vLLM counts inside its gpu_memory_utilization share changed between "
        "releases (the CUDA context inside in 0.6.4 and 0.8.0-0.9.0; CUDA graphs inside from 0.20), and V0 "
        "(before 0.8) profiled a different forward. Unset: 0.9.1-0.19's accounting.",
    )


class Launcher(SpecModel):
    """How the processes are started."""

    kind: Annotated[
        str, Choice("torchrun", "deepspeed", "accelerate", "slurm", "mpirun", "python", "ray", "other")
    ] = Field(description="The launcher.")
    master_port: Port | None = Field(
        None, description="Rendezvous port (torchrun --master_port, MASTER_PORT)."
    )
    rdzv_port: Port | None = Field(
        None, description="Port of the rendezvous endpoint (torchrun --rdzv_endpoint)."
    )
    rdzv_backend: Annotated[str, Choice("c10d", "static", "etcd", "etcd-v2")] | None = Field(
        None, description="torchrun --rdzv_backend."
    )
    nproc_per_node: Annotated[int, Whole(le=1024)] | None = Field(
        None, description="Processes per node (torchrun --nproc_per_node)."
    )


class Workload(SpecModel):
    """A training or inference job."""

    api_version: ApiVersion = Field(description="Always rigcheck/v1.", alias="apiVersion")
    kind: Literal["Workload"] = Field(description="Workload.")
    name: str = spec_name_field("workload")
    description: str | None = Field(None, description="Free text about the workload.")
    model: ModelSpec
    task: Task
    precision: Precision = "bf16-mixed"
    quantization: QuantizationName | QuantizationBits | None = None
    optimizer: Optimizer | None = Field(
        None,
        description="The optimizer; its states set the memory per trained parameter (adamw: 8 bytes, adamw-8bit: 2).",
    )
    attention: Attention | None = None
    activation_checkpointing: ActivationCheckpointing = Field(
        "none",
        description="Recompute activations in backward instead of keeping them: false, true (= full) or selective.",
    )
    loss: Annotated[
        str,
        Choice(
            "standard",
            "chunked",
            "fused",
            aliases={
                "liger": "fused",
                "cut-cross-entropy": "fused",
                "cce": "fused",
                "linear-cross-entropy": "chunked",
            },
            description="standard: full logits upcast to fp32 (transformers); chunked: fp32 per chunk (torchtune, "
            "litgpt); fused: the logits never materialised (Liger, cut-cross-entropy, unsloth).",
        ),
    ] = "standard"
    batch: Batch | None = None
    parallelism: Parallelism = Field(default_factory=Parallelism)
    lora: Lora | None = None
    qlora: Qlora | None = None
    data: Data | None = None
    run: Run | None = None
    inference: Inference | None = None
    launcher: Launcher | None = None
    versions: Versions | None = None
    framework: (
        Annotated[
            str,
            Choice(
                "transformers",
                "torchtune",
                "litgpt",
                "lightning",
                "deepspeed",
                "megatron",
                "llama-factory",
                "axolotl",
                "unsloth",
                "nanogpt",
                "torchtitan",
                "llm-foundry",
                "llm.c",
                "pytorch",
                "other",
                aliases={
                    "llmfoundry": "llm-foundry",
                    "composer": "llm-foundry",
                    "llmc": "llm.c",
                    "hf": "transformers",
                    "trl": "transformers",
                    "peft": "transformers",
                    "accelerate": "transformers",
                    "llamafactory": "llama-factory",
                    "nemo": "megatron",
                    "megatron-lm": "megatron",
                },
                description="The training code: it decides details the estimate follows (QLoRA through bitsandbytes "
                "keeps linear inputs, torchtune's torchao NF4 does not; torchtune's AdamW is fused).",
            ),
        ]
        | None
    ) = None
    optimizer_in_backward: bool = Field(
        False,
        description="Step the optimizer inside backward (torchtune "
        "optimizer_in_bwd): gradients are never all held at once.",
    )
    optimizer_implementation: (
        Annotated[str, Choice("foreach", "fused", "for-loop", aliases={"forloop": "for-loop"})] | None
    ) = Field(
        None,
        description="torch.optim's implementation: foreach (temporaries the size of the states it updates), "
        "fused (none; HF Trainer's adamw_torch_fused) or for-loop. Default: what the framework uses.",
    )
    activation_offloading: bool | None = Field(
        None,
        description="Saved activations wait in host memory until backward needs them (torchtune "
        "enable_activation_offloading, unsloth's offloaded checkpointing). Default: what the framework does.",
    )
    runs_on: list[str] | None = Field(None, description="Rig files or names this workload is planned for.")
    labels: StringMap | None = Field(None, description="Free-form labels (name: text).")
