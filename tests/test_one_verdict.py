"""``estimate``, ``check`` and ``plan`` give one memory verdict (issue 46, point 3).

The three commands call one function, :func:`rigcheck.core.estimate.estimate.fit_verdict`; ``estimate``
once decided "fits" by itself (the need against the budget, without what vLLM keeps beside its pool)
and said "fits, 18.4 of 21.6 GiB" (exit 0) of a Llama-3-70B AWQ serve on 4x RTX 4090 that ``check``
failed. Here every shipped rig with every shipped workload, and generated workloads (Hypothesis, fixed
seed), go through the three commands as a user runs them: ``estimate --rig`` (its verdict on the rig's
first GPU, and its exit code), ``check --select MEM001`` (the finding on that GPU) and ``plan --rig
--keep-parallelism`` (the rules that failed or warned on that rig).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from .conftest import SPECS

RIGS = sorted((SPECS / "rigs").glob("*.yaml"))
WORKLOADS = sorted((SPECS / "workloads").glob("*.yaml"))


def _verdicts(run_cli: Any, rig: Path, workload: Path) -> dict[str, str]:
    """The memory verdict of each command on the rig's first GPU (pass | warn | fail)."""
    estimate = run_cli("estimate", str(workload), "--rig", str(rig), "-f", "json")
    assert estimate.exit_code in (0, 1), estimate.err
    result = estimate.json()
    gpu, verdict = result["rig"]["gpu"], result["fit"]["verdict"]
    assert estimate.exit_code == (1 if verdict == "fail" else 0)

    check = run_cli("check", str(rig), str(workload), "--select", "MEM001", "-f", "json")
    on_gpu = {f["severity"] for f in check.json()["findings"] if f["evidence"].get("gpu") == gpu}
    assert len(on_gpu) == 1, on_gpu  # nodes of one GPU model are judged alike

    plan = run_cli(
        "plan", str(workload), "--rig", str(rig), "--keep-parallelism", "--no-references", "--buy",
        "--gpus", "RTX 4090", "--max-gpus", "1", "-f", "json",
    )  # fmt: skip
    (row,) = [row for row in plan.json()["rows"] if row["kind"] == "given"]
    planned = "fail" if "MEM001" in row["failures"] else "warn" if "MEM001" in row["warnings"] else "pass"
    return {"estimate": verdict, "check": on_gpu.pop(), "plan": planned}


def test_the_awq_serve_that_estimate_passed_and_check_failed(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rig, workload = tmp_path / "rig.yaml", tmp_path / "w.yaml"
    rig.write_text(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: quad-4090\nnodes:\n  - name: n\n"
        "    gpus: {model: RTX 4090, count: 4}\n    memory_gib: 256\n",
        encoding="utf-8",
    )
    workload.write_text(
        "apiVersion: rigcheck/v1\nkind: Workload\nname: llama70-awq\nmodel: {preset: llama-3-70b}\n"
        "task: inference\nquantization: awq\ninference: {context_len: 8192, concurrency: 4, engine: vllm}\n"
        "parallelism: {tp: 4}\n",
        encoding="utf-8",
    )
    verdicts = _verdicts(run_cli, rig, workload)
    assert set(verdicts.values()) == {"fail"}, verdicts  # vLLM's share and what lies beside it exceed 24 GiB
    text = run_cli("estimate", str(workload), "--rig", str(rig)).out
    assert "does NOT fit (vLLM's share" in text


@pytest.mark.parametrize(("rig", "workload"), list(itertools.product(RIGS, WORKLOADS)), ids=lambda p: p.stem)
def test_shipped_pairs_get_one_verdict(run_cli, rig: Path, workload: Path) -> None:  # type: ignore[no-untyped-def]
    verdicts = _verdicts(run_cli, rig, workload)
    assert len(set(verdicts.values())) == 1, verdicts


WORKLOAD = """apiVersion: rigcheck/v1
kind: Workload
name: generated
model: {{preset: {preset}}}
task: {task}
{extra}"""


@st.composite
def workloads(draw: Any) -> str:
    preset = draw(st.sampled_from(["llama-3-8b", "qwen-1.8b", "llama-3-70b", "mistral-7b"]))
    task = draw(st.sampled_from(["inference", "lora", "qlora", "full_finetune"]))
    if task == "inference":
        engine = draw(st.sampled_from(["vllm", "hf"]))
        quant = draw(st.sampled_from(["", "quantization: awq\n", "quantization: int8\n"]))
        context = draw(st.sampled_from([2048, 8192, 32768]))
        concurrency = draw(st.sampled_from([1, 8, 64]))
        tp = draw(st.sampled_from([1, 2, 4]))
        return WORKLOAD.format(
            preset=preset,
            task=task,
            extra=f"{quant}inference: {{engine: {engine}, context_len: {context}, concurrency: {concurrency}}}\n"
            f"parallelism: {{tp: {tp}}}\n",
        )
    micro = draw(st.sampled_from([1, 2, 8]))
    sequence = draw(st.sampled_from([512, 2048, 8192]))
    checkpointing = draw(st.sampled_from(["false", "true"]))
    zero = draw(st.sampled_from(["", "parallelism: {dp: 8, zero: 3}\n", "parallelism: {dp: 2}\n"]))
    return WORKLOAD.format(
        preset=preset,
        task=task,
        extra=f"precision: bf16-mixed\nbatch: {{micro: {micro}, seq_len: {sequence}}}\n"
        f"activation_checkpointing: {checkpointing}\n{zero}",
    )


@seed(46)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=workloads(), rig=st.sampled_from(RIGS))
def test_generated_workloads_get_one_verdict(run_cli, tmp_path: Path, text: str, rig: Path) -> None:  # type: ignore[no-untyped-def]
    workload = tmp_path / "generated.yaml"
    workload.write_text(text, encoding="utf-8")
    verdicts = _verdicts(run_cli, rig, workload)
    assert len(set(verdicts.values())) == 1, (verdicts, text)
