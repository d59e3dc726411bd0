"""Issue 46: vLLM's memory accounting by release (``versions.vllm``; specs/rules/memory.yaml ``vllm_versions``,
from vLLM's own sources: docs/research/vllm_memory_accounting.md). What its gpu_memory_utilization share holds
moved between releases (the CUDA context and NCCL's set-up inside in 0.6.4 and 0.8.0-0.9.0, NCCL's set-up inside
in V0, the CUDA graphs inside from 0.20), and V0 profiled another forward (512 tokens with chunked prefill above
32,768, else max(max_model_len, 2048); 256 sequences). Each need below is the default's plus exactly the
components the release moves inside, read from the same estimate's breakdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import REPO

WORKLOAD = (REPO / "specs" / "workloads" / "llama-3-70b-serving.yaml").read_text(encoding="utf-8")


def _estimate(run_cli, tmp_path: Path, version: str | None, context: int | None = None) -> dict:  # type: ignore[no-untyped-def,type-arg]
    text = WORKLOAD.replace(
        "task: inference", "task: inference" + (f"\nversions: {{vllm: '{version}'}}" if version else "")
    )
    if context is not None:
        text = re.sub(r"context_len: \d+", f"context_len: {context}", text)
        assert f"context_len: {context}" in text
    path = tmp_path / f"w{version}-{context}.yaml"
    path.write_text(text)
    result = run_cli("estimate", str(path), "--rig", "dgx-h100", "-f", "json")
    assert result.exit_code in (0, 1), result.err
    return result.json()


@pytest.mark.parametrize(
    ("version", "baseline", "inside"),
    [
        ("0.9.1", None, ()),
        ("0.8.2", None, ("cuda_context", "nccl_init")),
        ("0.20.1", None, ("cuda_graphs",)),
        # V0 profiles another forward: its releases compare with 0.6.5, which holds what 0.9.1 holds
        ("0.6.4", "0.6.5", ("cuda_context", "nccl_init")),
        ("0.5.3", "0.6.5", ("nccl_init",)),
    ],
)
def test_what_the_share_holds_by_release(run_cli, tmp_path, version, baseline, inside) -> None:  # type: ignore[no-untyped-def]
    base = _estimate(run_cli, tmp_path, baseline)
    chosen = _estimate(run_cli, tmp_path, version)
    components = {name: item["gib"] for name, item in chosen["memory"]["per_gpu"]["components"].items()}
    assert {"cuda_context", "nccl_init", "cuda_graphs"} <= set(components)  # tp 8: NCCL's set-up apart
    moved = sum(components[name] for name in inside)
    assert chosen["fit"]["device_gib"] == pytest.approx(base["fit"]["device_gib"] + moved, abs=2e-3)
    assert set(chosen["fit"]["beside_budget"]) == {"cuda_context", "nccl_init", "cuda_graphs"} - set(inside)
    assert set(base["fit"]["beside_budget"]) == {"cuda_context", "nccl_init", "cuda_graphs"}


def test_unset_is_the_release_the_estimate_was_fitted_on(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert _estimate(run_cli, tmp_path, None)["fit"] == _estimate(run_cli, tmp_path, "0.19.0")["fit"]


@pytest.mark.parametrize(
    ("version", "context", "tokens", "seqs"),
    [
        ("0.5.3.post1", 131072, "512", 256),  # chunked prefill by default above 32,768 from 0.5.3
        ("0.5.2", 131072, "131,072", 256),  # before 0.5.3: the whole max_model_len
        ("0.5.3", 4096, "4,096", 256),
        ("0.6.5", 1024, "2,048", 256),  # max(max_model_len, 2048)
        ("0.19.0", 131072, "8,192", 1024),  # V1's defaults
    ],
)
def test_the_profile_forward_by_release(run_cli, tmp_path, version, context, tokens, seqs) -> None:  # type: ignore[no-untyped-def]
    result = _estimate(run_cli, tmp_path, version, context)
    formula = result["memory"]["per_gpu"]["components"]["activations"]["formula"]
    assert f"a {tokens}-token profile forward" in formula and f"over {seqs} sequences" in formula, formula


def test_a_documented_v0_launch_now_decides_as_its_source() -> None:
    """vllm#6746: 405B FP8 on 8 x H100 at gpu_memory_utilization 0.98 starts on 0.5.3, where NCCL's set-up is
    inside the share; counted beside it (0.19's accounting) the share and what lies beside it overran the GPU."""
    from .documented_configs import load_cases, mem001

    [case] = [c for c in load_cases() if c.id == "vllm-llama31-405b-fp8-tp8-h100-64k-chunked"]
    assert case.workload["versions"] == {"vllm": "0.5.3"}
    assert mem001(case)["severity"] == "pass"
    as_19 = type(case)(
        case.id, case.outcome, case.url, case.gpu, {**case.workload, "versions": {"vllm": "0.19.0"}}
    )
    assert mem001(as_19)["severity"] == "fail"
