"""The tracing estimator (rigcheck.trace) on tiny models, against byte counts worked out by hand.

A trace runs transformers' Llama code (with PEFT, bitsandbytes, FSDP2) on fake tensors, so the sizes
of a model's tensors do not cost time: every case here traces in about a second on a CPU. The tiny
Llama of most cases, as the workload gives it::

    layers 2, hidden 256, heads 4 (head_dim 64), kv_heads 2 (kv_dim 128), ffn 512, vocab 1000, SwiGLU

Each count below is written as the arithmetic from those shapes. Beyond the parameters, a trace sees
two buffers of LlamaRotaryEmbedding (``inv_freq`` and ``original_inv_freq``: head_dim / 2 fp32 each)
and AdamW's ``step``, one fp32 scalar per parameter tensor. What the result reports is the breakdown
at the overall peak (``categories``) and the highest total of each phase (``phase_peaks``).

Without the extra ``trace`` the module is skipped; tests/test_trace_cli.py covers that case.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from rigcheck.core.estimate.estimate import GIB
from rigcheck.core.estimate.memory import estimate_memory
from rigcheck.trace import trace_memory
from rigcheck.trace.result import TraceResult

from .conftest import CliResult
from .traced_grid import inputs_of

# -- the tiny Llama, by hand ----------------------------------------------------------------------------

L, H, HEADS, KV_HEADS, FFN, V = 2, 256, 4, 2, 512, 1000
HD = H // HEADS  # 64
KV = KV_HEADS * HD  # 128
ATTENTION = H * H + H * KV + H * KV + H * H  # q, k, v, o: 196,608
MLP = H * FFN + H * FFN + FFN * H  # gate, up, down: 393,216
LAYER = ATTENTION + MLP + 2 * H  # + input and post-attention RMSNorm: 590,336
EMBEDDING = V * H  # 256,000
PARAMS = L * LAYER + EMBEDDING + H + V * H  # + final norm + untied head: 1,692,928
TENSORS = L * (7 + 2) + 3  # 7 linears and 2 norms a layer; embedding, final norm, head
ROTARY = 2 * (HD // 2) * 4  # inv_freq and original_inv_freq, fp32: 256 B
STEP = 4  # AdamW's step: an fp32 scalar per parameter tensor

MODEL = {"name": "tiny", "layers": L, "hidden": H, "heads": HEADS, "kv_heads": KV_HEADS, "ffn": FFN}
MODEL |= {"vocab": V, "mlp": "swiglu"}
SMALL_BATCH = {"micro": 1, "seq_len": 64}


def workload(task: str, precision: str = "bf16-mixed", **fields: Any) -> dict[str, Any]:
    """A workload mapping of the tiny Llama (``model``, ``batch`` and the rest may be given)."""
    out: dict[str, Any] = {"model": MODEL, "task": task, "precision": precision}
    if task != "inference":
        out |= {"optimizer": "adamw", "batch": SMALL_BATCH}
    return out | fields


def trace(mapping: dict[str, Any], name: str = "tiny") -> tuple[TraceResult, Any]:
    inputs = inputs_of({"id": name, "workload": mapping})
    return trace_memory(inputs), inputs


def test_the_hand_count_is_the_architectures() -> None:
    assert PARAMS == 1_692_928
    inputs = inputs_of(
        {"id": "tiny", "workload": {"model": MODEL, "task": "full_finetune", "batch": SMALL_BATCH}}
    )
    assert inputs.arch.params == PARAMS
    assert inputs.arch.linear_params == L * (ATTENTION + MLP)


# -- a. full fine-tune: parameters, gradients, AdamW states ------------------------------------------------


@pytest.mark.parametrize(
    ("precision", "width", "tied"),
    [("bf16-true", 2, False), ("bf16-true", 2, True), ("bf16-mixed", 4, False)],
)
def test_full_finetune_peaks_in_the_optimizer_step_with_every_state(
    precision: str, width: int, tied: bool
) -> None:
    """A small batch: the peak is the foreach AdamW step, where the parameters, their gradients, the
    states m and v (in the parameters' dtype: bf16 under bf16-true, fp32 under bf16-mixed) and the step's
    one temporary per parameter (``_foreach_sqrt(exp_avg_sq)``) are all alive, and no activation is."""
    params = PARAMS - (V * H if tied else 0)
    tensors = TENSORS - (1 if tied else 0)
    result, _ = trace(workload("full_finetune", precision, model={**MODEL, "tied_embeddings": tied}))
    assert result.phase == "optimizer step"
    assert result.world == 1
    c = result.categories
    assert c["parameters"] == params * width + ROTARY
    assert c["gradients"] == params * width
    assert c["optimizer"] == params * width * 2 + params * width + tensors * STEP  # m, v; sqrt(v); steps
    assert c["activations"] == 0 and c["temporaries"] == 0
    assert result.peak == params * width * 5 + ROTARY + tensors * STEP
    assert result.phase_peaks["optimizer step"] == result.peak
    assert max(result.phase_peaks["forward"], result.phase_peaks["backward"]) < result.peak


def test_fused_adamw_holds_8_bytes_of_state_per_fp32_parameter() -> None:
    """The fused step has no temporaries: its optimizer bytes are m and v (fp32) and the steps."""
    result, _ = trace(workload("full_finetune", optimizer_implementation="fused"))
    assert result.categories["optimizer"] == PARAMS * 8 + TENSORS * STEP
    assert result.categories["parameters"] == PARAMS * 4 + ROTARY
    # its peak is in backward now, before every gradient exists
    assert result.phase == "backward"
    assert 0 < result.categories["gradients"] < PARAMS * 4


# -- b. LoRA: the adapters' states ---------------------------------------------------------------------


def lora_params(rank: int, shapes: list[tuple[int, int]]) -> int:
    """r (d_in + d_out) per adapted linear of a layer, over the layers."""
    return L * sum(rank * (d_in + d_out) for d_in, d_out in shapes)


QV = [(H, H), (H, KV)]
ALL_LINEAR = [(H, H), (H, KV), (H, KV), (H, H), (H, FFN), (H, FFN), (FFN, H)]


@pytest.mark.parametrize(
    ("precision", "rank", "targets", "shapes", "adapter_width"),
    [
        # PEFT keeps adapters in fp32 under a 16-bit base; AdamW's m and v are fp32 too: 8 B a parameter
        ("bf16-mixed", 8, ["q_proj", "v_proj"], QV, 4),
        # bf16-true keeps everything in bf16: m and v 2 B each
        ("bf16-true", 16, ["all-linear"], ALL_LINEAR, 2),
    ],
)
def test_lora_optimizer_holds_the_adapters_states_only(
    precision: str, rank: int, targets: list[str], shapes: list[tuple[int, int]], adapter_width: int
) -> None:
    adapters = lora_params(rank, shapes)
    assert adapters == {8: 14_336, 16: 131_072}[rank]
    adapter_tensors = L * len(shapes) * 2  # lora_A and lora_B
    result, inputs = trace(workload("lora", precision, lora={"rank": rank, "targets": targets}))
    assert L * inputs.arch.lora_params_per_layer(rank, inputs.arch.lora_roles(targets)) == adapters
    c = result.categories
    assert c["optimizer"] == adapters * adapter_width * 2 + adapter_tensors * STEP
    assert c["parameters"] == PARAMS * 2 + adapters * adapter_width + ROTARY  # frozen bf16 base + adapters
    # the optimizer step adds the adapters' gradients and one foreach temporary of their size (sqrt(v));
    # the frozen base has no gradient
    step_peak = c["parameters"] + c["optimizer"] + adapters * adapter_width * 2
    assert result.phase_peaks["optimizer step"] == step_peak


@pytest.mark.parametrize(
    ("precision", "lora"),
    [
        ("bf16-mixed", {"rank": 4, "targets": ["q_proj", "v_proj"]}),
        ("bf16-true", {"rank": 4, "targets": ["all-linear"]}),
        ("32-true", {"rank": 8, "targets": ["q_proj", "down_proj"], "modules_to_save": ["lm_head"]}),
    ],
)
def test_traced_adapters_have_the_dtypes_peft_gives_real_ones(precision: str, lora: dict[str, Any]) -> None:
    """The trace makes PEFT's adapters itself (PEFT's own move of fake parameters is refused by torch);
    every parameter of the traced model has the shape, dtype and trainability PEFT gives the same
    model built on real tensors."""
    import torch
    from peft import LoraConfig, get_peft_model

    from rigcheck.trace.models import build_config, build_model
    from rigcheck.trace.step import traced_parameters

    inputs = inputs_of({"id": "tiny", "workload": workload("lora", precision, lora=lora)})
    traced = traced_parameters(inputs)
    base_dtype = traced["base_model.model.model.embed_tokens.weight"][1]
    assert base_dtype == (torch.float32 if precision == "32-true" else torch.bfloat16)
    real = build_model(build_config(inputs.arch, attention=inputs.attention), dtype=base_dtype)
    for parameter in real.parameters():
        parameter.requires_grad_(False)
    targets = "all-linear" if lora["targets"] == ["all-linear"] else lora["targets"]
    config = LoraConfig(
        r=lora["rank"],
        lora_alpha=2 * lora["rank"],
        lora_dropout=inputs.lora_dropout,
        target_modules=targets,
        modules_to_save=lora.get("modules_to_save"),
        task_type="CAUSAL_LM",
    )
    real = get_peft_model(real, config, autocast_adapter_dtype=precision != "bf16-true")

    def described(model: Any) -> dict[str, tuple[Any, ...]]:
        return {name: (tuple(p.shape), p.dtype, p.requires_grad) for name, p in model.named_parameters()}

    assert traced == described(real)
    assert any("lora_A" in name for name in traced)
    adapter_dtypes = {dtype for name, (_, dtype, _) in traced.items() if "lora_" in name}
    assert adapter_dtypes == {torch.bfloat16 if precision == "bf16-true" else torch.float32}


# -- c. the trace and the analytic estimate agree --------------------------------------------------------


@pytest.mark.parametrize(
    "mapping",
    [
        pytest.param(
            workload("full_finetune", attention="sdpa", batch={"micro": 2, "seq_len": 256}),
            id="full-finetune",
        ),
        pytest.param(workload("lora", lora={"rank": 8, "targets": ["q_proj", "v_proj"]}), id="lora"),
        pytest.param(
            workload(
                "inference", "bf16-true", inference={"concurrency": 4, "context_len": 1024, "prompt_len": 512}
            ),
            id="inference",
        ),
    ],
)
def test_traced_peak_agrees_with_the_analytic_estimate(mapping: dict[str, Any]) -> None:
    """Two independent models of the same step: the trace counts live tensors, the analytic estimate
    adds up formulas (rigcheck.core.estimate.memory). They agree to 3% on the allocated basis."""
    result, inputs = trace(mapping)
    estimate = estimate_memory(inputs)
    assert result.categories["activations"] > 0  # a peak with activations in it, not only states
    assert estimate.allocated == pytest.approx(result.peak, rel=0.03)


def test_decode_holds_the_weights_and_the_static_kv_cache() -> None:
    concurrency, context = 4, 1024
    serving = {"concurrency": concurrency, "context_len": context, "prompt_len": 512}
    result, _ = trace(workload("inference", "bf16-true", inference=serving))
    cache = L * 2 * concurrency * context * KV * 2  # k and v, bf16: 4 MiB
    assert result.phase == "prefill"
    assert result.categories["parameters"] == PARAMS * 2 + ROTARY
    decode_rest = result.phase_peaks["decode"] - (PARAMS * 2 + ROTARY) - cache
    assert 0 < decode_rest < 64 * 1024  # one token's hidden states and logits


# -- d. QLoRA: the 4-bit base ------------------------------------------------------------------------


@pytest.mark.parametrize("double_quant", [True, False])
def test_qlora_base_is_half_a_byte_per_linear_weight_plus_its_quant_state(double_quant: bool) -> None:
    """bitsandbytes packs two 4-bit weights a byte and keeps one absmax per block of 64 weights: fp32, or
    with double quantisation uint8 plus an fp32 absmax per 256 blocks and an fp32 offset. Embeddings,
    norms and the head stay bf16; the adapters (r 8 on q and v) are fp32."""
    pytest.importorskip("bitsandbytes")
    linears = [H * H, H * KV, H * KV, H * H, H * FFN, H * FFN, FFN * H]  # one layer's weights
    packed = L * sum(n // 2 for n in linears)
    if double_quant:
        quant_state = L * sum(n // 64 * 1 + math.ceil(n // 64 / 256) * 4 + 4 for n in linears)
    else:
        quant_state = L * sum(n // 64 * 4 for n in linears)
    assert packed == L * (ATTENTION + MLP) // 2 == 589_824
    assert quant_state == {True: 18_776, False: 73_728}[double_quant]
    sixteen_bit = EMBEDDING + V * H + L * 2 * H + H  # embedding, head, block norms, final norm
    adapters = lora_params(8, QV)
    lora = {"rank": 8, "targets": ["q_proj", "v_proj"]}
    result, _ = trace(workload("qlora", lora=lora, qlora={"double_quant": double_quant}))
    assert result.categories["parameters"] == packed + quant_state + sixteen_bit * 2 + ROTARY + adapters * 4
    assert result.categories["optimizer"] == adapters * 8 + L * 2 * 2 * STEP
    assert any("14 block linears as bitsandbytes 4-bit (nf4" in note for note in result.notes)


@pytest.mark.parametrize(("quantization", "double_quant"), [("nf4-dq", True), ("bnb.nf4", False)])
def test_four_bit_inference_holds_the_packed_weights_and_their_quant_state(
    quantization: str, double_quant: bool
) -> None:
    """Inference with bitsandbytes' 4-bit layers (litgpt's ``bnb.nf4-dq`` and ``bnb.nf4``): the same packed
    weights and absmax as QLoRA's base, double quantised or not, and no adapters."""
    pytest.importorskip("bitsandbytes")
    linears = [H * H, H * KV, H * KV, H * H, H * FFN, H * FFN, FFN * H]
    packed = L * sum(n // 2 for n in linears)
    if double_quant:
        quant_state = L * sum(n // 64 * 1 + math.ceil(n // 64 / 256) * 4 + 4 for n in linears)
    else:
        quant_state = L * sum(n // 64 * 4 for n in linears)
    sixteen_bit = EMBEDDING + V * H + L * 2 * H + H
    serving = {"concurrency": 1, "context_len": 64, "prompt_len": 32}
    result, inputs = trace(workload("inference", "bf16-true", quantization=quantization, inference=serving))
    assert result.categories["parameters"] == packed + quant_state + sixteen_bit * 2 + ROTARY
    double = ", double quant" if double_quant else ""
    assert any(f"14 block linears as bitsandbytes 4-bit (nf4{double})" in note for note in result.notes)
    # the analytic estimate counts the same scheme: 4 + 8/64 + 32/(64 x 256) bits with double quantisation
    assert inputs.quantization == ("nf4-dq" if double_quant else "nf4")


# -- e. FSDP2 over four fake ranks -------------------------------------------------------------------


def test_fsdp_full_shard_holds_a_quarter_of_every_state_padded_to_the_world() -> None:
    """16 layers keep the peak in the optimizer step, where every parameter is sharded again. FSDP2
    splits dim 0 into ceil(rows / 4) rows a rank: a vocabulary of 1002 rows pads to 1004 (rank 0 holds
    251), the blocks' dims (128 ... 512) and the final norm (256) split evenly."""
    layers, vocab, world = 16, 1002, 4
    total = layers * LAYER + 2 * vocab * H + H
    shard = layers * LAYER // world + 2 * math.ceil(vocab / world) * H + H // world
    assert shard == 2_489_920 and shard - total // world == 2 * (251 * H - vocab * H // world) == 256
    tensors = layers * 9 + 3
    result, inputs = trace(
        workload(
            "full_finetune",
            model={**MODEL, "layers": layers, "vocab": vocab},
            parallelism={"dp": world, "fsdp": "full_shard"},
            batch={"micro": 1, "seq_len": 16},
        )
    )
    assert inputs.arch.params == total
    assert result.world == world
    assert result.phase == "optimizer step"
    c = result.categories
    assert c["parameters"] == shard * 4 + ROTARY  # fp32 shards; the rotary buffers are not sharded
    assert c["gradients"] == shard * 4  # reduce-scattered in fp32
    assert c["optimizer"] == shard * 4 * 2 + shard * 4 + tensors * STEP
    assert any("over 4 fake ranks" in note for note in result.notes)


# -- f. the command line ---------------------------------------------------------------------------


CLI_MODEL = (
    "{name: tiny, layers: 2, hidden: 1024, heads: 8, kv_heads: 4, ffn: 4096, vocab: 32000, mlp: swiglu}"
)
# q, o 1024 x 1024; k, v 1024 x 512; gate, up, down 1024 x 4096; 2 norms; embedding, head 32000 x 1024
CLI_PARAMS = 2 * (2 * 1024 * 1024 + 2 * 1024 * 512 + 3 * 1024 * 4096 + 2 * 1024) + 2 * 32000 * 1024 + 1024


def cli_workload(tmp_path: Path) -> str:
    path = tmp_path / "tiny-cli.yaml"
    path.write_text(
        "apiVersion: rigcheck/v1\nkind: Workload\nname: tiny-cli\n"
        f"model: {CLI_MODEL}\ntask: full_finetune\nprecision: bf16-mixed\noptimizer: adamw\n"
        "batch: {micro: 1, seq_len: 128}\n"
    )
    return str(path)


def test_estimate_trace_prints_traced_beside_analytic(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    assert CLI_PARAMS == 96_998_400
    result = run_cli("estimate", cli_workload(tmp_path), "--trace")
    assert result.exit_code == 0, result.err
    out = result.out
    assert "traced: one step of the model code on fake tensors (torch " in out
    assert re.search(r"^ +traced +analytic  GiB$", out, re.M)
    gib = lambda n: f"{n / GIB:.2f}"  # noqa: E731
    assert gib(CLI_PARAMS * 4) == "0.36" and gib(CLI_PARAMS * 12) == "1.08"
    assert re.search(rf"^parameters +{gib(CLI_PARAMS * 4)} +\d+\.\d\d$", out, re.M), out
    assert re.search(rf"^gradients +{gib(CLI_PARAMS * 4)} +\d+\.\d\d$", out, re.M), out
    assert re.search(rf"^optimizer +{gib(CLI_PARAMS * 12)} +\d+\.\d\d$", out, re.M), out  # m, v, sqrt(v)
    assert re.search(rf"^allocated +{gib(CLI_PARAMS * 20)} +\d+\.\d\d$", out, re.M), out
    assert "  peak during the optimizer step; a trace does not see: the CUDA caching allocator" in out
    assert "rigcheck: tracing" in result.err and "Traceback" not in result.err


def test_estimate_trace_json_carries_the_trace(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    result = run_cli("estimate", cli_workload(tmp_path), "--trace", "-f", "json")
    assert result.exit_code == 0, result.err
    traced = result.json()["trace"]  # type: ignore[index]
    assert traced["categories_gib"]["parameters"] == round((CLI_PARAMS * 4 + 256) / GIB, 4)
    assert traced["phase"] == "optimizer step" and traced["world"] == 1
    rows = {row["category"]: row for row in traced["compared"]}
    assert list(rows) == ["parameters", "gradients", "optimizer", "allocated"]
    assert rows["allocated"]["traced_gib"] == round(traced["peak_gib"], 4)


# -- h. what a trace refuses once it has started ------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "task: full_finetune\nmodel: {name: t, family: gpt_bigcode, layers: 2, hidden: 256, heads: 4, ffn: 1024,"
            " vocab: 1000}\n",
            "rigcheck estimate --trace cannot build a gpt_bigcode-family model yet",
        ),
    ],
)
def test_estimate_trace_refusal_is_one_line_after_progress(
    run_cli: Callable[..., CliResult], tmp_path: Path, body: str, message: str
) -> None:
    text = "apiVersion: rigcheck/v1\nkind: Workload\nname: refused\nbatch: {micro: 1, seq_len: 64}\n" + body
    if "model:" not in body:
        text += "model: {name: t, layers: 2, hidden: 256, heads: 4, ffn: 512, vocab: 1000}\n"
    path = tmp_path / "refused.yaml"
    path.write_text(text)
    result = run_cli("estimate", str(path), "--trace")
    assert result.exit_code == 2
    assert result.out == ""
    *progress, last = result.err.splitlines()
    assert last.startswith(message), result.err
    assert all(line.startswith("rigcheck: tracing") for line in progress), result.err


# -- the running-peak tracker, on and off ----------------------------------------------------------------


@pytest.mark.parametrize(
    "mapping",
    [
        workload("full_finetune", activation_checkpointing=True),
        workload("lora", lora={"rank": 4, "targets": ["q_proj", "v_proj"]}),
        workload("full_finetune", parallelism={"dp": 4, "fsdp": "full_shard"}),
        workload("inference", inference={"context_len": 128, "concurrency": 2}),
    ],
    ids=["checkpointed", "lora", "fsdp", "inference"],
)
def test_keeping_only_the_running_peak_changes_no_result(mapping: dict[str, Any]) -> None:
    """The tracker without the per-module peaks (the optimisation) and torch's whole tracker give the same
    peak, breakdown and phase peaks."""
    from rigcheck.trace.step import trace_step

    inputs = inputs_of({"id": "tiny", "workload": mapping})
    fast, whole = trace_step(inputs), trace_step(inputs, peak_only=False)
    assert (fast.peak, fast.phase, dict(fast.categories), dict(fast.phase_peaks)) == (
        whole.peak,
        whole.phase,
        dict(whole.categories),
        dict(whole.phase_peaks),
    )


# -- nothing replaced ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mapping",
    [
        workload("lora", lora={"rank": 4, "targets": ["q_proj", "v_proj"]}),
        workload("full_finetune", parallelism={"dp": 2, "fsdp": "full_shard"}),
        workload("inference", inference={"context_len": 64, "concurrency": 1}),
    ],
    ids=["lora", "fsdp", "inference"],
)
def test_a_trace_replaces_no_function_of_the_libraries_it_runs(mapping: dict[str, Any]) -> None:
    """While a trace runs (seen from its progress messages) every attribute of torch's Module, PEFT's
    tuner layer, transformers' masking module and DTensor's sharding propagation is the object it was
    before; the mask registry's ``sdpa`` entry is transformers' own again afterwards."""
    import importlib

    import torch
    from peft.tuners.tuners_utils import BaseTunerLayer
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    from rigcheck.trace.step import trace_step

    watched = [
        torch.nn.Module,
        BaseTunerLayer,
        importlib.import_module("transformers.masking_utils"),
        importlib.import_module("torch.distributed.tensor._sharding_prop"),
    ]
    before = [dict(vars(owner)) for owner in watched]
    replaced: list[str] = []

    def look(message: str) -> None:
        for owner, then in zip(watched, before, strict=True):
            now = vars(owner)
            replaced.extend(
                f"{owner.__name__}.{name}" for name, value in then.items() if now.get(name) is not value
            )

    trace_step(inputs_of({"id": "tiny", "workload": mapping}), progress=look)
    assert not replaced
    assert ALL_MASK_ATTENTION_FUNCTIONS["sdpa"] is sdpa_mask
