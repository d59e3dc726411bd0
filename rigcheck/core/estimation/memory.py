"""Per-GPU memory of training and inference, as named components.

Structure (research/vram.md section 7)::

    peak = model states (weights, 16-bit copies, gradients, master weights, optimizer states, adapters)
         + activations (per layer, from the shapes; checkpointing, attention kernel, TP/SP/PP/CP)
         + logits and loss + transients (ZeRO-3 gathers, QLoRA dequantisation)
    or, if larger, model states + the optimizer step's temporaries (activations are freed by then)

    allocated = peak                          what torch.cuda.max_memory_allocated sees
    reserved  = allocated x (1 + allocator overhead)     torch.cuda.max_memory_reserved
    device    = reserved + CUDA context (+ NCCL buffers)  what nvidia-smi shows

Sources of each formula are in the docstrings below; the constants are in
``specs/rules/memory.yaml``.

Activations follow Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
Models" (arXiv:2205.05198): a GPT block with dropout keeps ``sbh(34 + 5as/h)`` bytes per layer in
16-bit. That total is rebuilt here term by term, so that each term can follow the model: grouped-query
K/V, gated MLPs of width ``f``, no dropout, the s^2 terms only with eager attention, and the fp32
inputs that RMSNorm implementations (and autocast's fp32 residual stream) keep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rigcheck.core.estimation.architecture import Architecture

GIB = 2**30
MIXED = ("16-mixed", "bf16-mixed", "fp8-mixed")
TRUE_16 = ("bf16-true", "16-true")


@dataclass(frozen=True)
class Component:
    """One named part of the per-GPU memory, with the formula that gave it."""

    name: str
    bytes: float
    formula: str
    kind: str  # state | activation | transient | runtime
    pageable: bool = False

    @property
    def gib(self) -> float:
        return self.bytes / GIB


@dataclass(frozen=True)
class MemoryInputs:
    """Everything the estimator reads; built from a workload by ``inputs_from_workload``."""

    arch: Architecture
    task: str = "full_finetune"
    precision: str = "bf16-mixed"
    optimizer: str | None = "adamw"
    quantization: str | None = None
    micro_batch: int = 1
    seq_len: int = 2048
    grad_accum: int = 1
    activation_checkpointing: str = "none"
    attention: str = "sdpa"
    loss: str = "standard"
    dp: int = 1
    tp: int = 1
    pp: int = 1
    sp: bool = False
    cp: int = 1
    ep: int = 1
    zero: int = 0
    fsdp: str | None = None
    offload: str = "none"
    offload_params: bool = False
    optimizer_in_backward: bool = False
    lora_rank: int = 0
    lora_targets: tuple[str, ...] = ()
    lora_dropout: float = 0.0
    modules_to_save: tuple[str, ...] = ()
    qlora_quant: str = "nf4"
    qlora_double_quant: bool = True
    concurrency: int = 1
    context_len: int | None = None
    prompt_len: int | None = None
    kv_cache_dtype: str | None = None
    engine: str | None = None
    gpu_memory_utilization: float | None = None
    gpus_per_node: int = 8
    cuda_context_gib: float | None = None
    framework: str | None = None

    @property
    def saves_frozen_inputs(self) -> bool:
        """bitsandbytes' 4-bit matmul saves its input for backward even when the weight is frozen
        (bitsandbytes autograd/_functions.py MatMul4Bit: ``ctx.tensors = (A, B)``), so QLoRA through
        PEFT, litgpt, LLaMA-Factory, axolotl or unsloth keeps every linear input; torchtune's torchao
        NF4 linear saves only the weight."""
        return self.task == "qlora" and self.framework != "torchtune"

    @property
    def fused_optimizer(self) -> bool:
        """torchtune's recipes default to ``torch.optim.AdamW(fused=True)`` (no foreach temporaries)."""
        return self.framework == "torchtune"

    @property
    def world(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def training(self) -> bool:
        return self.task != "inference"

    @property
    def frozen_base(self) -> bool:
        return self.task in ("lora", "qlora")


@dataclass(frozen=True)
class MemoryEstimate:
    """The per-GPU breakdown and its three totals (bytes)."""

    components: tuple[Component, ...]
    allocated: float
    reserved: float
    device: float
    peak_phase: str
    inputs: MemoryInputs
    notes: tuple[str, ...] = field(default=())
    pool: float | None = None  # vLLM: the share of the card the engine claims

    def component(self, name: str) -> Component | None:
        return next((item for item in self.components if item.name == name), None)

    def gib(self, name: str) -> float:
        item = self.component(name)
        return item.gib if item else 0.0

    @property
    def allocated_gib(self) -> float:
        return self.allocated / GIB

    @property
    def reserved_gib(self) -> float:
        return self.reserved / GIB

    @property
    def device_gib(self) -> float:
        return self.device / GIB

    def total(self, basis: str) -> float:
        """Bytes on a measurement basis: allocated, reserved or device."""
        return {"allocated": self.allocated, "reserved": self.reserved, "device": self.device}[basis]

    def as_dict(self) -> dict[str, Any]:
        return {
            "components": {
                item.name: {
                    "gib": round(item.gib, 3),
                    "formula": item.formula,
                    "kind": item.kind,
                    **({"pageable": True} if item.pageable else {}),
                }
                for item in self.components
            },
            "allocated_gib": round(self.allocated_gib, 3),
            "reserved_gib": round(self.reserved_gib, 3),
            "device_gib": round(self.device_gib, 3),
            "peak_phase": self.peak_phase,
            **({"engine_pool_gib": round(self.pool / GIB, 3)} if self.pool else {}),
            "notes": list(self.notes),
        }


# -- the public entry point ---------------------------------------------------------------------------


def estimate_memory(inputs: MemoryInputs, facts: Mapping[str, Any] | None = None) -> MemoryEstimate:
    """Estimate one GPU's memory for a training or inference workload."""
    if facts is None:
        from rigcheck.core.facts import load_rule_facts

        facts = load_rule_facts("memory")
    if inputs.training:
        return _Training(inputs, facts).estimate()
    return _Inference(inputs, facts).estimate()


def fmt_bytes(value: float) -> str:
    return f"{value / GIB:.2f} GiB"


def _gb(params: float) -> str:
    return f"{params / 1e9:.3f}B"


class _Shards:
    """How the model is split: tensor and pipeline parallel shards, and ZeRO/FSDP sharding."""

    def __init__(self, inputs: MemoryInputs) -> None:
        arch = inputs.arch
        self.layers_local = math.ceil(arch.layers / inputs.pp)
        layer_share = self.layers_local / arch.layers
        experts_local = arch.experts / max(1, inputs.ep)
        mlp = arch.mlp_params_per_expert * experts_local + (
            arch.hidden * arch.experts if arch.experts > 1 else 0
        )
        per_layer = arch.attention_params + mlp + arch.norm_params
        cross = arch.decoder_layers * (arch.attention_params + arch.hidden)
        self.blocks = (arch.layers * per_layer + cross) * layer_share / inputs.tp
        embedding, head = arch.embedding_params / inputs.tp, arch.head_params / inputs.tp
        if inputs.pp == 1:
            self.outer = embedding + head + arch.hidden
        else:  # the worst stage: the first holds the embedding, the last the head (tied: both)
            self.outer = max(embedding, head if head else embedding) + arch.hidden
        self.params = self.blocks + self.outer
        experts_share = experts_local / arch.experts
        linear = arch.linear_params - arch.layers * arch.mlp_params_per_expert * arch.experts * (
            1 - experts_share
        )
        self.linear = linear * layer_share / inputs.tp
        self.shard = self._shard_count(inputs)

    @staticmethod
    def _shard_count(inputs: MemoryInputs) -> int:
        if inputs.fsdp == "hybrid_shard":
            return max(1, min(inputs.dp, inputs.gpus_per_node))
        if inputs.zero or inputs.fsdp in ("full_shard", "shard_grad_op"):
            return max(1, inputs.dp)
        return 1


# -- training ---------------------------------------------------------------------------------------


class _Training:
    def __init__(self, inputs: MemoryInputs, facts: Mapping[str, Any]) -> None:
        self.i = inputs
        self.arch = inputs.arch
        self.facts = facts
        self.shards = _Shards(inputs)
        self.notes: list[str] = list(inputs.arch.notes)
        self.components: list[Component] = []
        precision = inputs.precision
        self.fp32 = precision == "32-true"
        self.fp64 = precision == "64-true"
        self.mixed = precision in MIXED
        self.true16 = precision in TRUE_16
        self.sharded = bool(inputs.zero) or inputs.fsdp in ("full_shard", "hybrid_shard", "shard_grad_op")
        self.amp = self.mixed and not self.sharded  # torch.autocast with an fp32 model
        self.element = 8 if self.fp64 else 4 if self.fp32 else 2
        self.residual = 4 if (self.fp32 or self.amp) else self.element
        if self.fp64:
            self.residual = 8
        self.roles: tuple[str, ...] = ()
        if inputs.frozen_base:
            try:
                self.roles = self.arch.lora_roles(inputs.lora_targets)
            except ValueError as exc:
                raise ValueError(str(exc)) from None

    def add(self, name: str, value: float, formula: str, kind: str, pageable: bool = False) -> None:
        if value > 0 or name in ("weights",):
            self.components.append(Component(name, value, formula, kind, pageable))

    # -- model states -----------------------------------------------------------------------------

    def optimizer_bytes(self) -> float:
        """Optimizer bytes per trainable parameter (fp32 states; halved for 16-bit 'true' precision)."""
        table = self.facts["optimizer_states"]
        name = self.i.optimizer or "adamw"
        if name == "adafactor":
            return self._adafactor_bytes()
        value = float(table[name])
        if self.true16 and name not in ("adamw-8bit", "paged-adamw-8bit"):
            value /= 2
        if self.fp64:
            value *= 2
        return value

    def _adafactor_bytes(self) -> float:
        """Adafactor keeps a row and a column vector per matrix (Shazeer & Stern 2018): 4(r + c) bytes."""
        shapes = self.arch.linear_shapes()
        per_layer_vectors = sum(d_in + d_out for d_in, d_out in shapes.values())
        matrices = self.arch.layers * per_layer_vectors + 2 * (self.arch.vocab + self.arch.hidden)
        return 4 * matrices / max(1, self.arch.params)

    def model_states(self) -> float:
        i, s = self.i, self.shards
        if i.frozen_base:
            return self._frozen_states()
        states = self.facts["model_states"]
        opt = self.optimizer_bytes()
        params, n = s.params, s.shard
        paged = (i.optimizer or "").startswith("paged")
        offloaded = i.offload in ("cpu", "nvme")
        where = f"{_gb(params)} params on this GPU"
        total = 0.0
        if self.fp32 or self.fp64 or self.true16:
            weight = 8 if self.fp64 else 4 if self.fp32 else 2
            w_div = n if (i.zero >= 3 or i.fsdp in ("full_shard", "hybrid_shard")) else 1
            g_div = n if (i.zero >= 2 or i.fsdp in ("full_shard", "hybrid_shard", "shard_grad_op")) else 1
            o_div = n if self.sharded else 1
            total += self._add_weights(params * weight / w_div, f"{where} x {weight} B" + _div(w_div))
            if not i.optimizer_in_backward:
                total += self._add_grads(params * weight / g_div, f"{where} x {weight} B" + _div(g_div))
            if not offloaded:
                total += self._add_optimizer(
                    params * opt / o_div, f"{where} x {opt:g} B ({i.optimizer})" + _div(o_div), paged
                )
        elif self.amp:
            total += self._add_weights(
                params * states["amp_weights"], f"{where} x 4 B (fp32 model under autocast)"
            )
            self.add(
                "weight_copies",
                params * states["amp_weight_copies"],
                f"{where} x 2 B (16-bit copies autocast keeps for backward)",
                "state",
            )
            total += params * states["amp_weight_copies"]
            if not i.optimizer_in_backward:
                total += self._add_grads(params * states["amp_grads"], f"{where} x 4 B (fp32 gradients)")
            if not offloaded:
                total += self._add_optimizer(params * opt, f"{where} x {opt:g} B ({i.optimizer})", paged)
            if i.dp > 1:
                total += self._ddp_buckets(params * states["amp_grads"])
        else:  # DeepSpeed ZeRO / FSDP mixed precision: 16-bit params and grads, fp32 master and states
            total += self._sharded_mixed(params, opt, n, paged, offloaded)
        if i.precision == "fp8-mixed":
            self.add(
                "fp8_weight_cache", params, f"{where} x 1 B (Transformer Engine fp8 weight copies)", "state"
            )
            total += params
        if (self.fp32 or self.true16) and i.dp > 1 and not self.sharded:
            total += self._ddp_buckets(params * (4 if self.fp32 else 2))
        return total

    def _sharded_mixed(self, params: float, opt: float, n: int, paged: bool, offloaded: bool) -> float:
        i, states = self.i, self.facts["model_states"]
        p16, g16 = states["sharded_params_16bit"], states["sharded_grads_16bit"]
        master, fp32_grads = states["sharded_master_fp32"], states["deepspeed_fp32_grad_partition"]
        where = f"{_gb(params)} params"
        total = 0.0
        if i.fsdp:
            full = i.fsdp in ("full_shard", "hybrid_shard")
            total += self._add_weights(
                params * 4 / (n if full else 1),
                f"{where} x 4 B (fp32 sharded params)" + _div(n if full else 1),
            )
            if not i.optimizer_in_backward:
                total += self._add_grads(params * 4 / n, f"{where} x 4 B (fp32 grads)" + _div(n))
            if not offloaded:
                total += self._add_optimizer(
                    params * opt / n, f"{where} x {opt:g} B ({i.optimizer})" + _div(n), paged
                )
            if full:
                total += self._gather()
            return total
        stage = i.zero
        total += self._add_weights(
            params * p16 / (n if stage >= 3 else 1),
            f"{where} x {p16} B (16-bit params)" + _div(n if stage >= 3 else 1),
        )
        if stage <= 1:
            total += self._add_grads(params * g16, f"{where} x {g16} B (16-bit grads)")
            state_bytes = master + opt
            text = f"{where} x ({master} master + {opt:g} {i.optimizer}) B" + _div(n)
        else:
            state_bytes = g16 + fp32_grads + master + opt
            text = (
                f"{where} x ({g16} grads + {fp32_grads} fp32 grads + {master} master + {opt:g} "
                f"{i.optimizer}) B{_div(n)}"
            )
        if offloaded:
            self.notes.append(f"optimizer states and master weights offloaded to {i.offload}")
        else:
            self.add("optimizer_states", params * state_bytes / n, text, "state", paged)
            total += 0 if paged else params * state_bytes / n
        if stage >= 3:
            total += self._gather()
        return total

    def _add_weights(self, value: float, formula: str) -> float:
        self.add("weights", value, formula, "state")
        return value

    def _add_grads(self, value: float, formula: str) -> float:
        self.add("gradients", value, formula, "state")
        return value

    def _add_optimizer(self, value: float, formula: str, paged: bool) -> float:
        if paged:
            formula += "; paged: moves to host memory when the GPU is full, so not counted in the peak"
        self.add("optimizer_states", value, formula, "state", pageable=paged)
        return 0.0 if paged else value

    def _ddp_buckets(self, grad_bytes: float) -> float:
        """DDP copies gradients into its all-reduce buckets unless gradient_as_bucket_view=True
        (PyTorch DistributedDataParallel docs: that flag saves 'the total gradients size')."""
        self.add("ddp_buckets", grad_bytes, "one copy of the gradients in DDP's all-reduce buckets", "state")
        return grad_bytes

    def _gather(self) -> float:
        """ZeRO-3/FSDP gather whole modules for compute: 4 x largest module (DeepSpeed's estimator)."""
        factor = self.facts["model_states"]["deepspeed_zero3_gather_factor"]
        largest = self.arch.largest_module_params / self.i.tp
        value = factor * largest
        self.add(
            "gathered_params",
            value,
            f"{factor} B x {_gb(largest)} params of the largest module (ZeRO-3/FSDP gather)",
            "transient",
        )
        return value

    def _frozen_states(self) -> float:
        """LoRA/QLoRA: a frozen base (16-bit, or NF4 linears with 16-bit embeddings and head) plus
        adapters with their own gradients and optimizer states (QLoRA paper, arXiv:2305.14314)."""
        i, s, arch = self.i, self.shards, self.arch
        bits = self.facts["quantization_bits"]
        total = 0.0
        base16 = 4 if self.fp32 else 2
        if i.task == "qlora":
            key = "nf4_double_quant" if (i.qlora_quant == "nf4" and i.qlora_double_quant) else i.qlora_quant
            b = float(bits[key]) / 8
            linear = s.linear
            rest = s.params - linear
            value = linear * b + rest * base16
            total += self._add_weights(
                value,
                f"{_gb(linear)} linear params x {b:.4f} B ({key}) + "
                f"{_gb(rest)} embeddings/head/norms x {base16} B",
            )
            largest = max(d_in * d_out for d_in, d_out in arch.linear_shapes().values()) / i.tp
            self.add(
                "dequant_buffer",
                largest * 2,
                f"one dequantised linear: {_gb(largest)} params x 2 B",
                "transient",
            )
            total += largest * 2
        elif i.quantization and i.quantization != "none":
            b = float(bits[i.quantization]) / 8
            value = s.linear * b + (s.params - s.linear) * base16
            total += self._add_weights(
                value,
                f"{_gb(s.linear)} linear params x {b:.4f} B ({i.quantization}) + "
                f"{_gb(s.params - s.linear)} other params x {base16} B",
            )
        else:
            total += self._add_weights(s.params * base16, f"{_gb(s.params)} frozen params x {base16} B")
        adapter_params = arch.lora_params_per_layer(i.lora_rank, self.roles) * s.layers_local / i.tp
        table = self.facts["adapters"]
        per = table["fp32"] if self.fp32 else table["true_16bit"] if self.true16 else table["mixed_precision"]
        optimizer = i.optimizer or "adamw"
        if optimizer in ("adamw-8bit", "paged-adamw-8bit"):
            per -= 6 if per == 16 else 2
        value = adapter_params * per
        self.add(
            "adapters",
            value,
            f"{adapter_params / 1e6:.2f}M adapter params (rank {i.lora_rank} on "
            f"{', '.join(self.roles)}) x {per:g} B (weights, grads, {optimizer})",
            "state",
        )
        total += value
        saved = self._modules_to_save()
        if saved:
            weight = 4 if (self.fp32 or self.mixed) else 2
            value = saved * (weight + weight + self.optimizer_bytes())
            self.add(
                "trainable_modules",
                value,
                f"{_gb(saved)} params in modules_to_save, trained in full",
                "state",
            )
            total += value
        return total

    def _modules_to_save(self) -> float:
        names = {name.lower() for name in self.i.modules_to_save}
        embedding = {"embed_tokens", "wte", "word_embeddings", "embeddings", "tok_embeddings"}
        head = {"lm_head", "output", "embed_out"}
        total = 0.0
        if names & embedding:
            total += self.arch.embedding_params / self.i.tp
        if names & head:
            total += (self.arch.head_params or self.arch.embedding_params) / self.i.tp
        return total

    # -- activations ------------------------------------------------------------------------------

    def layer_terms(self, tokens: float) -> dict[str, float]:
        """Bytes one transformer layer keeps for backward, by term (no recomputation)."""
        i, arch = self.i, self.arch
        e, t = self.element, i.tp
        h, f = arch.hidden, arch.ffn
        sp = t if i.sp else 1
        rmsnorm_upcast = arch.norm == "rmsnorm" and e < 4
        norm_in = 4 if rmsnorm_upcast else self.residual
        frozen = i.frozen_base and not i.saves_frozen_inputs
        adapted = set(self.roles)
        native_gqa = i.attention == "flash"  # HF/torchtune/litgpt expand K and V (repeat_kv) for sdpa/eager
        kv_saved = arch.kv_dim if native_gqa else arch.q_dim
        terms: dict[str, float] = {}
        norms = 1 if arch.parallel_attention else 2
        terms["norm_inputs"] = norms * norm_in * tokens * h / sp
        if not frozen or adapted & {"q", "k", "v"}:
            terms["attention_input"] = e * tokens * h / sp
        terms["q_k_v"] = e * tokens * (arch.q_dim + 2 * kv_saved) / t
        if i.attention != "eager" or not frozen or "o" in adapted:
            terms["attention_output"] = e * tokens * arch.q_dim / t
        if i.attention == "eager" and i.activation_checkpointing != "selective":
            softmax = 4 if self.fp32 else 6 if (self.mixed or arch.norm == "rmsnorm") else 2
            dropout = (1 + e) if arch.dropout else 0
            terms["attention_scores"] = arch.heads * i.seq_len / i.cp * tokens * (softmax + dropout) / t
        if arch.dropout:
            terms["dropout_masks"] = 2 * tokens * h / sp
        if not arch.parallel_attention and (not frozen or adapted & {"gate", "up"}):
            terms["mlp_input"] = e * tokens * h / sp
        width = f * (arch.top_k if arch.experts > 1 else 1)
        if arch.gated:
            kept = 4 if (not frozen or "down" in adapted) else 3
        elif arch.mlp == "relu":
            kept = 1
        else:
            kept = 2 if (not frozen or "down" in adapted) else 1
        terms["mlp_intermediate"] = kept * e * tokens * width / t
        if arch.experts > 1:
            terms["router"] = 4 * tokens * arch.experts
        if frozen and self.roles:
            rank_terms = sum(1 for _ in self.roles) * e * tokens * max(1, i.lora_rank)
            terms["lora_intermediate"] = rank_terms / t
            if i.lora_dropout > 0:
                widths = arch.linear_shapes()
                inputs = {widths[role][0] for role in self.roles}  # one dropped copy per distinct input
                terms["lora_dropout"] = sum((e + 1) * tokens * width for width in inputs) / t
        return terms

    def activations(self) -> tuple[float, str]:
        i, arch, s = self.i, self.arch, self.shards
        tokens = i.micro_batch * i.seq_len / i.cp
        terms = self.layer_terms(tokens)
        per_layer = sum(terms.values())
        in_flight = s.layers_local * (min(i.pp, i.grad_accum) if i.pp > 1 else 1)
        cross = (arch.decoder_layers / arch.layers) if arch.layers else 0
        per_layer *= 1 + 0.5 * cross  # decoder layers add a cross-attention block (about half a layer)
        described = " + ".join(f"{name} {value / GIB:.3f}" for name, value in terms.items())
        if i.activation_checkpointing == "full":
            layer_input = self.residual * tokens * arch.hidden / (i.tp if i.sp else 1)
            value = in_flight * layer_input + per_layer
            formula = (
                f"full checkpointing: {in_flight} layers x {fmt_bytes(layer_input)} layer inputs + one layer "
                f"recomputed ({fmt_bytes(per_layer)}: {described} GiB)"
            )
        else:
            value = in_flight * per_layer
            formula = f"{in_flight} layers x {fmt_bytes(per_layer)} (b={i.micro_batch}, s={i.seq_len}: {described} GiB)"
        return value, formula

    def outer_activations(self) -> float:
        """Input ids (int64), embedding dropout, the final norm and the head's input."""
        i, arch = self.i, self.arch
        tokens = i.micro_batch * i.seq_len / i.cp
        value = 8 * tokens + (tokens * arch.hidden if arch.dropout else 0)
        value += (4 if arch.norm == "rmsnorm" else self.residual) * tokens * arch.hidden
        if not i.frozen_base or i.saves_frozen_inputs:
            value += self.element * tokens * arch.hidden
        return value

    def logits(self) -> tuple[float, str]:
        """Logits and loss: tokens x vocab x bytes (16-bit logits, the fp32 upcast cross-entropy
        works on, and its gradient; chunked/fused loss keeps one chunk in fp32)."""
        i, arch = self.i, self.arch
        if arch.head != "lm":
            return 0.0, ""
        table = self.facts["logits"]
        wide = self.fp32 or self.fp64
        key = ("chunked" if i.loss == "chunked" else "standard") + ("_fp32" if wide else "_16bit")
        per = float(table[key])
        tokens = i.micro_batch * i.seq_len / i.cp
        vocab = arch.vocab / i.tp
        return tokens * vocab * per, f"{tokens:,.0f} tokens x {vocab:,.0f} vocab x {per:g} B ({i.loss} loss)"

    def step_transient(self) -> float:
        """torch's default (foreach) AdamW allocates an fp32 temporary the size of the states it
        updates ('foreach ... at the cost of more peak memory', torch.optim docs)."""
        i = self.i
        if (i.optimizer or "adamw") not in (
            "adamw",
            "adam",
            "lion",
            "sgd-momentum",
        ) or i.optimizer_in_backward:
            return 0.0
        if i.fused_optimizer:
            return 0.0
        if i.offload in ("cpu", "nvme"):
            return 0.0
        trainable = (
            self.arch.lora_params_per_layer(i.lora_rank, self.roles) * self.shards.layers_local / i.tp
            if i.frozen_base
            else self.shards.params / self.shards.shard
        )
        return trainable * (2 if self.true16 else 4)

    # -- totals -----------------------------------------------------------------------------------

    def estimate(self) -> MemoryEstimate:
        i = self.i
        states = self.model_states()
        activations, formula = self.activations()
        outer = self.outer_activations()
        self.add(
            "activations",
            activations + outer,
            formula + f" + {fmt_bytes(outer)} embedding/final-norm inputs",
            "activation",
        )
        logits, logits_formula = self.logits()
        if logits:
            self.add("logits", logits, logits_formula, "activation")
        transients = sum(c.bytes for c in self.components if c.kind == "transient")
        forward_backward = states + activations + outer + logits
        step = self.step_transient()
        step_peak = states - transients + step
        if step_peak > forward_backward:
            peak, phase = step_peak, "optimizer step"
            self.add(
                "optimizer_step_buffers", step, "fp32 temporaries of the foreach optimizer step", "transient"
            )
        else:
            peak, phase = forward_backward, "backward"
        return _finish(self.components, peak, phase, i, self.facts, self.notes)


def _div(n: int) -> str:
    return f" / {n} shards" if n > 1 else ""


# -- inference --------------------------------------------------------------------------------------


class _Inference:
    """Weights + KV cache + the forward pass's largest intermediates (research/vram.md section 3)."""

    def __init__(self, inputs: MemoryInputs, facts: Mapping[str, Any]) -> None:
        self.i = inputs
        self.arch = inputs.arch
        self.facts = facts
        self.shards = _Shards(inputs)
        self.notes: list[str] = list(inputs.arch.notes)
        self.components: list[Component] = []

    def weight_bytes(self) -> tuple[float, str]:
        i, s = self.i, self.shards
        base = 4 if i.precision == "32-true" else 1 if i.precision == "fp8-mixed" else 2
        if i.quantization and i.quantization != "none":
            b = float(self.facts["quantization_bits"][i.quantization]) / 8
            value = s.linear * b + (s.params - s.linear) * base
            return value, (
                f"{_gb(s.linear)} linear params x {b:.4f} B ({i.quantization}) + "
                f"{_gb(s.params - s.linear)} other params x {base} B"
            )
        return s.params * base, f"{_gb(s.params)} params x {base} B"

    def kv_bytes(self) -> tuple[float, str]:
        """2 (K and V) x layers x KV heads per rank x head_dim x bytes x sequences x tokens
        (vLLM cache_engine.get_cache_block_size; KV heads per TP rank = max(1, kv_heads / tp))."""
        i, arch, s = self.i, self.arch, self.shards
        width = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
        per = width.get(i.kv_cache_dtype or "", 4 if i.precision == "32-true" else 2)
        heads = max(1, arch.kv_heads // i.tp) if arch.kv_heads >= i.tp else 1
        tokens = i.context_len or i.seq_len
        value = 2 * s.layers_local * heads * arch.head_dim * per * i.concurrency * tokens
        return value, (
            f"2 x {s.layers_local} layers x {heads} KV heads x {arch.head_dim} x {per:g} B x "
            f"{i.concurrency} sequences x {tokens:,} tokens"
        )

    def activation_bytes(self) -> tuple[float, str]:
        """The prefill forward's largest live tensors: the MLP intermediates (gated: gate/up output
        and the activation, 3f; else 2f) plus a few hidden-size buffers (4h), in 16-bit, and fp32
        logits for the sampled positions."""
        i, arch = self.i, self.arch
        e = 4 if i.precision == "32-true" else 2
        if i.engine == "vllm":
            tokens = int(self.facts["inference"]["vllm_max_num_batched_tokens"])
            tokens = max(tokens, i.context_len or 0)
            sampled = (
                min(i.concurrency, int(self.facts["inference"]["vllm_max_num_seqs"]))
                if i.concurrency > 1
                else int(self.facts["inference"]["vllm_max_num_seqs"])
            )
        else:
            tokens = i.concurrency * (i.prompt_len or i.context_len or i.seq_len)
            sampled = i.concurrency
        width = (3 if arch.gated else 2) * arch.ffn / i.tp + 4 * arch.hidden
        scores = 0.0
        if i.attention == "eager" and i.engine != "vllm":
            prompt = i.prompt_len or i.context_len or i.seq_len
            scores = i.concurrency * arch.heads / i.tp * prompt * prompt * 4
        logits = sampled * arch.vocab / i.tp * 4
        value = tokens * width * e + scores + logits
        return value, (
            f"{tokens:,} prefill tokens x ({'3' if arch.gated else '2'}f + 4h) x {e} B"
            + (f" + eager scores {fmt_bytes(scores)}" if scores else "")
            + f" + {sampled} x {arch.vocab:,} fp32 logits"
        )

    def estimate(self) -> MemoryEstimate:
        weights, weights_formula = self.weight_bytes()
        kv, kv_formula = self.kv_bytes()
        act, act_formula = self.activation_bytes()
        self.components += [
            Component("weights", weights, weights_formula, "state"),
            Component("kv_cache", kv, kv_formula, "activation"),
            Component("activations", act, act_formula, "activation"),
        ]
        estimate = _finish(self.components, weights + kv + act, "inference", self.i, self.facts, self.notes)
        if self.i.engine == "vllm":
            utilization = self.i.gpu_memory_utilization or float(
                self.facts["inference"]["vllm_gpu_memory_utilization"]
            )
            estimate = replace(
                estimate,
                notes=(
                    *estimate.notes,
                    f"vLLM claims {utilization:g} of the card up front and gives what "
                    f"is left after weights and activations to the KV cache",
                ),
            )
        return estimate


def _finish(
    components: list[Component],
    peak: float,
    phase: str,
    inputs: MemoryInputs,
    facts: Mapping[str, Any],
    notes: list[str],
) -> MemoryEstimate:
    runtime = facts["runtime"]
    overhead = float(runtime["allocator_overhead"])
    reserved = peak * (1 + overhead)
    context_gib = (
        inputs.cuda_context_gib if inputs.cuda_context_gib is not None else float(runtime["cuda_context_gib"])
    )
    items = list(components)
    items.append(
        Component(
            "allocator_overhead",
            reserved - peak,
            f"{overhead:.0%} of allocated (caching allocator rounding and fragmentation)",
            "runtime",
        )
    )
    items.append(
        Component(
            "cuda_context", context_gib * GIB, f"{context_gib:g} GiB CUDA context and kernels", "runtime"
        )
    )
    device = reserved + context_gib * GIB
    if inputs.world > 1:
        nccl = float(runtime["nccl_buffers_gib"]) * GIB
        items.append(
            Component("nccl_buffers", nccl, f"{runtime['nccl_buffers_gib']:g} GiB NCCL buffers", "runtime")
        )
        device += nccl
    return MemoryEstimate(tuple(items), peak, reserved, device, phase, inputs, tuple(dict.fromkeys(notes)))
