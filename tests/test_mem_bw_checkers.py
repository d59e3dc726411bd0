"""MEM and BW findings on the shipped examples and at their thresholds."""

from __future__ import annotations

import pytest

from rigcheck.core.engine.findings import Severity

from .conftest import MINIMAL_RIG

RIG_4090 = MINIMAL_RIG.replace("model: RTX 3090, count: 2", "model: RTX 4090, count: 1")


def workload(extra: str, task: str = "lora", model: str = "llama-2-7b") -> str:
    return (
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {{preset: {model}}}\ntask: {task}\n"
        f"precision: bf16\n{extra}"
    )


def findings(report, code):  # type: ignore[no-untyped-def]
    return [finding for finding in report.findings if finding.code == code]


def test_mem001_fails_with_reestimated_fixes(check) -> None:  # type: ignore[no-untyped-def]
    text = workload("batch: {micro: 4, seq_len: 2048}\nlora: {rank: 16, targets: [q_proj, v_proj]}\n")
    [finding] = findings(check(RIG_4090, text, select=("MEM001",)), "MEM001")
    assert finding.severity is Severity.FAIL
    assert finding.location.file == "workload.yaml" and finding.location.pointer == "/batch/micro"
    assert finding.related[0].file == "rig.yaml"
    assert "activation_checkpointing: true" in finding.fix
    evidence = finding.evidence
    assert evidence["device_gib"] > evidence["budget_gib"]
    assert {"weights", "activations", "logits", "adapters"} <= set(evidence["components_gib"])
    assert evidence["range_gib"][0] <= evidence["need_gib"] <= evidence["range_gib"][1]
    # every fix listed was re-estimated and passes: apply it and check again
    from dataclasses import replace

    from rigcheck.core.estimate.estimate import estimate_memory, estimate_workload, fit_verdict
    from rigcheck.core.spec.documents import parse_spec

    inputs = estimate_workload(parse_spec(text).model).inputs
    assert evidence["fixes"]
    for fix in evidence["fixes"]:
        changed = estimate_memory(replace(inputs, **fix["changes"]))
        assert fit_verdict(changed, evidence["usable_gib"] * 2**30).severity == "pass", fix
        assert fix["change"] in finding.fix


def test_mem001_pass_reports_headroom_and_largest_micro_batch(check) -> None:  # type: ignore[no-untyped-def]
    text = workload("activation_checkpointing: true\nbatch: {micro: 1, seq_len: 2048}\nlora: {rank: 16}\n")
    [finding] = findings(check(RIG_4090, text, select=("MEM001",)), "MEM001")
    assert finding.severity is Severity.PASS
    assert finding.evidence["largest_fitting"] >= 1
    assert "largest micro-batch that fits" in finding.message


def test_mem001_warns_above_90_percent(check) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.estimate.estimate import estimate_workload
    from rigcheck.core.spec.documents import parse_spec

    document = parse_spec(
        workload("activation_checkpointing: true\nbatch: {micro: 1, seq_len: 2048}\nlora: {rank: 16}\n")
    )
    device = estimate_workload(document.model).memory.device_gib
    # a card whose usable memory makes the estimate 95% of it
    rig = RIG_4090.replace("count: 1}", f"count: 1, memory_gib: {device / 0.95 / 0.97:.3f}}}")
    [finding] = findings(
        check(
            rig,
            workload("activation_checkpointing: true\nbatch: {micro: 1, seq_len: 2048}\nlora: {rank: 16}\n"),
            select=("MEM001",),
        ),
        "MEM001",
    )
    assert finding.severity is Severity.WARN
    assert 0.90 < finding.evidence["share"] <= 1.0


def test_mem002_world_size(check) -> None:  # type: ignore[no-untyped-def]
    text = workload(
        "parallelism: {dp: 4}\nbatch: {micro: 1, seq_len: 512}\n", task="full_finetune", model="gpt2-124m"
    )
    [finding] = findings(check(MINIMAL_RIG, text, select=("MEM002",)), "MEM002")
    assert finding.severity is Severity.FAIL and finding.evidence == {
        "dp": 4,
        "tp": 1,
        "pp": 1,
        "cp": 1,
        "world_size": 4,
        "rig_gpus": 2,
        "formula": "world = dp x tp x pp x cp",
    }


def test_bw003_training_time_against_run_hours(check) -> None:  # type: ignore[no-untyped-def]
    """GPT-2 124M on one RTX 4090, no framework named: 855,157,248 FLOPs per token (6 x 123,651,840 matmul
    params + 12 x 12 x 768 x 1024) at 165.2 TFLOPS x HFU 0.45 (x 0.7 and x 1.2 for the range):
    500M tokens in about 1.6 h (1.33-2.29 h)."""
    from rigcheck.core.catalog.facts import load_rule_facts

    table = load_rule_facts("throughput")["training_hfu"]
    hfu = table["frameworks"]["default"]
    per_token = 6 * 123_651_840 + 12 * 12 * 768 * 1024

    def hours(efficiency: float) -> float:
        return 5.0e8 / (165.2e12 * efficiency / per_token) / 3600

    base = "batch: {micro: 8, seq_len: 1024}\ndata: {tokens: 5.0e8}\n"
    [ok] = findings(
        check(RIG_4090, workload(base + "run: {hours: 12}\n", "pretrain", "gpt2-124m"), select=("BW003",)),
        "BW003",
    )
    assert ok.severity is Severity.PASS
    assert ok.evidence["run_hours"]["default"] == pytest.approx(hours(hfu), rel=0.01)
    assert ok.evidence["run_hours"]["low"] == pytest.approx(
        hours(hfu * table["range_factors"]["high"]), rel=0.01
    )
    assert ok.evidence["binds"] == "compute"
    [warn] = findings(
        check(RIG_4090, workload(base + "run: {hours: 1.5}\n", "pretrain", "gpt2-124m"), select=("BW003",)),
        "BW003",
    )
    assert warn.severity is Severity.WARN  # default 1.6 h > 1.5 h, optimistic 1.33 h < 1.5 h
    [fail] = findings(
        check(RIG_4090, workload(base + "run: {hours: 1}\n", "pretrain", "gpt2-124m"), select=("BW003",)),
        "BW003",
    )
    assert fail.severity is Severity.FAIL and fail.location.pointer == "/run/hours"


def test_bw001_decode_target(check) -> None:  # type: ignore[no-untyped-def]
    serving = (
        "inference: {engine: vllm, concurrency: 1, context_len: 2048, target_tokens_per_s_per_seq: %s}\n"
    )
    rig = MINIMAL_RIG.replace("model: RTX 3090, count: 2", "model: H100 SXM, count: 1")
    # Llama-3-8B on one H100: 3350 GB/s x 0.70 / 15.1 GB read per step -> about 146 tokens/s (115-180)
    [ok] = findings(
        check(rig, workload(serving % 100, "inference", "llama-3-8b"), select=("BW001",)), "BW001"
    )
    assert ok.severity is Severity.PASS and ok.evidence["binds"] == "memory bandwidth"
    [warn] = findings(
        check(rig, workload(serving % 160, "inference", "llama-3-8b"), select=("BW001",)), "BW001"
    )
    assert warn.severity is Severity.WARN
    [fail] = findings(
        check(rig, workload(serving % 400, "inference", "llama-3-8b"), select=("BW001",)), "BW001"
    )
    assert fail.severity is Severity.FAIL


def test_shipped_examples_give_mem_and_bw_findings(run_cli) -> None:  # type: ignore[no-untyped-def]
    for rig, load in (
        ("home-2x3090", "qwen-1.8b-law-lora"),
        ("rtx4090-desktop", "gpt-125m-pretrain"),
        ("rtx4090-desktop", "llama-2-7b-sft-lora"),
        ("dgx-h100-x4", "llama-3-70b-serving"),
        ("dgx-h100-x4", "llama-3-8b-zero3"),
    ):
        result = run_cli("check", rig, load, "-f", "json", "--select", "MEM,BW")
        assert result.exit_code in (0, 1), result.err
        codes = {f["code"] for f in result.json()["findings"]}
        assert "MEM001" in codes and codes & {"BW001", "BW003"}


def test_estimate_command(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090", "-f", "json")
    assert result.exit_code == 0, result.err
    data = result.json()
    per_gpu = data["memory"]["per_gpu"]
    assert {"allocated_gib", "reserved_gib", "device_gib"} <= set(per_gpu)
    assert {"weights", "adapters", "activations", "logits", "cuda_context"} <= set(per_gpu["components"])
    assert per_gpu["allocated_gib"] < per_gpu["reserved_gib"] < per_gpu["device_gib"]
    assert data["fit"]["fits"] is True and data["fit"]["largest_micro_batch"] >= 2
    assert data["speed"]["training"]["run_hours"]["default"] > 0
    text = run_cli("estimate", "llama-3-70b-serving")
    assert text.exit_code == 0 and "kv_cache" in text.out and "device" in text.out
    assert run_cli("models").out.count("\n") >= 40


def test_ignoring_mem001_leaves_the_other_memory_rules_as_they_were(check) -> None:  # type: ignore[no-untyped-def]
    """With MEM001 ignored the checker still reports MEM003 (the same finding) and MEM002."""
    text = workload(
        "parallelism: {dp: 2, zero: 3, offload: cpu, offload_params: true}\nbatch: {micro: 64, seq_len: 4096}\n",
        task="full_finetune",
        model="llama-2-13b",
    )
    rig = MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: 32")
    both = check(rig, text, select=("MEM001", "MEM003"))
    assert findings(both, "MEM001")[0].severity is Severity.FAIL
    host = findings(both, "MEM003")
    assert host and host[0].severity is Severity.FAIL
    alone = check(rig, text, select=("MEM",), ignore=("MEM001",))
    assert findings(alone, "MEM001") == []
    assert findings(alone, "MEM003") == host
    assert "MEM002" in {finding.code for finding in alone.findings}
