"""Each memory component and speed formula, against numbers worked by hand from its source."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.estimate import alternatives, largest_micro_batch
from rigcheck.core.estimation.architecture import Architecture, architecture_from_mapping, find_preset
from rigcheck.core.estimation.memory import GIB, MemoryInputs, _Training, estimate_memory
from rigcheck.core.estimation.throughput import decode_speed, training_speed
from rigcheck.core.facts import load_rule_facts

FACTS = load_rule_facts("memory")


def preset(name: str, **changes) -> Architecture:  # type: ignore[no-untyped-def]
    return replace(architecture_from_mapping(find_preset(name), name=name), **changes)


GPT_BLOCK = Architecture(  # the block Korthikanti et al. analyse: f = 4h, MHA, LayerNorm, dropout, GELU
    name="gpt",
    family="gpt2",
    kind="decoder",
    layers=1,
    hidden=4096,
    heads=32,
    kv_heads=32,
    head_dim=128,
    ffn=16384,
    vocab=50257,
    mlp="gelu",
    norm="layernorm",
    dropout=True,
    position="learned",
    max_position=2048,
)


def test_korthikanti_gpt_block_activations() -> None:
    """sbh(34 + 5as/h) bytes per layer in 16-bit (arXiv:2205.05198 eq. 1), s=2048, b=1, h=4096, a=32."""
    inputs = MemoryInputs(GPT_BLOCK, precision="bf16-true", micro_batch=1, seq_len=2048, attention="eager")
    terms = _Training(inputs, FACTS).layer_terms(2048)
    sbh = 2048 * 1 * 4096
    expected = sbh * (34 + 5 * 32 * 2048 / 4096)  # 285,212,672 + 671,088,640
    assert sum(terms.values()) == expected == 956_301_312
    assert terms["attention_scores"] == 5 * 32 * 2048**2
    flash = _Training(replace(inputs, attention="flash"), FACTS).layer_terms(2048)
    assert sum(flash.values()) == 34 * sbh  # no s x s scores with flash attention


def test_korthikanti_tensor_and_sequence_parallel() -> None:
    """TP only: sbh(10 + 24/t + 5as/(ht)); TP + SP: sbh/t (34 + 5as/h)."""
    t, sbh = 4, 2048 * 4096
    tp = _Training(
        MemoryInputs(GPT_BLOCK, precision="bf16-true", seq_len=2048, attention="eager", tp=t), FACTS
    )
    assert sum(tp.layer_terms(2048).values()) == pytest.approx(
        sbh * (10 + 24 / t + 5 * 32 * 2048 / (4096 * t))
    )
    sp = _Training(
        MemoryInputs(GPT_BLOCK, precision="bf16-true", seq_len=2048, attention="eager", tp=t, sp=True), FACTS
    )
    assert sum(sp.layer_terms(2048).values()) == pytest.approx(sbh / t * (34 + 5 * 32 * 2048 / 4096))


def test_full_checkpointing_keeps_layer_inputs_plus_one_layer() -> None:
    arch = replace(GPT_BLOCK, layers=24)
    full = estimate_memory(
        MemoryInputs(
            arch, precision="bf16-true", seq_len=2048, attention="flash", activation_checkpointing="full"
        )
    )
    layer_input = 2 * 2048 * 4096  # 16-bit layer input, b=1
    one_layer = 34 * 2048 * 4096
    outer = 8 * 2048 + 2048 * 4096 + 2 * 2048 * 4096 + 2 * 2048 * 4096  # ids, dropout mask, final norm in/out
    assert full.component("activations").bytes == 24 * layer_input + one_layer + outer


def test_llama3_70b_kv_cache_at_8k_with_gqa() -> None:
    """2 (K, V) x 80 layers x 8 KV heads x 128 x 2 B x 8192 tokens = 2.5 GiB per sequence."""
    arch = preset("llama-3-70b")
    one = estimate_memory(
        MemoryInputs(arch, task="inference", precision="bf16-mixed", concurrency=1, context_len=8192)
    )
    assert one.component("kv_cache").bytes == 2 * 80 * 8 * 128 * 2 * 8192 == 2_684_354_560
    tp8 = estimate_memory(
        MemoryInputs(arch, task="inference", precision="bf16-mixed", concurrency=32, context_len=8192, tp=8)
    )
    assert tp8.component("kv_cache").bytes == 2 * 80 * 1 * 128 * 2 * 8192 * 32  # one KV head per rank
    mha = replace(arch, kv_heads=64)  # without GQA: 8x the cache
    assert (
        estimate_memory(MemoryInputs(mha, task="inference", concurrency=1, context_len=8192))
        .component("kv_cache")
        .bytes
        == 8 * 2_684_354_560
    )


def test_nf4_bytes_of_llama3_8b_with_bf16_embeddings_and_head() -> None:
    """Linear layers at 4.127 bits (NF4 + double quantisation, QLoRA paper); embeddings, head and
    norms stay bf16."""
    arch = preset("llama-3-8b")
    linear_per_layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # q, o, k, v, gate/up/down
    assert arch.linear_params == 32 * linear_per_layer == 6_979_321_856
    other = 2 * 128256 * 4096 + (2 * 32 + 1) * 4096  # embeddings + untied head + 65 RMSNorm vectors
    estimate = estimate_memory(
        MemoryInputs(
            arch, task="qlora", precision="bf16-true", lora_rank=8, lora_targets=("q_proj", "v_proj")
        )
    )
    expected = 6_979_321_856 * 4.127 / 8 + other * 2
    assert estimate.component("weights").bytes == pytest.approx(expected)
    assert expected / GIB == pytest.approx(5.31, abs=0.01)


def test_lora_adapter_parameters() -> None:
    """r (d_in + d_out) per adapted linear: Llama-2-7B, r=16 on q, k, v, o = 32 x 4 x 16 x 8192."""
    arch = preset("llama-2-7b")
    roles = arch.lora_roles(["q_proj", "k_proj", "v_proj", "o_proj"])
    assert arch.lora_params_per_layer(16, roles) * 32 == 16_777_216
    estimate = estimate_memory(
        MemoryInputs(
            arch,
            task="lora",
            precision="bf16-mixed",
            lora_rank=16,
            lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"),
        )
    )
    assert (
        estimate.component("adapters").bytes == 16_777_216 * 16
    )  # fp32 adapters: weight, grad, AdamW m and v
    assert estimate.component("weights").bytes == arch.params * 2  # frozen bf16 base


def test_gpt2_and_qwen1_target_names() -> None:
    gpt2 = preset("gpt2-124m")
    assert gpt2.lora_roles(["c_attn"]) == ("q", "k", "v")
    assert set(gpt2.lora_roles(["c_proj"])) == {"o", "down"}  # matches attention and MLP projections
    qwen = preset("qwen-1.8b")
    assert set(qwen.lora_roles(["c_attn", "c_proj", "w1", "w2"])) == {
        "q",
        "k",
        "v",
        "o",
        "down",
        "up",
        "gate",
    }
    with pytest.raises(ValueError, match="did you mean 'q_proj'"):
        preset("llama-3-8b").lora_roles(["q_prj"])


def test_model_states_per_precision_and_sharding() -> None:
    """AMP + AdamW = 18 B/param (HF model_memory_anatomy); bf16-true AdamW = 8; ZeRO-2 = 2 + 18/N
    and ZeRO-3 = 18/N + 4 x largest module (DeepSpeed's estimators)."""
    arch = preset("llama-2-7b")
    p = arch.params

    def states(**kw) -> float:  # type: ignore[no-untyped-def]
        est = estimate_memory(MemoryInputs(arch, micro_batch=1, seq_len=16, **kw))
        return sum(c.bytes for c in est.components if c.kind == "state")

    assert states(precision="bf16-mixed") == pytest.approx(18 * p)
    assert states(precision="bf16-true") == pytest.approx(8 * p)
    assert states(precision="32-true") == pytest.approx(16 * p)
    assert states(precision="bf16-mixed", optimizer="adamw-8bit") == pytest.approx(12 * p)
    assert states(precision="bf16-mixed", optimizer="sgd") == pytest.approx(10 * p)
    assert states(precision="bf16-mixed", dp=8, zero=2) == pytest.approx((2 + 18 / 8) * p)
    zero3 = estimate_memory(MemoryInputs(arch, precision="bf16-mixed", dp=8, zero=3, seq_len=16))
    assert sum(c.bytes for c in zero3.components if c.kind == "state") == pytest.approx(20 / 8 * p)
    assert zero3.component("gathered_params").bytes == 4 * 32000 * 4096  # the embedding is the largest module
    ddp = estimate_memory(MemoryInputs(arch, precision="bf16-mixed", dp=8, seq_len=16))
    assert ddp.component("ddp_buckets").bytes == pytest.approx(4 * p)  # one more copy of fp32 gradients


def test_logits_and_totals() -> None:
    """Logits: tokens x vocab x 10 B (16-bit logits + fp32 upcast + fp32 grad); chunked: 3 B.
    Totals: reserved = allocated x 1.10; device = reserved + 0.5 GiB context."""
    arch = preset("llama-3.2-3b")
    inputs = MemoryInputs(arch, precision="bf16-true", micro_batch=2, seq_len=4096)
    estimate = estimate_memory(inputs)
    assert estimate.component("logits").bytes == 2 * 4096 * 128256 * 10
    chunked = estimate_memory(replace(inputs, loss="chunked"))
    assert chunked.component("logits").bytes == 2 * 4096 * 128256 * 3
    assert estimate.reserved == pytest.approx(estimate.allocated * 1.10)
    assert estimate.device == pytest.approx(estimate.reserved + 0.5 * GIB)


def test_eager_attention_keeps_scores_and_sdpa_expands_gqa() -> None:
    arch = preset("llama-3-8b")
    base = MemoryInputs(arch, precision="bf16-true", micro_batch=1, seq_len=4096)
    flash = _Training(replace(base, attention="flash"), FACTS).layer_terms(4096)
    sdpa = _Training(replace(base, attention="sdpa"), FACTS).layer_terms(4096)
    eager = _Training(replace(base, attention="eager"), FACTS).layer_terms(4096)
    assert flash["q_k_v"] == 2 * 4096 * (4096 + 2 * 1024)  # native GQA: K and V at 8 heads
    assert sdpa["q_k_v"] == 2 * 4096 * (3 * 4096)  # repeat_kv copies K and V to 32 heads
    assert eager["attention_scores"] == 32 * 4096 * 4096 * 6  # fp32 softmax output + 16-bit copy


def test_largest_micro_batch_and_alternatives() -> None:
    arch = preset("llama-2-7b")
    inputs = MemoryInputs(
        arch,
        task="lora",
        precision="bf16-true",
        micro_batch=4,
        grad_accum=1,
        seq_len=2048,
        lora_rank=16,
        lora_targets=("q_proj", "v_proj"),
    )
    capacity = 24 * GIB
    largest = largest_micro_batch(inputs, capacity)
    assert estimate_memory(replace(inputs, micro_batch=largest)).device <= capacity
    assert estimate_memory(replace(inputs, micro_batch=largest + 1)).device > capacity
    options = alternatives(inputs, capacity)
    fitting = [option for option in options if option.fits]
    assert fitting
    first = options[0]
    assert first.changes == {"micro_batch": 2, "grad_accum": 2}  # same global batch
    assert any(option.name == "activation checkpointing" and option.fits for option in options)


def test_training_flops_and_run_time() -> None:
    """6 P + 12 L (a d) s FLOPs per token (PaLM appendix B); time = tokens / (peak x MFU)."""
    from rigcheck.core.catalog import Catalog, load_catalog_file

    catalog = Catalog()
    load_catalog_file("specs/hardware/gpus.yaml", catalog)
    gpu = catalog.lookup("RTX 4090")
    arch = preset("gpt2-124m")
    inputs = MemoryInputs(arch, precision="bf16-mixed", micro_batch=8, seq_len=1024, grad_accum=16)
    speed = training_speed(inputs, gpu, load_rule_facts("throughput"), gpus=1, run_tokens=5e8)
    matmul = arch.block_params + arch.vocab * arch.hidden
    per_token = 6 * matmul + 12 * 12 * 768 * 1024
    assert speed.flops_per_token == per_token
    assert speed.tokens_per_second.default == pytest.approx(165.2e12 * 0.35 / per_token)
    assert speed.run_hours.default == pytest.approx(5e8 / speed.tokens_per_second.default / 3600)
    assert 1.5 < speed.run_hours.default < 3.0  # 0.86 GFLOP/token at 57.8 TFLOP/s: about 2.1 h


def test_decode_speed_is_bandwidth_bound() -> None:
    """(weights + concurrency x KV read) / (bandwidth x MBU)."""
    from rigcheck.core.catalog import Catalog, load_catalog_file

    catalog = Catalog()
    load_catalog_file("specs/hardware/gpus.yaml", catalog)
    gpu = catalog.lookup("H100 SXM")
    arch = preset("llama-3-8b")
    inputs = MemoryInputs(arch, task="inference", precision="bf16-mixed", concurrency=1, context_len=2048)
    weights = arch.params * 2
    speed = decode_speed(inputs, gpu, load_rule_facts("throughput"), weight_bytes=weights, engine="vllm")
    kv_half = 2 * 32 * 8 * 128 * 2 * 2048 / 2
    expected = 3350e9 * 0.70 / (weights + kv_half)
    assert speed.tokens_per_second_per_seq.default == pytest.approx(expected)
    assert speed.binds == "memory bandwidth"
    assert 140 < expected < 150  # about 146 tokens/s for one sequence


def test_mixture_of_experts() -> None:
    """Mixtral 8x7B: all 8 experts are held (46.7B params), 2 are active per token (FLOPs and
    activations)."""
    from rigcheck.core.estimation.throughput import matmul_params

    arch = preset("mixtral-8x7b")
    assert arch.params == pytest.approx(46.70e9, rel=0.001)
    per_expert = 3 * 4096 * 14336
    active = arch.block_params - 32 * per_expert * 6 + 32000 * 4096  # 6 of 8 experts idle, plus the LM head
    assert matmul_params(MemoryInputs(arch)) == active
    terms = _Training(MemoryInputs(arch, precision="bf16-true", seq_len=1024), FACTS).layer_terms(1024)
    assert terms["mlp_intermediate"] == 4 * 2 * 1024 * 14336 * 2  # top-2: twice one expert's SwiGLU tensors
    ep = estimate_memory(MemoryInputs(arch, precision="bf16-true", seq_len=16, dp=8, ep=8))
    full = estimate_memory(MemoryInputs(arch, precision="bf16-true", seq_len=16, dp=8))
    assert ep.component("weights").bytes < full.component("weights").bytes / 3  # experts split 8 ways


def test_offload_and_fsdp_hybrid_shard() -> None:
    arch = preset("llama-2-7b")
    p = arch.params
    offload = estimate_memory(
        MemoryInputs(arch, precision="bf16-mixed", dp=8, zero=2, offload="cpu", seq_len=16)
    )
    assert offload.component("optimizer_states") is None  # in host RAM
    assert offload.component("weights").bytes == pytest.approx(2 * p)
    hybrid = estimate_memory(
        MemoryInputs(arch, precision="bf16-mixed", dp=32, fsdp="hybrid_shard", gpus_per_node=8, seq_len=16)
    )
    assert hybrid.component("weights").bytes == pytest.approx(4 * p / 8)  # sharded within the node only
