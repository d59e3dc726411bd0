"""Issue 46, point 4 (in part): a fix proposes the tensor-parallel degree that fits. The search tried only
the first degree the heads allow (tp 2); a 4-bit Llama-3-70B served on 4x RTX 4090 then got "no change
fits the 4 GPU(s) of this rig; it needs 4 GPUs of this kind (tp 4)" on a rig that has them. Every degree
within a node and the rig's GPUs is tried now, the smallest first; the fix offered is checked by running
the changed workload again."""

from __future__ import annotations

from pathlib import Path

RIG = (
    "apiVersion: rigcheck/v1\nkind: Rig\nname: quad-4090\nnodes:\n  - name: n\n"
    "    gpus: {model: RTX 4090, count: 4}\n    memory_gib: 256\n"
)
WORKLOAD = (
    "apiVersion: rigcheck/v1\nkind: Workload\nname: llama70-awq\nmodel: {preset: llama-3-70b}\n"
    "task: inference\nquantization: awq\ninference: {context_len: 8192, concurrency: 4}\n"
)


def _mem001(run_cli, folder: Path, workload: str) -> dict:  # type: ignore[no-untyped-def]
    (folder / "rig.yaml").write_text(RIG, encoding="utf-8")
    (folder / "w.yaml").write_text(workload, encoding="utf-8")
    result = run_cli(
        "check", str(folder / "rig.yaml"), str(folder / "w.yaml"), "-f", "json", "--select", "MEM001"
    )
    return next(f for f in result.json()["findings"] if f["code"] == "MEM001")


def test_the_smallest_tensor_parallel_degree_that_fits_is_offered_and_fits(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    finding = _mem001(run_cli, tmp_path, WORKLOAD)
    assert finding["severity"] == "fail"
    fixes = finding["evidence"]["fixes"]
    assert {"changes": {"tp": 4}} in [{"changes": fix["changes"]} for fix in fixes], fixes
    assert "parallelism.tp: 4" in finding["fix"]
    # the fix, applied: the same workload with tp 4 passes on the same rig
    fixed = _mem001(run_cli, tmp_path, WORKLOAD + "parallelism: {tp: 4}\n")
    assert fixed["severity"] == "pass", fixed["message"]
    # and tp 2, the degree tried before, does not fit: 4 is the smallest
    half = _mem001(run_cli, tmp_path, WORKLOAD + "parallelism: {tp: 2}\n")
    assert half["severity"] == "fail", half["message"]
