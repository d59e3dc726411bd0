"""Model presets and architecture resolution (preset, explicit numbers, Hugging Face config.json)."""

from __future__ import annotations

import json

import pytest

from rigcheck.core.engine.errors import SpecError
from rigcheck.core.estimate.architecture import (
    architecture_from_mapping,
    find_preset,
    hf_config_values,
    preset_ids,
    resolve_architecture,
)
from rigcheck.core.spec.documents import parse_spec
from rigcheck.core.spec.loader import load_yaml_file

from .conftest import MINIMAL_WORKLOAD, SPECS

REQUIRED = [
    "gpt2-124m",
    "gpt2-355m",
    "gpt2-774m",
    "gpt2-1.5b",
    "bert-base",
    "bert-large",
    "tinyllama-1.1b",
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b",
    "llama-3-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen-1.8b",
    "qwen2.5-0.5b",
    "qwen2.5-1.5b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "chatglm-6b",
    "falcon-7b",
    "phi-2",
    "gemma-7b",
    "opt-125m",
    "opt-350m",
    "opt-1.3b",
    "opt-2.7b",
    "opt-6.7b",
    "opt-13b",
    "opt-30b",
    "opt-66b",
]


def test_required_presets_exist_with_sources() -> None:
    assert set(REQUIRED) <= set(preset_ids())
    for model_id in preset_ids():
        entry = find_preset(model_id)
        assert entry["source"].startswith("http") or "arXiv" in entry["source"], model_id
        assert entry["as_of"] and entry["confidence"] in ("high", "medium", "low")


@pytest.mark.parametrize("model_id", REQUIRED)
def test_shapes_reproduce_the_published_parameter_count(model_id: str) -> None:
    arch = architecture_from_mapping(find_preset(model_id), name=model_id)
    assert arch.params == pytest.approx(arch.published_params, rel=0.025)


def test_hand_counted_llama3_8b() -> None:
    arch = architecture_from_mapping(find_preset("llama-3-8b"), name="llama-3-8b")
    per_layer = (4096 * 4096 * 2 + 4096 * 1024 * 2) + 3 * 4096 * 14336 + 2 * 4096
    assert arch.params == 32 * per_layer + 2 * 128256 * 4096 + 4096 == 8_030_261_248


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"),
        ("LLAMA-3-8B", "llama-3-8b"),
        ("Qwen/Qwen-1_8B-Chat", "qwen-1.8b"),
        ("opt-1.3b", "opt-1.3b"),
        ("opt-13b", "opt-13b"),
    ],
)
def test_lookup_by_alias_keeps_dots(name: str, model_id: str) -> None:
    assert find_preset(name)["id"] == model_id


def test_unknown_preset_is_an_error_at_its_line() -> None:
    document = parse_spec(MINIMAL_WORKLOAD.replace("gpt2-124m", "llama-3-8bb"), "w.yaml")
    with pytest.raises(SpecError) as excinfo:
        resolve_architecture(document.model.model, document=document)
    [problem] = excinfo.value.problems
    assert (
        problem.pointer == "/model/preset"
        and problem.line == 4
        and "did you mean 'llama-3-8b'" in problem.message
    )


def test_explicit_numbers_override_and_mlp_is_inferred_from_params() -> None:
    spec = load_yaml_file(str(SPECS / "workloads" / "llama-2-7b-lora-4090.yaml"))
    document = parse_spec(spec.text, "w.yaml")
    arch = resolve_architecture(document.model.model, document=document)
    assert arch.mlp == "swiglu" and arch.params == pytest.approx(6.74e9, rel=0.001)
    custom = parse_spec(
        MINIMAL_WORKLOAD.replace(
            "model: {preset: gpt2-124m}", "model: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 1000}"
        )
    )
    arch = resolve_architecture(custom.model.model)
    assert arch.mlp == "gelu" and any("assumed" in note for note in arch.notes)  # ffn = 4h


def test_hf_config_json_is_read_without_transformers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = {
        "model_type": "llama",
        "num_hidden_layers": 16,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 8192,
        "vocab_size": 128256,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "max_position_embeddings": 131072,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    values = hf_config_values(config)
    assert (values["kv_heads"], values["mlp"], values["norm"], values["tied_embeddings"]) == (
        8,
        "swiglu",
        "rmsnorm",
        True,
    )
    workload = MINIMAL_WORKLOAD.replace("model: {preset: gpt2-124m}", "model: {hf_config: config.json}")
    document = parse_spec(workload, str(tmp_path / "w.yaml"))
    arch = resolve_architecture(document.model.model, document=document, base_dir=str(tmp_path))
    assert arch.params == pytest.approx(1.2355e9, rel=0.001)  # Llama-3.2-1B's shape
    assert arch.params == pytest.approx(
        architecture_from_mapping(find_preset("llama-3.2-1b"), name="x").params
    )


def test_qwen1_config_halves_intermediate_size() -> None:
    values = hf_config_values(
        {
            "model_type": "qwen",
            "num_hidden_layers": 24,
            "hidden_size": 2048,
            "num_attention_heads": 16,
            "intermediate_size": 11008,
            "vocab_size": 151936,
        }
    )
    assert values["ffn"] == 5504 and values["family"] == "qwen1"
