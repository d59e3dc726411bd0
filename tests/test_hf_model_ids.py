"""Issue 48: a Hugging Face model id (``model: {hf: ORG/NAME}``, or an ``ORG/NAME`` given as ``preset:``)
is read from the local Hugging Face cache, as huggingface_hub lays it out: ``refs/<revision>`` names a
commit, ``snapshots/<commit>/config.json`` links into ``blobs/``. Never from the network; a model not
in the cache is one line naming the command that fetches its config, exit 2.

Hand-worked for Mistral-7B-v0.3 (its config.json: 32 layers, hidden 4,096, 32 heads, 8 KV heads of
128, MLP 14,336, vocabulary 32,768, untied): per layer 4,096 x (4,096 + 2 x 1,024 + 4,096) attention +
3 x 4,096 x 14,336 MLP + 2 x 4,096 norms = 218,112,000; x 32 = 6,979,584,000; + 2 x 32,768 x 4,096
embedding and head + 4,096 final norm = 7,248,023,552 parameters: 7.248B."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"
TAGGED = "fedcba9876543210fedcba9876543210fedcba98"
CONFIG = {
    "architectures": ["MistralForCausalLM"],
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mistral",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "vocab_size": 32768,
}
PARAMS = 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336 + 2 * 4096) + 2 * 32768 * 4096 + 4096


def _cache(root: Path, config: dict = CONFIG, revision: str = "main", commit: str = COMMIT) -> Path:  # type: ignore[type-arg]
    folder = root / "hub" / "models--mistralai--Mistral-7B-v0.3"
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "blobs").mkdir(exist_ok=True)
    (folder / "snapshots" / commit).mkdir(parents=True)
    (folder / "refs" / revision).write_text(commit)
    blob = folder / "blobs" / f"b-{commit[:6]}"
    blob.write_text(json.dumps(config))
    (folder / "snapshots" / commit / "config.json").symlink_to(f"../../blobs/{blob.name}")
    return root / "hub"


def _workload(tmp_path: Path, model: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: m\nmodel: {model}\ntask: inference\nprecision: bf16\n"
    )
    return str(path)


def test_the_hand_worked_count() -> None:
    assert PARAMS == 7_248_023_552


@pytest.mark.parametrize("model", ["{hf: mistralai/Mistral-7B-v0.3}", "{preset: mistralai/Mistral-7B-v0.3}"])
def test_an_id_in_the_cache_estimates_offline(run_cli, tmp_path, monkeypatch, model: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_CACHE", str(_cache(tmp_path)))
    result = run_cli("estimate", _workload(tmp_path, model), "-f", "json")
    assert result.exit_code == 0, result.err
    assert json.loads(result.out)["model"]["params_b"] == pytest.approx(PARAMS / 1e9, abs=5e-4)  # 7.248


def test_hf_home_and_a_revision(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """HF_HOME/hub when HF_HUB_CACHE is unset; a tag's ref names its own snapshot."""
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    _cache(tmp_path)
    smaller = {**CONFIG, "num_hidden_layers": 16}
    _cache(tmp_path, smaller, revision="v0.3-small", commit=TAGGED)
    main = run_cli("estimate", _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3}"), "-f", "json")
    tagged = run_cli(
        "estimate", _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3, revision: v0.3-small}"), "-f", "json"
    )
    assert json.loads(main.out)["model"]["params_b"] > json.loads(tagged.out)["model"]["params_b"]


def test_not_cached_is_one_line_naming_the_fetch(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    path = _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3}")
    result = run_cli("estimate", path)
    assert result.exit_code == 2 and "Traceback" not in result.err
    [line] = result.err.strip().splitlines()
    assert line.startswith(f"{path}:4:") and "/model/hf" in line
    assert "hf download mistralai/Mistral-7B-v0.3 config.json" in line


def test_a_link_out_of_the_models_cache_folder_is_not_read(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    hub = _cache(tmp_path)
    snapshot = hub / "models--mistralai--Mistral-7B-v0.3" / "snapshots" / COMMIT / "config.json"
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(CONFIG))
    snapshot.unlink()
    snapshot.symlink_to(outside)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    result = run_cli("estimate", _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3}"))
    assert result.exit_code == 2 and "outside its cache folder" in result.err


@pytest.mark.parametrize("bad", ["../etc/passwd", "org/../x", "no-slash", "org/name/extra"])
def test_what_is_not_an_id_is_refused(run_cli, tmp_path, monkeypatch, bad: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_CACHE", str(_cache(tmp_path)))
    result = run_cli("estimate", _workload(tmp_path, f"{{hf: '{bad}'}}"))
    assert result.exit_code == 2 and "Traceback" not in result.err
