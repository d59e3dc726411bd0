"""Issue 48: a Hugging Face model id (``model: {hf: ORG/NAME}``, or an ``ORG/NAME`` given as ``preset:``)
is read from the local Hugging Face cache, as huggingface_hub lays it out: ``refs/<revision>`` names a
commit, ``snapshots/<commit>/config.json`` links into ``blobs/``. A model not in the cache is fetched
(config.json alone) only where the network is allowed, here from a stand-in hub on 127.0.0.1, never the
real one; otherwise it is one line naming the command that fetches its config, exit 2.

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
    result = run_cli("estimate", path, "--offline")
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


class _StandInHub:
    """A local stand-in for the hub's file endpoint on 127.0.0.1 (``HF_ENDPOINT``), answering as
    huggingface.co does: ``HEAD``/``GET /{org}/{name}/resolve/{revision}/{file}`` with the commit in
    ``X-Repo-Commit`` and the file's ``ETag``; a gated model is 401 with ``X-Error-Code: GatedRepo``, an
    unknown one 404 with ``RepoNotFound`` (huggingface_hub ``utils/_http.py`` reads these headers)."""

    def __init__(self) -> None:
        import http.server
        import threading

        hub = self
        self.requested: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

            def _answer(self, body: bool) -> None:
                hub.requested.append(self.path)
                parts = self.path.split("?")[0].strip("/").split("/")
                repo, file = "/".join(parts[:2]), "/".join(parts[4:])
                if repo == "mistralai/Mistral-7B-v0.3" and file == "config.json":
                    data = json.dumps(CONFIG).encode()
                    self.send_response(200)
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("ETag", '"0f3b5c"')
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if body:
                        self.wfile.write(data)
                    return
                if repo == "acme/huge" and file == "config.json":  # a hostile hub's 100 MB config
                    self.send_response(200)
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("ETag", '"1a2b3c"')
                    self.send_header("Content-Length", str(100_000_000))
                    self.end_headers()
                    return  # nothing is sent: it must not be fetched
                gated = repo == "meta-llama/Llama-3.1-8B"
                code = (
                    "GatedRepo" if gated else "EntryNotFound" if repo == "acme/no-config" else "RepoNotFound"
                )
                self.send_response(401 if gated else 404)
                self.send_header("X-Error-Code", code)
                self.send_header(
                    "X-Error-Message", "Access to this model is restricted" if gated else "not found"
                )
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stand_in_hub(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    pytest.importorskip("huggingface_hub")
    hub = _StandInHub()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield hub
    hub.close()


def test_estimate_fetches_the_config_alone_into_the_cache(run_cli, tmp_path, stand_in_hub) -> None:  # type: ignore[no-untyped-def]
    path = _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3}")
    result = run_cli("estimate", path, "-f", "json")
    assert result.exit_code == 0, result.err
    assert json.loads(result.out)["model"]["params_b"] == pytest.approx(PARAMS / 1e9, abs=5e-4)
    assert stand_in_hub.requested and all(p.endswith("/config.json") for p in stand_in_hub.requested)
    folder = tmp_path / "cache" / "models--mistralai--Mistral-7B-v0.3"
    assert (folder / "refs" / "main").read_text() == COMMIT  # the hub's layout: read back as any cached one
    asked = len(stand_in_hub.requested)
    again = run_cli("estimate", path, "--offline", "-f", "json")  # now cached: offline works
    assert again.exit_code == 0 and len(stand_in_hub.requested) == asked


def test_offline_and_check_without_allow_network_never_ask_hub(
    run_cli, tmp_path, stand_in_hub, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    path = _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3}")
    offline = run_cli("estimate", path, "--offline")
    assert offline.exit_code == 2 and "hf download mistralai/Mistral-7B-v0.3 config.json" in offline.err
    rig = "home-2x3090"
    assert run_cli("check", rig, path).exit_code == 2  # check and lint: the cache only, by default
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert run_cli("estimate", path).exit_code == 2  # huggingface_hub's own switch wins
    assert stand_in_hub.requested == []
    monkeypatch.delenv("HF_HUB_OFFLINE")
    fetched = run_cli("check", rig, path, "--allow-network", "-f", "json")
    assert fetched.exit_code in (0, 1) and stand_in_hub.requested


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("meta-llama/Llama-3.1-8B", "is a gated model: accept its terms at"),
        ("nobody/no-such-model", "no such model on"),
        ("acme/no-config", "has no config.json on"),
        ("acme/huge", "over the 16,777,216 rigcheck reads; not fetched"),
    ],
)
def test_gated_and_unknown_models_say_so_in_one_line(
    run_cli, tmp_path, stand_in_hub, model: str, says: str
) -> None:  # type: ignore[no-untyped-def]
    path = _workload(tmp_path, f"{{hf: {model}}}")
    result = run_cli("estimate", path)
    assert result.exit_code == 2 and "Traceback" not in result.err
    [line] = result.err.strip().splitlines()
    assert line.startswith(f"{path}:4:") and says in line and stand_in_hub.url in line


def test_no_hub_to_reach_is_one_line_too(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("huggingface_hub")
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    result = run_cli("estimate", _workload(tmp_path, "{hf: mistralai/Mistral-7B-v0.3}"))
    assert result.exit_code == 2 and "Traceback" not in result.err
    [line] = result.err.strip().splitlines()
    assert "cannot fetch the config of mistralai/Mistral-7B-v0.3" in line and "hf download" in line
