"""``plan`` spreads a serve over a candidate's GPUs (issue 46, point 4): a 4-bit Llama-3-70B that fits no
single RTX 4090 is served with tensor parallelism on the four-GPU builds, at the smallest degree
MEM001's fix search found to fit, and the candidate is judged by running every rule again on the
workload with that degree. ``--keep-parallelism`` checks the serve as written (tp 1): nothing passes."""

from __future__ import annotations

from pathlib import Path

WORKLOAD = (
    "apiVersion: rigcheck/v1\nkind: Workload\nname: llama70-awq\nmodel: {preset: llama-3-70b}\n"
    "task: inference\nquantization: awq\n"
    "inference: {context_len: 8192, concurrency: 4, engine: vllm, gpu_memory_utilization: 0.85}\n"
)
SERVER = "build 4x NVIDIA GeForce RTX 4090 (server-4gpu)"


def _rows(run_cli, workload: Path, *extra: str) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    result = run_cli(
        "plan", str(workload), "--buy", "--no-references", "--gpus", "RTX 4090", "-f", "json", *extra
    )
    return {row["candidate"]: row for row in result.json()["rows"]}


def test_a_serve_too_large_for_one_gpu_is_split_with_the_degree_that_fits(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    workload = tmp_path / "w.yaml"
    workload.write_text(WORKLOAD, encoding="utf-8")
    rows = _rows(run_cli, workload)
    server = rows[SERVER]
    assert "MEM001" not in server["failures"] and server["passes"], server
    assert any("served with tp 4" in note for note in server["notes"]), server["notes"]
    for name, row in rows.items():  # one or two 4090s hold no split of it
        if row["gpu_count"] < 4:
            assert "MEM001" in row["failures"], name

    # the split, written into the workload and checked on a rig of four 4090s, passes MEM001 (and tp 2
    # does not: 4 is the smallest)
    rig = tmp_path / "rig.yaml"
    rig.write_text(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: quad\nnodes:\n  - name: n\n"
        "    gpus: {model: RTX 4090, count: 4}\n    memory_gib: 256\n",
        encoding="utf-8",
    )
    for tp, severity in ((4, "pass"), (2, "fail")):
        split = tmp_path / f"tp{tp}.yaml"
        split.write_text(WORKLOAD + f"parallelism: {{tp: {tp}}}\n", encoding="utf-8")
        check = run_cli("check", str(rig), str(split), "--select", "MEM001", "-f", "json")
        assert {f["severity"] for f in check.json()["findings"]} == {severity}, tp


def test_keep_parallelism_checks_the_serve_as_written(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    workload = tmp_path / "w.yaml"
    workload.write_text(WORKLOAD, encoding="utf-8")
    rows = _rows(run_cli, workload, "--keep-parallelism")
    assert all("MEM001" in row["failures"] for row in rows.values()), rows
    assert not any(row["passes"] for row in rows.values())
