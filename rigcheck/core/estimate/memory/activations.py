"""What one training step keeps for backward, tensor by tensor, as the model code keeps it.

The numbers follow the modelling code people run (transformers' Llama, Gemma, Qwen2, Mixtral, GPT-2
and Falcon, PEFT's LoRA layers, bitsandbytes' 4-bit layers) and were checked against traces of that
code on fake tensors (``rigcheck.trace``, ``tests/data/traced/grid.yaml``). Megatron-style blocks
(``framework: megatron``) follow Korthikanti et al., "Reducing Activation Recomputation in Large
Transformer Models" (arXiv:2205.05198): ``sbh(34 + 5as/h)`` per layer, with its TP and SP splits.

Bytes per element come from the step's :class:`~rigcheck.core.estimate.memory.flow.Flow`:
``r`` the residual stream, ``c`` what linears and attention produce. Per block (Llama family):

- each RMSNorm keeps the fp32 view of its input (``x.to(float32)``, which ``pow`` saves) and, when
  its weight trains, the normalised product ``r``; Gemma's keeps an fp32 product;
- the linears reading a normed activation keep their input when their weight trains or carries a
  LoRA adapter: one shared tensor, or one 16-bit copy per linear under autocast;
- attention keeps q, k, v (grouped K/V read in place by SDPA's flash kernel; expanded with eager
  attention) and its output, plus ``heads x s x s`` probabilities (fp32 softmax + its 16-bit cast)
  with eager attention;
- a gated MLP keeps gate, up, the activation and, when the down projection saves it, their product.

GPT-2 keeps LayerNorm inputs, the fused QKV output and, for ``gelu_new`` (a Python formula), its
intermediates: in fp32 under autocast, because CUDA's autocast runs ``pow`` in fp32. Falcon's
multi-query attention reaches SDPA with K/V broadcast over the heads, which only the math kernel
accepts: it keeps fp32 copies of q, k, v and the fp32 ``heads x s x s`` probabilities.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from rigcheck.core.estimate.architecture import Architecture
from rigcheck.core.estimate.memory.flow import Flow
from rigcheck.core.estimate.memory.inputs import MemoryInputs

ATTENTION_INPUT_ROLES = ("q", "k", "v")
MLP_INPUT_ROLES = ("gate", "up")


class BlockModel(NamedTuple):
    """Saved bytes of one block for ``tokens`` tokens on one rank."""

    inputs: MemoryInputs
    flow: Flow
    adapted: frozenset[str]  # linear roles carrying a LoRA adapter

    @property
    def arch(self) -> Architecture:
        return self.inputs.arch

    @property
    def style(self) -> str:
        if self.inputs.megatron:
            return "megatron"
        family = self.arch.family
        if family in ("gpt2", "gpt_bigcode"):
            return "gpt2"
        if family == "falcon" or (self.arch.parallel_attention and self.arch.norm == "layernorm"):
            return "falcon"
        if self.arch.norm == "layernorm":
            return "layernorm"
        return "llama"

    # -- which linears save their input ---------------------------------------------------------------

    def trains(self, role: str) -> bool:
        return not self.inputs.frozen_base

    def keeps_quantized_input(self, role: str) -> bool:
        """bitsandbytes' quantised block linears keep their 16-bit input themselves (MatMul8bitLt; MatMul4Bit
        before 0.43.2: ``ctx.tensors = (A, B)``); the head is not quantised."""
        return self.inputs.quantized_linears_keep_input and role != "head"

    def saves_input(self, role: str) -> bool:
        return self.trains(role) or role in self.adapted or self.keeps_quantized_input(role)

    def linear_inputs(self, roles: Iterable[str], x_bytes: int) -> float:
        """Bytes per element of width kept by the linears in ``roles`` that read one activation of
        ``x_bytes`` per element (autocast copies it per linear; PEFT casts an adapter's input to the
        adapter's dtype and its dropout keeps a 1-byte mask)."""
        flow, dropout = self.flow, self.inputs.lora_dropout > 0
        shared = False
        own = 0.0
        for role in roles:
            if not self.saves_input(role):
                continue
            if role in self.adapted and not self.trains(role):
                if flow.autocast:
                    own += flow.compute + (1 if dropout else 0)
                elif dropout:
                    own += 1 + flow.adapter
                elif flow.adapter != x_bytes:
                    own += flow.adapter
                else:
                    shared = True
            elif flow.autocast and x_bytes != flow.compute:
                own += flow.compute
            else:
                shared = True
            if self.inputs.int8_keeps_transposed and self.keeps_quantized_input(role):
                own += 1  # its own int8 transposed copy of the input (CAt)
        return own + (x_bytes if shared else 0)

    # -- the blocks -------------------------------------------------------------------------------

    def terms(self, tokens: float) -> dict[str, float]:
        """Bytes one block keeps for ``tokens`` tokens, by term."""
        style = self.style
        if style == "megatron":
            return self._megatron(tokens)
        if style == "gpt2":
            return self._gpt2(tokens)
        if style == "falcon":
            return self._falcon(tokens)
        return self._llama(tokens, layernorm=style == "layernorm")

    def _attention(self, tokens: float, terms: dict[str, float], *, math_kernel: bool = False) -> None:
        """q, k, v, the output and (eager or math kernel) the probabilities; split by TP."""
        i, arch, c = self.inputs, self.arch, self.flow.compute
        t = i.tp
        s = i.seq_len / i.cp
        heads = arch.heads / t
        if math_kernel:
            wide = 4 if c < 4 else c  # the math kernel upcasts 16-bit inputs to fp32
            terms["q_k_v"] = wide * tokens * (arch.q_dim + 2 * arch.kv_dim) / t
            terms["attention_scores"] = 4 * heads * s * tokens
            terms["attention_output"] = c * tokens * arch.q_dim / t
            return
        eager = i.attention == "eager"
        kv = arch.q_dim if eager else arch.kv_dim  # eager attention repeats K/V to every head
        terms["q_k_v"] = c * tokens * (arch.q_dim + 2 * kv) / t
        terms["attention_output"] = c * tokens * arch.q_dim / t
        if eager:
            # the fp32 softmax output, and what the matmul with V reads: its 16-bit copy (none in fp32),
            # or, with dropout, the 1-byte mask and the dropped probabilities
            per = 4 + ((1 + c) if arch.dropout else (c if c < 4 else 0))
            terms["attention_scores"] = per * heads * s * tokens

    def _o_input(self, tokens: float) -> float:
        """An adapted o_proj keeps its own (cast) input; a trained one reads the attention output."""
        if self.trains("o"):
            return 0.0
        if "o" not in self.adapted:  # it reads the attention output, kept already; an int8 layer copies it
            keeps = self.keeps_quantized_input("o") and self.inputs.int8_keeps_transposed
            return tokens * self.arch.q_dim / self.inputs.tp if keeps else 0.0
        per = self.linear_inputs(("o",), self.flow.compute)
        return per * tokens * self.arch.q_dim / self.inputs.tp

    def _llama(self, tokens: float, *, layernorm: bool) -> dict[str, float]:
        i, arch, flow = self.inputs, self.arch, self.flow
        r, t = flow.residual, i.tp
        h = arch.hidden
        sp = t if i.sp else 1
        gemma = arch.model_type == "gemma"
        trains = not i.frozen_base
        terms: dict[str, float] = {}
        norms = 1 if arch.parallel_attention else 2
        if layernorm:
            per_norm = 4 if flow.autocast else r  # layer_norm keeps its (fp32 under autocast) input
            norm_out = 4 if flow.autocast else r
        else:
            per_norm = 4 + ((4 if gemma else r) if trains else 0)
            norm_out = r
        terms["norms"] = norms * per_norm * tokens * h / sp
        mlp_roles = ("gate", "up") if arch.gated else ("up",)
        inputs = self.linear_inputs(ATTENTION_INPUT_ROLES, norm_out)
        inputs += self.linear_inputs(mlp_roles, norm_out)
        terms["linear_inputs"] = inputs * tokens * h / sp
        self._attention(tokens, terms)
        o_input = self._o_input(tokens)
        if o_input:
            terms["o_input"] = o_input
        self._mlp(tokens, terms)
        if arch.dropout:
            terms["dropout_masks"] = 2 * tokens * h / sp
        return terms

    def _mlp(self, tokens: float, terms: dict[str, float]) -> None:
        i, arch, c = self.inputs, self.arch, self.flow.compute
        f, t = arch.ffn, i.tp
        down = self.linear_inputs(("down",), c)
        if arch.experts > 1:
            k = arch.top_k
            # sorted by expert: the routed copies of the input, gate_up, the activation, the product
            # (the down projection's input) and the down output kept for the routing weights
            per_token = k * (c * arch.hidden + 3 * c * f + down * f + c * arch.hidden)
            per_token += arch.shared_experts * ((3 * c + down) * f if arch.gated else (c + down) * f)
            terms["mlp_intermediate"] = per_token * tokens / t
            terms["router"] = 8 * tokens * arch.experts
            return
        if arch.gated:
            kept = 3 * c + down  # gate, up, act(gate); and the product when down saves its input
        elif arch.mlp == "relu":
            kept = c  # relu keeps its output (threshold backward), which is also the down projection's input
        else:
            kept = c + down  # the activation's input; its output is the down projection's input
        terms["mlp_intermediate"] = kept * tokens * f / t

    def _gpt2(self, tokens: float) -> dict[str, float]:
        """transformers' GPT2Block: ln_1, c_attn (fused QKV), attention, c_proj, dropout, ln_2, c_fc,
        gelu_new, c_proj, dropout."""
        i, arch, flow = self.inputs, self.arch, self.flow
        r, c, t = flow.residual, flow.compute, i.tp
        h, f = arch.hidden, arch.ffn
        sp = t if i.sp else 1
        ln = 4 if flow.autocast else r
        terms: dict[str, float] = {"norms": 2 * ln * tokens * h / sp}
        # c_attn holds q, k and v: one linear (one adapter) reads ln_1's output
        terms["linear_inputs"] = (
            (self.linear_inputs(("q",), ln) + self.linear_inputs(("up",), ln)) * tokens * h / sp
        )
        self._attention(tokens, terms)
        o_input = self._o_input(tokens)
        if o_input:
            terms["o_input"] = o_input
        down = self.linear_inputs(("down",), c)
        # gelu_new, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): pow keeps x, tanh its output, the
        # products (1 + tanh) and 0.5 x; under autocast pow runs in fp32 and everything after it is fp32
        gelu_new = (4 + 4 + 4 + c) if flow.autocast else 4 * c
        kept = gelu_new if arch.act_fn == "gelu_new" else c
        terms["mlp_intermediate"] = (kept + down) * tokens * f / t
        if arch.dropout:
            terms["dropout_masks"] = 2 * tokens * h / sp
        return terms

    def _falcon(self, tokens: float) -> dict[str, float]:
        """transformers' FalconDecoderLayer with parallel attention: one LayerNorm feeding the fused QKV
        and the MLP; multi-query K/V broadcast to SDPA run its math kernel."""
        i, arch, flow = self.inputs, self.arch, self.flow
        r, c, t = flow.residual, flow.compute, i.tp
        h = arch.hidden
        sp = t if i.sp else 1
        ln = 4 if flow.autocast else r
        norms = 1 if arch.parallel_attention else 2
        terms: dict[str, float] = {"norms": norms * ln * tokens * h / sp}
        # query_key_value (q, k and v in one linear) and dense_h_to_4h read the same LayerNorm output
        terms["linear_inputs"] = self.linear_inputs(("q", "up"), ln) * tokens * h / sp
        math_kernel = arch.kv_heads != arch.heads and i.attention != "eager"
        self._attention(tokens, terms, math_kernel=math_kernel)
        if math_kernel and self.saves_input("o"):
            terms["attention_output"] = c * tokens * arch.q_dim / t  # the permuted output, copied for dense
        self._mlp(tokens, terms)
        return terms

    def _megatron(self, tokens: float) -> dict[str, float]:
        """Korthikanti et al. (arXiv:2205.05198), rebuilt term by term: 16-bit activations, 1-byte
        dropout masks, norms' inputs, Q/K/V, attention output, s x s scores without flash, MLP
        intermediates (4 tensors of width f for gated MLPs, 2 for GELU); TP and SP as section 4."""
        i, arch, flow = self.inputs, self.arch, self.flow
        e, t = flow.compute, i.tp
        h, f = arch.hidden, arch.ffn
        sp = t if i.sp else 1
        residual = 4 if flow.autocast else e
        norm_in = 4 if (arch.norm == "rmsnorm" and e < 4) else residual
        terms: dict[str, float] = {}
        norms = 1 if arch.parallel_attention else 2
        terms["norm_inputs"] = norms * norm_in * tokens * h / sp
        terms["attention_input"] = e * tokens * h / sp
        kv_saved = arch.kv_dim if i.attention == "flash" else arch.q_dim
        terms["q_k_v"] = e * tokens * (arch.q_dim + 2 * kv_saved) / t
        terms["attention_output"] = e * tokens * arch.q_dim / t
        if i.attention == "eager" and i.activation_checkpointing != "selective":
            softmax = 4 if e == 4 else 6 if (flow.autocast or arch.norm == "rmsnorm") else 2
            dropout = (1 + e) if arch.dropout else 0
            terms["attention_scores"] = arch.heads * i.seq_len / i.cp * tokens * (softmax + dropout) / t
        if arch.dropout:
            terms["dropout_masks"] = 2 * tokens * h / sp
        if not arch.parallel_attention:
            terms["mlp_input"] = e * tokens * h / sp
        width = f * (arch.top_k if arch.experts > 1 else 1)
        kept = 4 if arch.gated else 1 if arch.mlp == "relu" else 2
        terms["mlp_intermediate"] = kept * e * tokens * width / t
        if arch.experts > 1:
            terms["router"] = 4 * tokens * arch.experts
        return terms

    def selective_saved(self, tokens: float) -> float:
        """Op-level selective checkpointing (torchtitan's ``selective_ac_option = "op"``, PyTorch's
        ``create_selective_checkpoint_contexts``): a block keeps its input, the attention kernel's output
        and every other matmul output (``_save_list``: mm, SDPA; ``mm_count % 2``), and recomputes the rest."""
        i, arch, c = self.inputs, self.arch, self.flow.compute
        t = i.tp
        mlp = (
            (2 if arch.gated else 1) * arch.ffn * (0 if arch.experts > 1 else 1)
        )  # grouped expert mm: not saved
        matmuls = (arch.q_dim + 2 * arch.kv_dim + arch.hidden + mlp + arch.hidden) / t
        return self.layer_input(tokens) + c * tokens * (matmuls / 2 + arch.q_dim / t)

    # -- outside the blocks -----------------------------------------------------------------------

    def layer_input(self, tokens: float) -> float:
        """What full checkpointing keeps per layer: the block's input (the residual stream)."""
        i = self.inputs
        return self.flow.residual * tokens * self.arch.hidden / (i.tp if i.sp else 1)

    def outer(self, tokens: float) -> dict[str, float]:
        """Input ids and labels, embedding dropout, the final norm and the head's input."""
        i, arch, flow = self.inputs, self.arch, self.flow
        h = arch.hidden
        terms: dict[str, float] = {}
        if i.holds_embedding:
            terms["token_ids"] = 16 * tokens
            if arch.dropout:
                terms["embedding_dropout"] = tokens * h
        if not i.holds_head:  # a pipeline stage before the last: no final norm or head
            return terms
        if self.style in ("gpt2", "falcon", "layernorm") or (
            self.style == "megatron" and arch.norm == "layernorm"
        ):
            norm = 4 if flow.autocast else flow.residual
            norm_out = norm
        else:
            trains = not i.frozen_base
            norm = 4 + ((4 if arch.model_type == "gemma" else flow.residual) if trains else 0)
            norm_out = flow.residual
        terms["final_norm"] = norm * tokens * h
        head = self.linear_inputs(("head",), norm_out) if not i.frozen_base or "head" in self.adapted else 0.0
        if head:
            terms["head_input"] = head * tokens * h
        return terms
