"""Per-GPU memory of a training step, phase by phase.

A step's live memory changes as it runs, and the peak is the largest of four moments (steady state:
the optimizer's states exist, the gradients of the last step were freed by ``zero_grad(set_to_none=True)``):

- **forward**, at the loss: states + every saved activation + autocast's cached 16-bit weight copies
  + the loss's logits (16-bit logits, their fp32 upcast and the saved log-softmax);
- **backward start**: states + saved activations + the cross-entropy's backward (saved log-softmax and
  two fp32 gradients of the logits' size);
- **late backward**: states + all gradients + one block's activations (recomputed, with full
  checkpointing) + that block's backward temporaries;
- **optimizer step**: states + gradients + the step's temporaries (foreach AdamW: one tensor per state).

With gradient accumulation the gradients of earlier micro-batches are alive in the first two as well.
States follow HF's model_memory_anatomy (autocast: fp32 weights 4, fp32 gradients 4, AdamW 8 bytes per
parameter), the ZeRO paper (arXiv:1910.02054) and DeepSpeed's estimators for sharding, PEFT for
adapters, QLoRA (arXiv:2305.14314) for 4-bit bases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from rigcheck.core.estimate.memory.activations import BlockModel
from rigcheck.core.estimate.memory.flow import Flow, flow_of
from rigcheck.core.estimate.memory.inputs import TRUE_16, MemoryInputs
from rigcheck.core.estimate.memory.quantized import four_bit_scheme, quantized_weight_bytes
from rigcheck.core.estimate.memory.result import Component, billions, fmt_bytes
from rigcheck.core.estimate.memory.shards import Shards


def _phase_of(moment: str) -> str:
    """The phase a moment belongs to: forward, backward, late backward or optimizer step."""
    if moment.startswith("forward"):
        return "forward"
    if moment.startswith("backward") or moment == "root reduce-scatter":
        return "backward"
    return moment


def _div(n: int) -> str:
    return f" / {n} shards" if n > 1 else ""


class _Saved(NamedTuple):
    """What the blocks keep for backward: the tokens, one block's terms and its total, what lies outside
    the blocks, the bytes saved in all, whether a block is recomputed in backward, and how the saved
    bytes came about (all | full | selective | offloaded: ``in_flight`` layers of ``kept`` bytes)."""

    tokens: float
    terms: dict[str, float]
    per_layer: float
    outer: float
    saved: float
    recomputed: bool
    how: str
    in_flight: int
    kept: float


class _Forward(NamedTuple):
    """What the forward pass adds at the loss beside the states and saved activations: the logits
    (:meth:`Training.logits`), autocast's weight copies (:meth:`Training.weight_copies`), the gathered
    FSDP units and the dequantised linear, and the gradients accumulated over earlier micro-batches."""

    kept: float
    logits_fwd: float
    logits_bwd: float
    logits_formula: str
    cached: float
    copies_saved: float
    copies_block: float
    gathered: float
    dequant: float
    accumulating: float


class Training:
    def __init__(self, inputs: MemoryInputs, facts: Mapping[str, Any]) -> None:
        self.i = inputs
        self.arch = inputs.arch
        self.facts = facts
        self.shards = Shards(inputs)
        self.flow: Flow = flow_of(inputs)
        self.notes: list[str] = [*inputs.arch.notes, *inputs.implied]
        self.roles: tuple[str, ...] = ()
        if inputs.frozen_base:
            self.roles = self.arch.lora_roles(inputs.lora_targets)
        self.block = BlockModel(inputs, self.flow, frozenset(self.roles))
        self.precision = inputs.precision
        self.fp64 = inputs.precision == "64-true"
        self.fp32 = inputs.precision == "32-true"
        self.true16 = inputs.precision in TRUE_16
        self.host = 0.0
        self.states: list[Component] = []

    # -- states -----------------------------------------------------------------------------------

    def state(self, name: str, value: float, formula: str, category: str, pageable: bool = False) -> None:
        if value > 0 or name == "weights":
            self.states.append(Component(name, value, formula, "state", pageable, category))

    def optimizer_bytes(self, *, state_bytes: int = 4) -> float:
        """Optimizer bytes per trainable parameter; states take the parameter's dtype (torch.optim)."""
        table = self.facts["optimizer_states"]
        name = self.i.optimizer or "adamw"
        if name == "adafactor":
            return self._adafactor_bytes()
        value = float(table[name])
        if name in ("adamw-8bit", "paged-adamw-8bit"):
            return value
        return value * state_bytes / 4

    def _adafactor_bytes(self) -> float:
        """Adafactor keeps a row and a column vector per matrix (Shazeer & Stern 2018): 4(r + c) bytes."""
        shapes = self.arch.linear_shapes()
        per_layer_vectors = sum(d_in + d_out for d_in, d_out in shapes.values())
        matrices = self.arch.layers * per_layer_vectors + 2 * (self.arch.vocab + self.arch.hidden)
        return 4 * matrices / max(1, self.arch.params)

    def model_states(self) -> None:
        if self.i.frozen_base:
            self._frozen_states()
        elif self.i.zero:
            self._deepspeed_states()
        else:
            self._torch_states()
        self.zero3_reduce_bucket()
        if self.i.precision == "fp8-mixed":
            params = self.shards.params / (self.shards.shard if self.i.sharded_params else 1)
            self.state(
                "fp8_weight_cache",
                params,
                f"{billions(params)} params x 1 B (Transformer Engine fp8 copies)",
                "parameters",
            )

    def _torch_states(self) -> None:
        """Plain PyTorch (DDP, FSDP): the master weights in the model's dtype (fp32 under autocast and
        FSDP mixed precision), gradients in the same dtype, optimizer states too."""
        i, s = self.i, self.shards
        n = s.shard
        weight = 8 if self.fp64 else 2 if self.true16 else 4
        params = s.params
        p_div = n if i.sharded_params else 1
        g_div = n if i.sharded_grads else 1
        o_div = n if i.sharded else 1
        opt = self.optimizer_bytes(state_bytes=weight)
        paged = (i.optimizer or "").startswith("paged")
        where = f"{billions(params)} params"
        offload = i.offload in ("cpu", "nvme")
        master = (
            f"{weight} B ({'fp32 ' if weight == 4 else ''}{'model' if not i.sharded else 'sharded params'})"
        )
        if offload and i.offload_params and i.sharded_params:
            self.host += params * (weight + weight + opt) / n
            self.notes.append(
                f"parameters, gradients and optimizer states offloaded to {i.offload} ({fmt_bytes(self.host)} per GPU)"
            )
            self.state(
                "weights",
                0.0,
                f"{where} offloaded to {i.offload}; the GPU holds gathered blocks only",
                "parameters",
            )
        else:
            self.state("weights", params * weight / p_div, f"{where} x {master}" + _div(p_div), "parameters")
            if not i.optimizer_in_backward:
                self.state(
                    "gradients", params * weight / g_div, f"{where} x {weight} B" + _div(g_div), "gradients"
                )
            if offload:
                self.host += params * opt / o_div
                self.notes.append(
                    f"optimizer states offloaded to {i.offload} ({fmt_bytes(self.host)} per GPU)"
                )
            else:
                text = f"{where} x {opt:g} B ({i.optimizer})" + _div(o_div)
                if paged:
                    text += "; paged: moves to host memory when the GPU is full, so not counted in the peak"
                self.state("optimizer_states", params * opt / o_div, text, "optimizer", paged)
        if i.dp > 1 and not i.sharded:
            self.state(
                "ddp_buckets",
                params * weight,
                "one copy of the gradients in DDP's all-reduce buckets (gradient_as_bucket_view=False)",
                "gradients",
            )

    def _deepspeed_states(self) -> None:
        """DeepSpeed ZeRO mixed precision: 16-bit params and grads, fp32 master weights, optimizer states
        and (stages 2-3) fp32 gradient partitions (estimate_zero2/3_model_states_mem_needs)."""
        i, s = self.i, self.shards
        states = self.facts["model_states"]
        n, stage = s.shard, i.zero
        params = s.params
        p16, g16 = states["sharded_params_16bit"], states["sharded_grads_16bit"]
        master, fp32_grads = states["sharded_master_fp32"], states["deepspeed_fp32_grad_partition"]
        if self.fp32:
            p16 = g16 = 4
        opt = self.optimizer_bytes()
        paged = (i.optimizer or "").startswith("paged")
        where = f"{billions(params)} params"
        p_div = n if stage >= 3 else 1
        if i.offload in ("cpu", "nvme") and i.offload_params and stage >= 3:
            self.host += params * (p16 + master + opt + fp32_grads) / n
            self.state(
                "weights",
                0.0,
                f"{where} offloaded to {i.offload}; the GPU holds gathered modules only",
                "parameters",
            )
        else:
            self.state(
                "weights",
                params * p16 / p_div,
                f"{where} x {p16} B (16-bit params)" + _div(p_div),
                "parameters",
            )
        if stage <= 1:
            self.state("gradients", params * g16, f"{where} x {g16} B (16-bit grads)", "gradients")
            state_bytes = master + opt
            text = f"{where} x ({master} master + {opt:g} {i.optimizer}) B" + _div(n)
        else:
            state_bytes = g16 + fp32_grads + master + opt
            text = (
                f"{where} x ({g16} grads + {fp32_grads} fp32 grads + {master} master + {opt:g} {i.optimizer}) "
                f"B{_div(n)}"
            )
        if i.offload in ("cpu", "nvme"):
            if not (i.offload_params and stage >= 3):
                self.host += params * (master + opt + (fp32_grads if stage >= 2 else 0)) / n
            self.notes.append(
                f"optimizer states and master weights offloaded to {i.offload} ({fmt_bytes(self.host)} per GPU)"
            )
            if stage >= 2:
                self.state(
                    "gradients", params * g16 / n, f"{where} x {g16} B (16-bit grads)" + _div(n), "gradients"
                )
        else:
            self.state("optimizer_states", params * state_bytes / n, text, "optimizer", paged)

    def _frozen_states(self) -> None:
        """LoRA/QLoRA: a frozen base (16-bit, or NF4 linears with 16-bit embeddings, head and norms)
        plus adapters with their gradients and optimizer states. FSDP full sharding and ZeRO-3 shard
        every parameter, frozen ones too (FSDP flat parameters; DeepSpeed partitions all)."""
        i, s, arch, flow = self.i, self.shards, self.arch, self.flow
        bits = self.facts["quantization_bits"]
        n = s.shard if i.sharded_params else 1
        base16 = flow.weights if not i.sharded else {"fp32": 4}.get(i.lora_base_dtype or "", 2)
        if self.fp32:
            base16 = 4
        rest_bytes = 4 if i.kbit_upcast else base16
        if i.task == "qlora":
            key = four_bit_scheme(i.qlora_quant, i.qlora_double_quant)
            b = float(bits[key]) / 8
            linear, rest = s.linear, s.params - s.linear
            value = linear * b + rest * rest_bytes
            formula = (
                f"{billions(linear)} linear params x {b:.4f} B ({key}) + {billions(rest)} embeddings/head/norms x "
                f"{rest_bytes} B"
                + (" (prepare_model_for_kbit_training upcasts them to fp32)" if i.kbit_upcast else "")
            )
        elif (quantized := quantized_weight_bytes(i, s, self.facts, base16)) is not None:
            value, formula = quantized
        else:
            value = s.params * base16
            formula = f"{billions(s.params)} frozen params x {base16} B"
        if i.offload in ("cpu", "nvme") and i.offload_params and n > 1:
            self.host += value / n
            self.state("weights", 0.0, formula + f" / {n} shards, offloaded to {i.offload}", "parameters")
        else:
            self.state("weights", value / n, formula + _div(n), "parameters")
        adapter = arch.lora_params_per_layer(i.lora_rank, self.roles) * s.layers_local / i.tp
        a_bytes = flow.adapter if not i.sharded else (2 if self.true16 else 4)
        if self.fp32:
            a_bytes = 4
        opt = self.optimizer_bytes(state_bytes=a_bytes)
        shard_a = n if i.sharded else 1
        what = f"{adapter / 1e6:.2f}M adapter params (rank {i.lora_rank} on {', '.join(self.roles)})"
        self.state(
            "adapters", adapter * a_bytes / shard_a, f"{what} x {a_bytes} B" + _div(shard_a), "parameters"
        )
        if not i.optimizer_in_backward:
            self.state(
                "adapter_gradients",
                adapter * a_bytes / shard_a,
                f"{what} x {a_bytes} B gradients",
                "gradients",
            )
        self.state(
            "adapter_optimizer_states",
            adapter * opt / shard_a,
            f"{what} x {opt:g} B ({i.optimizer or 'adamw'})",
            "optimizer",
        )
        if i.flat_parameter_gradients:
            self._flat_parameter_gradients(base16)
        saved = self._modules_to_save()
        if saved:
            weight = 4 if not self.true16 else 2
            self.state(
                "trainable_modules",
                saved * weight,
                f"{billions(saved)} params in modules_to_save (a trained copy)",
                "parameters",
            )
            self.state(
                "trainable_module_gradients",
                saved * weight,
                f"{billions(saved)} params x {weight} B gradients",
                "gradients",
            )
            self.state(
                "trainable_module_optimizer_states",
                saved * self.optimizer_bytes(state_bytes=weight),
                f"{billions(saved)} params x {self.optimizer_bytes(state_bytes=weight):g} B",
                "optimizer",
            )

    def _flat_parameter_gradients(self, base_bytes: float) -> None:
        """FSDP1 with LoRA (:attr:`MemoryInputs.flat_parameter_gradients`): the frozen block weights get
        gradients in the flat parameter's dtype. Sharded after each reduce-scatter, unless gradients
        accumulate over micro-batches inside ``no_sync()``, which "will accumulate the full model
        gradients (instead of gradient shards) until the eventual sync" on every rank (torch 2.1
        ``FullyShardedDataParallel.no_sync``; Lightning Fabric's ``no_backward_sync`` and accelerate's
        default ``sync_each_batch=False`` use it). litgpt's LoRA of Llama-2-13B on four A100s: 6.5 GB of
        sharded weights and 25.4 GB of unsharded gradients of a 35.6 GB peak (tutorials/resource-tables.md,
        commit 8641822)."""
        i, s = self.i, self.shards
        n = s.shard
        frozen = s.blocks
        if i.grad_accum > 1:
            value = frozen * base_bytes
            how = f"unsharded: {i.grad_accum} micro-batches accumulate inside no_sync()"
        else:
            value = frozen * base_bytes / n
            how = f"sharded / {n}"
        self.state(
            "flat_parameter_gradients",
            value,
            f"{billions(frozen)} frozen block params x {base_bytes:g} B: FSDP1 flat parameters mix them with "
            f"the adapters, so they get gradients ({how})",
            "gradients",
        )

    def _modules_to_save(self) -> float:
        names = {name.lower() for name in self.i.modules_to_save}
        embedding = {"embed_tokens", "wte", "word_embeddings", "embeddings", "tok_embeddings"}
        head = {"lm_head", "output", "embed_out"}
        total = 0.0
        if names & embedding and self.i.holds_embedding:
            total += self.arch.embedding_params / self.i.tp
        if names & head and self.i.holds_head:
            total += (self.arch.head_params or self.arch.embedding_params) / self.i.tp
        return total

    @property
    def trainable(self) -> float:
        """Parameters with gradients on this GPU (before sharding)."""
        i = self.i
        if i.frozen_base:
            return self.arch.lora_params_per_layer(i.lora_rank, self.roles) * self.shards.layers_local / i.tp
        return self.shards.params

    # -- transients -------------------------------------------------------------------------------

    def tokens(self) -> float:
        return self.i.micro_batch * self.i.seq_len / self.i.cp

    def weight_copies(self) -> tuple[float, float, float]:
        """autocast's 16-bit copies of fp32 weights read by matmuls (``cached_cast``): all of them cached
        during the forward, the ones backward needs saved (all, or only the head's under full
        checkpointing, whose blocks drop them), one block's while it is recomputed."""
        i, s, arch, flow = self.i, self.shards, self.arch, self.flow
        if not flow.autocast:
            return 0.0, 0.0, 0.0
        fp32_base = flow.weights == 4
        head = arch.vocab * arch.embedding_width / i.tp if arch.head == "lm" and i.holds_head else 0.0
        head = head if (fp32_base or i.kbit_upcast) else 0.0
        blocks = s.linear if fp32_base else 0.0
        adapters = self.trainable if i.frozen_base else 0.0
        cached = 2 * (blocks + head + adapters)
        per_block = 2 * (blocks + adapters) / max(1, s.layers_local)
        saved = cached if i.activation_checkpointing != "full" else 2 * head
        return cached, saved, per_block

    def logits(self) -> tuple[float, float, float, str]:
        """(kept after the forward, the forward's peak at the loss, the backward's peak), bytes.

        Standard loss (transformers' ForCausalLMLoss: ``logits.float()``, then cross-entropy): the
        16-bit logits, their fp32 copy and the fp32 log-softmax at the loss; the log-softmax kept;
        two fp32 gradients beside it in backward. Chunked (torchtune CEWithChunkedOutputLoss, litgpt
        chunked_cross_entropy): each chunk's log-softmax is kept (fp32 over all tokens), the copies
        are one chunk's. Fused (Liger, cut-cross-entropy, unsloth): no logits of full size."""
        i, arch, flow = self.i, self.arch, self.flow
        if arch.head != "lm" or not i.holds_head:
            return 0.0, 0.0, 0.0, ""
        elements = self.tokens() * arch.vocab / i.tp
        c = 4 if self.fp32 or self.fp64 else flow.compute
        chunks = int(self.facts["logits"]["chunks"])
        if i.loss == "fused":
            kept = c * self.tokens() * arch.hidden
            return (
                kept,
                kept,
                kept,
                f"fused linear cross-entropy: no full logits; {fmt_bytes(kept)} of input gradient",
            )
        if i.loss == "chunked":
            kept = 4 * elements
            forward = kept + (c + 4) * elements / chunks
            backward = kept + 8 * elements / chunks
            return (
                kept,
                forward,
                backward,
                f"{elements:,.0f} logits, chunked x {chunks}: fp32 log-softmax kept",
            )
        what = f"{elements:,.0f} logits ({self.tokens():,.0f} tokens x {arch.vocab / i.tp:,.0f})"
        if not i.logits_upcast and c < 4:
            # F.cross_entropy on 16-bit logits: autocast runs log_softmax in fp32 straight from them (no fp32
            # copy) and its backward returns a 16-bit gradient; without autocast it all stays 16-bit
            wide = 4 if self.flow.autocast else c
            return wide * elements, (c + wide) * elements, (2 * wide + c) * elements, what
        upcast = 0 if c == 4 else 4
        if i.shifted_logits_copy:
            # transformers before 4.49: "shift_logits = logits[..., :-1, :].contiguous()", an fp32 copy beside the
            # fp32 logits; before 4.46 the model upcast them itself, so its 16-bit logits were already gone
            versions = self.facts["transformers"]
            held = 0 if i.shifted_logits_copy == "model" and upcast else c
            if i.shifted_logits_copy == "model":
                when = f"before {versions['shifted_logits_copy_from']}, in the model"
            else:
                when = f"before {versions['shifted_logits_copy_before']}, in ForCausalLMLoss"
            what += f", with the shifted fp32 copy (transformers {when})"
            return 4 * elements, (held + upcast + 4 + 4) * elements, 12 * elements, what
        return 4 * elements, (c + upcast + 4) * elements, 12 * elements, what

    def step_transient(self) -> float:
        """torch's foreach optimizers allocate a temporary per state tensor for the whole group
        ("foreach ... at the cost of more peak memory", torch.optim docs): AdamW's sqrt of v."""
        i = self.i
        name = i.optimizer or "adamw"
        if i.optimizer_in_backward or i.fused_optimizer or i.offload in ("cpu", "nvme"):
            return 0.0
        if name not in ("adamw", "adam", "lion"):
            return 0.0
        shard = self.shards.shard if i.sharded else 1
        state_bytes = 8 if self.fp64 else 2 if self.true16 else 4
        if i.frozen_base:
            state_bytes = 4 if not self.true16 else 2
        return self.trainable / shard * state_bytes

    def gathered(self, blocks: int = 1, roots: int = 1) -> float:
        """FSDP: the root unit (embeddings, head, final norm) stays gathered through the forward and
        the backward, with ``blocks`` block-sized buffers beside it. FSDP2 (torch
        ``_fsdp_param_group.wait_for_unshard``) all-gathers a unit into one flat buffer, copies it out
        into the unsharded parameters and, in the forward, frees that buffer only after the *next*
        unit's copy-out: block 0's copy-out holds the root twice and block 0 twice (``roots=2,
        blocks=2``), a later block's the root, the previous block's buffer and its own two
        (``blocks=3``). ZeRO-3: DeepSpeed's estimator charges 4 B x the largest module (its 16-bit
        params and grads)."""
        i, s = self.i, self.shards
        if not i.sharded_params or (i.zero and s.shard <= 1):
            return 0.0
        if i.zero >= 3:
            factor = self.facts["model_states"]["deepspeed_zero3_gather_factor"]
            largest = self.arch.largest_module_params / i.tp
            return factor * largest + self.gather_bytes * self.zero3_prefetch(largest)
        compute = self.gather_bytes
        if i.task == "qlora":  # 4-bit blocks gather packed (bitsandbytes quant_storage), the root in 16 bits
            bits = self.facts["quantization_bits"]
            key = four_bit_scheme(i.qlora_quant, i.qlora_double_quant)
            packed = s.block_linear_per_layer * float(bits[key]) / 8 + (s.unit - s.block_linear_per_layer) * 2
            return roots * (4 if i.kbit_upcast else 2) * s.root + blocks * packed
        return compute * (roots * s.root + blocks * s.unit)

    def zero3_bucket(self, stated: float | str | None, key: str, auto: str) -> float:
        """A DeepSpeed bucket size in elements: the stated number, "auto" (the Trainer's multiple of
        hidden x hidden), or DeepSpeed's default (specs/rules/memory.yaml deepspeed_zero3)."""
        zero3 = self.facts["deepspeed_zero3"]
        if stated is None:
            return float(zero3[key])
        if stated == "auto":
            return float(zero3[auto]) * self.arch.hidden**2
        return float(stated)

    def zero3_prefetch(self, largest: float) -> float:
        """Elements ZeRO-3 gathers ahead of the module computing: the prefetch bucket, within what
        stage3_max_live_parameters leaves beside that module (partitioned_param_coordinator.py)."""
        i = self.i
        bucket = self.zero3_bucket(
            i.deepspeed_prefetch_bucket,
            "stage3_prefetch_bucket_size",
            "auto_prefetch_bucket_size_per_hidden_squared",
        )
        most = i.deepspeed_max_live
        if most is None:
            most = float(self.facts["deepspeed_zero3"]["stage3_max_live_parameters"])
        return max(0.0, min(bucket, most - largest))

    def zero3_reduce_bucket(self) -> None:
        """ZeRO-3's gradient bucket: reduce_bucket_size elements in the communication dtype, allocated
        at start-up and kept (stage3.py _setup_for_real_optimizer)."""
        i = self.i
        if i.zero < 3:
            return
        elements = self.zero3_bucket(
            i.deepspeed_reduce_bucket, "reduce_bucket_size", "auto_reduce_bucket_size_per_hidden_squared"
        )
        size = 4 if self.fp32 else 2
        setting = "reduce_bucket_size" + (
            " auto (hidden x hidden)" if i.deepspeed_reduce_bucket == "auto" else ""
        )
        self.state(
            "reduce_bucket",
            elements * size,
            f"ZeRO-3's gradient bucket: {elements:,.0f} elements ({setting}) x {size} B",
            "temporaries",
        )

    @property
    def gather_bytes(self) -> int:
        """FSDP gathers in the mixed-precision policy's param_dtype (16 bits), else in the params' dtype."""
        return 8 if self.fp64 else 4 if self.fp32 else 2

    @property
    def reduce_bytes(self) -> int:
        """FSDP reduce-scatters gradients in the policy's reduce_dtype: fp32 under mixed precision,
        else the parameters' dtype."""
        return 8 if self.fp64 else 2 if self.true16 else 4

    def root_gradients(self) -> float:
        """FSDP reduces the root unit's gradients last (its parameters already resharded): the
        unsharded gradients in the compute dtype (with tied embeddings the head's and the embedding's
        contributions and their sum), copied into a reduce-scatter input of the whole unit in the
        reduce dtype (torch ``foreach_reduce``; its output shard comes after the gradients are freed)."""
        i, s, arch = self.i, self.shards, self.arch
        if not i.sharded_params or i.zero or i.frozen_base:
            return 0.0
        copies = 3 if arch.tied_embeddings and arch.head == "lm" else 1
        return self.gather_bytes * s.root * copies + self.reduce_bytes * s.root

    def block_gradients(self) -> float:
        """FSDP reduces each block's gradients as its backward ends: the unsharded gradients in the
        compute dtype and the reduce-scatter input of the block in the reduce dtype, alive together
        during the copy-in (torch ``foreach_reduce``)."""
        i, s = self.i, self.shards
        if not i.sharded_params or i.zero or i.frozen_base:
            return 0.0
        return (self.gather_bytes + self.reduce_bytes) * s.unit

    def backward_temporaries(self, tokens: float, terms: Mapping[str, float] | None = None) -> float:
        """A block's backward holds the gradients of its MLP intermediates (the incoming gradient and
        those of gate, up and the activation: 3 tensors of width f per routed token) or, where the
        attention probabilities were kept (eager, or SDPA's math kernel), two fp32 tensors of their
        size (the gradient of the probabilities and softmax's backward). ``terms``: the block's saved
        terms for these tokens, when worked out already."""
        i, arch, c = self.i, self.arch, self.flow.compute
        width = arch.ffn * (arch.top_k if arch.experts > 1 else 1)
        mlp = (3 * c * width + 2 * c * arch.hidden) * tokens / i.tp
        scores = (terms if terms is not None else self.block.terms(tokens)).get("attention_scores", 0.0)
        if i.activation_checkpointing == "selective":
            scores = 0.0
        attention = 2 * 4 * (arch.heads / i.tp) * (i.seq_len / i.cp) * tokens if scores else 0.0
        return max(mlp, attention)

    def head_gradient(self) -> float:
        """The head's weight gradient, allocated when backward leaves the loss (the embedding's when tied)."""
        i, arch = self.i, self.arch
        if i.frozen_base or arch.head != "lm" or not i.holds_head:
            return 0.0
        shard = self.shards.shard if i.sharded_grads else 1
        grad = 8 if self.fp64 else 2 if self.true16 else 4
        return arch.vocab * arch.embedding_width / i.tp * grad / shard

    def dequant(self) -> float:
        """QLoRA: bitsandbytes dequantises one linear to 16 bits for each matmul above 1,536 rows."""
        if self.i.task != "qlora":
            return 0.0
        largest = max(d_in * d_out for d_in, d_out in self.arch.linear_shapes().values()) / self.i.tp
        return 2 * largest

    # -- the step ---------------------------------------------------------------------------------

    def held_throughout(self) -> dict[str, float]:
        """The states every moment of the step holds, by name: all but the gradients (freed by
        ``zero_grad`` and made again in backward) and what is paged out (after :meth:`model_states`)."""
        return held_throughout(self.states)

    def saved_activations(self) -> _Saved:
        """What the blocks and the layers around them keep for backward (after :meth:`model_states`)."""
        i, block = self.i, self.block
        tokens = self.tokens()
        terms = block.terms(tokens)
        per_layer = sum(terms.values())
        in_flight = self.shards.layers_local * i.micro_batches_in_flight
        cross = (self.arch.decoder_layers / self.arch.layers) if self.arch.layers else 0
        per_layer *= 1 + 0.5 * cross  # decoder layers add a cross-attention block (about half a layer)
        op_selective = i.activation_checkpointing == "selective" and not i.megatron
        if i.activation_checkpointing == "selective" and i.megatron:
            per_layer -= terms.get("attention_scores", 0.0)  # Korthikanti's selective recomputation
        outer = sum(block.outer(tokens).values())
        recomputed = i.activation_checkpointing == "full" or i.activation_offloading or op_selective
        if op_selective:
            how, kept = "selective", block.selective_saved(tokens)
        elif i.activation_offloading:
            how, kept = "offloaded", 0.0
        elif i.activation_checkpointing == "full":
            how, kept = "full", block.layer_input(tokens)
        else:
            how, kept = "all", per_layer
        saved = 0.0 if how == "offloaded" else in_flight * kept
        return _Saved(tokens, terms, per_layer, outer, saved, recomputed, how, in_flight, kept)

    def _saved_formula(self, saved: _Saved) -> str:
        """How :meth:`saved_activations` came to its bytes, in words (for the estimate that is shown)."""
        i, per_layer, in_flight, kept = self.i, saved.per_layer, saved.in_flight, saved.kept
        described = " + ".join(f"{name} {value / 2**30:.3f}" for name, value in saved.terms.items())
        if saved.how == "selective":
            formula = (
                f"selective checkpointing (op): {in_flight} layers x {fmt_bytes(kept)} (the block input, the "
                f"attention output, every other matmul output), one block recomputed in backward "
                f"({fmt_bytes(per_layer)}: {described} GiB)"
            )
        elif saved.how == "offloaded":
            formula = (
                "offloaded to the host until backward needs them; one block at a time on the GPU "
                f"({fmt_bytes(per_layer)}: {described} GiB)"
            )
        elif saved.how == "full":
            formula = (
                f"full checkpointing: {in_flight} layers x {fmt_bytes(kept)} layer inputs, one block "
                f"recomputed in backward ({fmt_bytes(per_layer)}: {described} GiB)"
            )
        else:
            formula = f"{in_flight} layers x {fmt_bytes(per_layer)} (b={i.micro_batch}, s={i.seq_len}: {described} GiB)"
        return formula + f" + {fmt_bytes(saved.outer)} outside the blocks (ids, final norm, head input)"

    def forward_extras(self) -> _Forward:
        """What :class:`_Forward` holds (after :meth:`model_states`)."""
        return self.forward_extras_apart()._replace(accumulating=accumulating(self.i, self.states))

    def forward_extras_apart(self) -> _Forward:
        """:meth:`forward_extras` but the accumulated gradients (0 here): what reads no model state."""
        kept, logits_fwd, logits_bwd, logits_formula = self.logits()
        cached, copies_saved, copies_block = self.weight_copies()
        return _Forward(
            kept,
            logits_fwd,
            logits_bwd,
            logits_formula,
            cached,
            copies_saved,
            copies_block,
            self.gathered(),
            self.dequant(),
            0.0,
        )

    def _forward_moment(self, saved: _Saved, extras: _Forward) -> dict[str, float]:
        """What is alive in the forward pass at the loss, by name (the step's "forward" moment)."""
        return forward_moment(self.states, saved, extras)

    def floor(self, saved: _Saved, extras: _Forward) -> float:
        """A lower bound of the step's peak: what the forward pass holds at the loss (every state that no
        moment frees, :meth:`held_throughout`, the saved activations, the logits, the weight copies,
        the gathered units, the accumulated gradients), one of the moments the peak is the largest of;
        summed as :meth:`estimate` sums that moment, so the bound holds to the last bit."""
        return floor_of(self.states, saved, extras)

    def adopt(self, states: States) -> None:
        """Take the model states :meth:`model_states` makes (:func:`states_of`) instead of making them."""
        self.states = list(states.states)
        self.host = states.host
        self.notes.extend(states.notes)

    def estimate(
        self, *, saved: _Saved | None = None, extras: _Forward | None = None
    ) -> tuple[list[Component], float, str, dict[str, float], list[str], float]:
        """The components, the peak, its phase, each phase's peak, the notes and the host bytes;
        ``saved`` and ``extras``: :meth:`model_states` was called already, and these are
        :meth:`saved_activations` and :meth:`forward_extras`."""
        i, s = self.i, self.shards
        if saved is None or extras is None:
            self.model_states()
            saved, extras = self.saved_activations(), self.forward_extras()
        tokens, terms, per_layer, outer = saved.tokens, saved.terms, saved.per_layer, saved.outer
        recomputed, formula = saved.recomputed, self._saved_formula(saved)
        saved_bytes = saved.saved
        kept, logits_fwd, logits_bwd, logits_formula = (
            extras.kept,
            extras.logits_fwd,
            extras.logits_bwd,
            extras.logits_formula,
        )
        cached, copies_saved, copies_block = extras.cached, extras.copies_saved, extras.copies_block
        gathered, dequant, accumulating = extras.gathered, extras.dequant, extras.accumulating
        step, temps = self.step_transient(), self.backward_temporaries(tokens, terms)
        grads = sum(c.bytes for c in self.states if c.category == "gradients")
        fixed = self.held_throughout()
        if i.optimizer_in_backward:  # each parameter is stepped, and its gradient freed, as it arrives
            grads = self._largest_trainable() * (2 if self.true16 else 4)
        head_grad = accumulating or min(grads, self.head_gradient())
        shared = {**fixed, "gathered_params": gathered, "dequant_buffer": dequant}
        prefetched = {**shared, "gathered_params": self.gathered(blocks=2)}
        block_copies = copies_saved + (copies_block if recomputed else 0.0)
        at_loss = self._forward_moment(saved, extras)
        forward = {key: value for key, value in at_loss.items() if key != "logits"}
        moments: dict[str, dict[str, float]] = {
            "forward, first block": {
                **shared,
                "gathered_params": self.gathered(blocks=2, roots=2),
                "gradients": accumulating,
                "activations": outer,
            },
            "forward, blocks": {**forward, "gathered_params": self.gathered(blocks=3)},
            "forward": at_loss,
            "backward": {
                **shared,
                "gradients": accumulating,
                "activations": saved_bytes + outer,
                "weight_copies": copies_saved,
                "logits": kept,
                "loss_backward": logits_bwd - kept,
            },
            "backward, first block": {
                **prefetched,
                "gradients": head_grad,
                "activations": saved_bytes + outer + (per_layer if recomputed else 0.0),
                "weight_copies": block_copies,
                "backward_temporaries": temps,
            },
            "late backward": {
                **prefetched,
                "gradients": grads,
                "activations": per_layer + (copies_block if recomputed else 0.0),
                "backward_temporaries": temps,
            },
        }
        root, block_grads = self.root_gradients(), self.block_gradients()
        if block_grads:
            # the sharded gradients so far: all but this block's (and the root's, reduced last)
            earlier = grads - self.reduce_bytes * (s.unit + s.root) / max(1, s.shard)
            moments["backward, block reduce-scatter"] = {
                **shared,
                "gradients": earlier,
                "block_gradients": block_grads,
            }
        if root:
            earlier = grads - self.reduce_bytes * s.root / max(1, s.shard)
            moments["root reduce-scatter"] = {**fixed, "gradients": earlier, "root_gradients": root}
        if not i.optimizer_in_backward:
            moments["optimizer step"] = {**fixed, "gradients": grads, "optimizer_step_buffers": step}
        totals = {name: sum(values.values()) for name, values in moments.items()}
        moment = max(totals, key=lambda name: totals[name])
        peak = totals[moment]
        at_peak = moments[moment]
        phase = _phase_of(moment)
        phases: dict[str, float] = {}
        for name, total in totals.items():
            key = _phase_of(name)
            phases[key] = max(phases.get(key, 0.0), total)
        parts: list[Component] = []
        for state in self.states:
            if state.category == "gradients" and i.optimizer_in_backward:
                continue
            alive = at_peak.get(state.name, 0.0) > 0 or (
                state.category == "gradients" and at_peak.get("gradients", 0.0) > 0
            )
            parts.append(
                Component(
                    state.name, state.bytes, state.formula, state.kind, state.pageable, state.category, alive
                )
            )
        if i.optimizer_in_backward and grads:
            parts.append(
                Component(
                    "gradients",
                    grads,
                    "optimizer in backward: one parameter's gradient at a time",
                    "transient",
                    category="gradients",
                    at_peak=at_peak.get("gradients", 0) > 0,
                )
            )
        transients = (
            ("activations", saved_bytes + outer, formula, "activation", "activations"),
            (
                "weight_copies",
                cached,
                "autocast's 16-bit copies of the fp32 weights matmuls read (2 B per parameter)",
                "transient",
                "activations",
            ),
            ("logits", logits_fwd, logits_formula, "activation", "activations"),
            (
                "loss_backward",
                logits_bwd - kept,
                "cross-entropy's backward: two fp32 gradients of the logits",
                "transient",
                "temporaries",
            ),
            (
                "gathered_params",
                gathered,
                "FSDP: the root unit + the blocks being gathered, in the gather dtype (FSDP2 all-gather buffers "
                "and their copy-out; ZeRO-3: DeepSpeed's 4 B x the largest module and the prefetch bucket)",
                "transient",
                "parameters",
            ),
            (
                "dequant_buffer",
                dequant,
                "one linear dequantised to 16 bits (bitsandbytes gemm_4bit)",
                "transient",
                "temporaries",
            ),
            (
                "backward_temporaries",
                temps,
                "gradients of one block's intermediates during its backward",
                "transient",
                "temporaries",
            ),
            (
                "optimizer_step_buffers",
                step,
                "foreach temporaries of the optimizer step",
                "transient",
                "optimizer",
            ),
            (
                "block_gradients",
                block_grads,
                "FSDP: one block's unsharded gradients and its reduce-scatter input",
                "transient",
                "temporaries",
            ),
            (
                "root_gradients",
                root,
                "FSDP: the root unit's unsharded gradients and its reduce-scatter input",
                "transient",
                "temporaries",
            ),
        )
        for name, nominal, text, kind, category in transients:
            if not nominal:
                continue
            value = at_peak.get(name, 0.0)
            parts.append(Component(name, value or nominal, text, kind, category=category, at_peak=value > 0))
        return parts, peak, phase, phases, self.notes, self.host

    def _largest_trainable(self) -> float:
        arch = self.arch
        if self.i.frozen_base:
            return max(
                (arch.lora_params_per_layer(self.i.lora_rank, (role,)) for role in self.roles), default=0
            )
        return (
            max(arch.vocab * arch.embedding_width, *(a * b for a, b in arch.linear_shapes().values()))
            / self.i.tp
        )


class States(NamedTuple):
    """What :meth:`Training.model_states` makes: the states, the bytes offloaded to the host, its notes."""

    states: tuple[Component, ...]
    host: float
    notes: tuple[str, ...]


def held_throughout(states: Iterable[Component]) -> dict[str, float]:
    """:meth:`Training.held_throughout` of these states."""
    return {c.name: c.bytes for c in states if c.category != "gradients" and not c.pageable}


def accumulating(inputs: MemoryInputs, states: Iterable[Component]) -> float:
    """The gradients of earlier micro-batches, alive through the forward of the next (accumulation)."""
    if inputs.grad_accum > 1 and not inputs.optimizer_in_backward:
        return sum(c.bytes for c in states if c.category == "gradients")
    return 0.0


def forward_moment(states: Iterable[Component], saved: _Saved, extras: _Forward) -> dict[str, float]:
    """What is alive in the forward pass at the loss, by name (the step's "forward" moment)."""
    return {
        **held_throughout(states),
        "gathered_params": extras.gathered,
        "dequant_buffer": extras.dequant,
        "gradients": extras.accumulating,
        "activations": saved.saved + saved.outer,
        "weight_copies": extras.cached,
        "logits": extras.logits_fwd,
    }


def floor_of(states: Iterable[Component], saved: _Saved, extras: _Forward) -> float:
    """:meth:`Training.floor` of these states, saved activations and forward extras."""
    return sum(forward_moment(states, saved, extras).values())


def floor_before_extras(states: Iterable[Component], saved: _Saved, accumulating: float) -> float:
    """The terms of :func:`floor_of` that the states and the saved activations give (the states that no
    moment frees, the accumulated gradients, the saved activations), summed in the order
    :func:`forward_moment` puts them in; the terms left out (logits, weight copies, gathered units) are
    never negative, so this is never more than :func:`floor_of`, to the last bit (rounding a sum of
    non-negative terms only grows as terms are added). Three in four of the estimates MEM001's fix search
    stops half-way are stopped here, before the forward's other terms are made."""
    return sum(held_throughout(states).values()) + accumulating + (saved.saved + saved.outer)


# The parts of the forward moment, each a function of the inputs (and facts) alone, so that
# :class:`~rigcheck.core.estimate.memory.reads.ReadMemo` can keep them by what they read.


def states_of(inputs: MemoryInputs, facts: Mapping[str, Any]) -> States:
    """:meth:`Training.model_states` of ``inputs``."""
    training = Training(inputs, facts)
    start = len(training.notes)
    training.model_states()
    return States(tuple(training.states), training.host, tuple(training.notes[start:]))


def saved_of(inputs: MemoryInputs, facts: Mapping[str, Any]) -> _Saved:
    """:meth:`Training.saved_activations` of ``inputs`` (which reads no model state)."""
    return Training(inputs, facts).saved_activations()


def extras_apart_of(inputs: MemoryInputs, facts: Mapping[str, Any]) -> _Forward:
    """:meth:`Training.forward_extras_apart` of ``inputs``."""
    return Training(inputs, facts).forward_extras_apart()
