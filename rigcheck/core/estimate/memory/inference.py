"""Per-GPU memory of inference: weights, the KV cache, the forward pass's intermediates, and what a
serving engine adds (docs/research/vram.md section 3).

transformers' ``generate`` (and the tracer) keep the weights, the KV cache and, during the prefill,
one block's intermediates at a time: the residual stream, the MLP's gate/up/activation (3 tensors of
width f, 2 for plain MLPs) and the fp32 logits of the last position only (``logits_to_keep=1``).

vLLM claims ``gpu_memory_utilization`` of the GPU's total memory for everything but its start-up
state and CUDA graphs: the weights, the peak of a profiling forward pass over
``max_num_batched_tokens`` tokens (or of its sampler warm-up over ``max_num_seqs`` sequences, whichever
is larger), the non-torch memory the forward adds (NCCL and custom all-reduce buffers at TP > 1), and
the KV cache gets the rest (vLLM worker ``determine_available_memory``; logged as "Total non KV cache
memory"). CUDA graphs are captured afterwards, outside that share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rigcheck.core.estimate.memory.inputs import MemoryInputs
from rigcheck.core.estimate.memory.quantized import quantized_weight_bytes
from rigcheck.core.estimate.memory.result import GIB, Component, billions, fmt_bytes
from rigcheck.core.estimate.memory.shards import Shards

KV_WIDTH = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def vllm_release(inputs: MemoryInputs, facts: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """The row of ``inference.vllm_versions`` (specs/rules/memory.yaml) for the workload's vLLM: the newest
    whose ``from`` is at or below ``versions.vllm`` (unset: ``vllm_unset_version``); the oldest row for a
    release older than every row."""
    from rigcheck.core.catalog.cuda_compat import parse_version

    if facts is None:
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("memory")["inference"]
    version = inputs.vllm_version or parse_version(str(facts["vllm_unset_version"])) or ()
    rows = sorted(facts["vllm_versions"], key=lambda row: parse_version(str(row["from"])) or ())
    at = [row for row in rows if (parse_version(str(row["from"])) or ()) <= version]
    return at[-1] if at else rows[0]


class Inference:
    def __init__(self, inputs: MemoryInputs, facts: Mapping[str, Any]) -> None:
        self.i = inputs
        self.arch = inputs.arch
        self.facts = facts
        self.shards = Shards(inputs)
        self.notes: list[str] = [*inputs.arch.notes, *inputs.implied]
        self.vllm = facts["inference"]

    @property
    def element(self) -> int:
        return 4 if self.i.precision == "32-true" else 2

    def weight_bytes(self) -> tuple[float, str]:
        i, s = self.i, self.shards
        base = 4 if i.precision == "32-true" else 1 if i.precision == "fp8-mixed" else 2
        quantized = quantized_weight_bytes(i, s, self.facts, base)
        if quantized is not None:
            return quantized
        return s.params * base, f"{billions(s.params)} params x {base} B"

    def kv_bytes(self) -> tuple[float, str]:
        """2 (K and V) x layers x KV heads per rank x head_dim x bytes x sequences x tokens
        (vLLM cache_engine.get_cache_block_size; KV heads per TP rank = max(1, kv_heads / tp))."""
        i, arch, s = self.i, self.arch, self.shards
        per = KV_WIDTH.get(i.kv_cache_dtype or "", self.element)
        heads = max(1, arch.kv_heads // i.tp) if arch.kv_heads >= i.tp else 1
        tokens = i.context_len or i.seq_len
        value = 2 * s.layers_local * heads * arch.head_dim * per * i.concurrency * tokens
        return value, (
            f"2 x {s.layers_local} layers x {heads} KV heads x {arch.head_dim} x {per:g} B x "
            f"{i.concurrency} sequences x {tokens:,} tokens"
        )

    def _forward(self, tokens: float) -> float:
        """One block's intermediates for ``tokens`` tokens, in the model's dtype, per TP rank: the residual
        stream and its norm, the attention's q and output, and the MLP's widest moment: gate/up, the
        activation and their product for a gated MLP (3 of width f); for a mixture of experts the routed
        copies of the input and the output besides (sorted by expert, transformers' grouped_mm path);
        for GPT-2's ``gelu_new`` the input, 0.5 x, 1 + tanh and the product (4 of width f)."""
        arch, e, t = self.arch, self.element, self.i.tp
        if arch.experts > 1:
            mlp = arch.top_k * (4 * arch.ffn + 2 * arch.hidden) / t
        elif arch.gated:
            mlp = 3 * arch.ffn / t
        elif arch.act_fn == "gelu_new":
            mlp = 4 * arch.ffn / t
        else:
            mlp = 2 * arch.ffn / t
        return tokens * (mlp + 2 * arch.hidden + 2 * arch.q_dim / t) * e

    def _math_scores(self, sequences: int, prompt: int) -> float:
        """Multi-query K/V broadcast to SDPA (Falcon) run its math kernel: fp32 scores and softmax."""
        arch = self.arch
        if arch.family != "falcon" or arch.kv_heads == arch.heads or self.i.attention == "eager":
            return 0.0
        return sequences * arch.heads / self.i.tp * prompt * prompt * 8

    def activation_bytes(self) -> tuple[float, str]:
        i, arch, e = self.i, self.arch, self.element
        vocab = arch.vocab / i.tp if self.i.engine != "vllm" else arch.vocab
        if i.engine == "vllm":
            tokens, seqs = self._vllm_profile()
            forward = self._forward(tokens) + tokens * arch.hidden * e
            # the sampler runs where the logits are: the last pipeline stage
            sampler = (
                seqs * arch.vocab * float(self.vllm["vllm_sampler_bytes_per_logit"]) if i.holds_head else 0.0
            )
            value = max(forward, sampler)
            which = "sampler warm-up" if sampler >= forward else "profile forward"
            return value, (
                f"the larger of a {tokens:,}-token profile forward ({fmt_bytes(forward)}) and the sampler over "
                f"{seqs} sequences x {arch.vocab:,} vocab x {float(self.vllm['vllm_sampler_bytes_per_logit']):g} B "
                f"({fmt_bytes(sampler)}): the {which}"
            )
        prompt = i.prompt_len or i.context_len or i.seq_len
        tokens = i.concurrency * prompt
        scores = self._math_scores(i.concurrency, prompt)
        if i.attention == "eager":  # the 16-bit scores, their fp32 softmax and its 16-bit copy
            scores = i.concurrency * arch.heads / i.tp * prompt * prompt * (4 + 2 * e)
        logits = i.concurrency * vocab * 4 if i.holds_head else 0.0
        value = self._forward(tokens) + scores + logits
        return value, (
            f"prefill of {tokens:,} tokens: one block's intermediates"
            + (f" + eager scores {fmt_bytes(scores)}" if scores else "")
            + f" + {i.concurrency} x {vocab:,.0f} fp32 logits"
        )

    def _vllm_profile(self) -> tuple[int, int]:
        """The tokens of vLLM's profiling forward and its max_num_seqs: the workload's, else its release's
        defaults (V1: the defaults of ``inference``; V0, before 0.8: 512 with chunked prefill, which is on
        by default above 32,768 tokens of max_model_len from 0.5.3, else max(max_model_len, 2048); 256)."""
        from rigcheck.core.catalog.cuda_compat import parse_version

        i, facts = self.i, self.vllm
        if vllm_release(i, facts)["profile"] == "v1":
            tokens = i.max_num_batched_tokens or int(facts["vllm_max_num_batched_tokens"])
            if i.max_num_batched_tokens is None and not facts.get("vllm_chunked_prefill", True):
                tokens = max(tokens, i.context_len or 0)
            return tokens, i.max_num_seqs or int(facts["vllm_max_num_seqs"])
        length = i.context_len or 0
        chunked = length > int(facts["vllm_v0_chunked_prefill_above"]) and (i.vllm_version or ()) >= (
            parse_version(str(facts["vllm_v0_chunked_prefill_from"])) or ()
        )
        default = (
            int(facts["vllm_v0_max_num_batched_tokens"])
            if chunked
            else max(length, int(facts["vllm_v0_min_profile_tokens"]))
        )
        return i.max_num_batched_tokens or default, i.max_num_seqs or int(facts["vllm_v0_max_num_seqs"])

    def engine_parts(self) -> list[Component]:
        """vLLM's non-torch memory of the forward (NCCL, custom all-reduce and fusion workspaces at
        TP > 1) and the CUDA graphs it captures after sizing the KV cache."""
        if self.i.engine != "vllm":
            return []
        facts, tp = self.vllm, self.i.tp
        non_torch = float(facts["vllm_non_torch_gib"]["tp1" if tp == 1 else "tp_many"]) * GIB
        graphs = float(facts["vllm_cuda_graphs_gib"]) * GIB
        return [
            Component(
                "nccl_buffers",
                non_torch,
                f"vLLM's non-torch memory of the forward at tp {tp} (NCCL, custom all-reduce buffers)",
                "runtime",
                category="runtime",
            ),
            Component(
                "cuda_graphs",
                graphs,
                "CUDA graphs captured after the KV cache is sized, outside gpu_memory_utilization",
                "runtime",
                category="runtime",
            ),
        ]

    def estimate(self) -> tuple[list[Component], float]:
        weights, weights_formula = self.weight_bytes()
        kv, kv_formula = self.kv_bytes()
        act, act_formula = self.activation_bytes()
        components = [
            Component("weights", weights, weights_formula, "state", category="parameters"),
            Component("kv_cache", kv, kv_formula, "activation", category="activations"),
            Component("activations", act, act_formula, "activation", category="activations"),
            *self.engine_parts(),
        ]
        if self.i.engine == "vllm":
            utilization = self.i.gpu_memory_utilization or float(self.vllm["vllm_gpu_memory_utilization"])
            self.notes.append(
                f"vLLM claims {utilization:g} of the card up front and gives what is left after weights and "
                f"activations to the KV cache"
            )
        return components, weights + kv + act
