"""Issue 46, point 4: a serve too large for the tensor-parallel group of one node gets pipeline stages
over the rig's nodes as a fix. Llama-3.1-405B in bf16 (810 GB of weights) at tp 8 needs 101 GB per H100;
two nodes of eight take it in two stages of 63 blocks (about 50 GB of weights each per GPU). The fix
offered is the one MEM001 re-estimated (every stage on its own), and the workload written with it passes."""

from __future__ import annotations

from pathlib import Path

RIG = (
    "apiVersion: rigcheck/v1\nkind: Rig\nname: two-hgx\nnodes:\n  - name: hgx\n    count: 2\n"
    "    gpus: {model: H100 SXM, count: 8}\n    memory_gib: 2048\n"
)
WORKLOAD = (
    "apiVersion: rigcheck/v1\nkind: Workload\nname: llama405\nmodel: {preset: llama-3.1-405b}\n"
    "task: inference\ninference: {engine: vllm, context_len: 8192, concurrency: 8}\n"
)


def _mem001(run_cli, folder: Path, parallelism: str) -> dict:  # type: ignore[no-untyped-def]
    (folder / "rig.yaml").write_text(RIG, encoding="utf-8")
    (folder / "w.yaml").write_text(WORKLOAD + f"parallelism: {parallelism}\n", encoding="utf-8")
    result = run_cli(
        "check", str(folder / "rig.yaml"), str(folder / "w.yaml"), "-f", "json", "--select", "MEM001"
    )
    (finding,) = [f for f in result.json()["findings"] if f["code"] == "MEM001"]
    return finding


def test_a_serve_past_one_node_is_offered_pipeline_stages_that_fit(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    finding = _mem001(run_cli, tmp_path, "{tp: 8}")
    assert finding["severity"] == "fail"
    offered = [fix["changes"] for fix in finding["evidence"]["fixes"]]
    assert {"pp": 2} in offered, offered
    fixed = _mem001(run_cli, tmp_path, "{tp: 8, pp: 2}")
    assert fixed["severity"] == "pass", fixed["message"]
    assert any(note.startswith("pipeline stage") for note in fixed["evidence"]["notes"])
