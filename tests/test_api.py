"""Issue 48 point 5: rigcheck as a library. ``rigcheck.check`` and ``rigcheck.estimate`` run the command
line's own code, so they give what ``rigcheck check -f json`` and ``rigcheck estimate -f json`` print:
the same findings, messages and exit code on shipped pairs, on a spec given as a mapping, and the same
refusal of bad input (SpecError, the CLI's exit 2)."""

from __future__ import annotations

import json

import pytest

import rigcheck
from rigcheck.core.spec.loader import load_yaml_file
from rigcheck.core.spec.specs_index import resolve_spec_argument

PAIRS = [("dgx-h100-x4", "llama-3-8b-zero3"), ("home-2x3090", "qwen-1.8b-law-lora"), ("dgx-h100", None)]


def _said(findings: list) -> list:  # type: ignore[type-arg]
    return [(f["code"], f["severity"], f["message"], f.get("fix")) for f in findings]


@pytest.mark.parametrize(("rig", "workload"), PAIRS)
def test_check_is_the_clis(run_cli, rig: str, workload: str | None) -> None:  # type: ignore[no-untyped-def]
    names = [rig, *([workload] if workload else [])]
    cli = run_cli("check", *names, "-f", "json", "--select", "MEM,PWR,CUDA,ICX,BW")
    report = rigcheck.check(rig, workload, select=["MEM", "PWR", "CUDA", "ICX", "BW"])
    data = report.model_dump(mode="json")
    assert report.exit_code == cli.exit_code
    assert _said(data["findings"]) == _said(cli.json()["findings"])  # type: ignore[index]


def test_a_spec_as_a_mapping_is_read_as_its_file_is(run_cli) -> None:  # type: ignore[no-untyped-def]
    rig = load_yaml_file(resolve_spec_argument("home-2x3090", "Rig")).data
    workload = load_yaml_file(resolve_spec_argument("qwen-1.8b-law-lora", "Workload")).data
    from_files = rigcheck.check("home-2x3090", "qwen-1.8b-law-lora", select=["MEM"])
    from_mappings = rigcheck.check(rig, workload, select=["MEM"])
    strip = [(f.code, f.severity, f.message) for f in from_files.findings]
    assert strip == [(f.code, f.severity, f.message) for f in from_mappings.findings]


def test_estimate_is_the_clis(run_cli) -> None:  # type: ignore[no-untyped-def]
    cli = run_cli("estimate", "llama-3-8b-zero3", "--rig", "dgx-h100-x4", "-f", "json").json()
    data = rigcheck.estimate("llama-3-8b-zero3", rig="dgx-h100-x4")
    assert json.loads(json.dumps(data)) == cli
    alone = rigcheck.estimate("llama-3-8b-zero3")
    assert alone["fit"] is None and alone["model"] == cli["model"]  # type: ignore[index]


def test_bad_input_raises_what_the_cli_exits_2_on() -> None:
    with pytest.raises(rigcheck.SpecError) as caught:
        rigcheck.check(
            {"apiVersion": "rigcheck/v1", "kind": "Rig", "name": "r", "nodes": [{"name": "n", "gpus": 2}]}
        )
    assert caught.value.problems and "/nodes/0/gpus" in str(caught.value)


def test_plan_is_the_clis(run_cli) -> None:  # type: ignore[no-untyped-def]
    """Same rows, answer and prices as ``rigcheck plan -f json``; a rig given as a mapping is a --rig file."""
    args = [
        "qwen-1.8b-law-lora",
        "--buy",
        "--gpus",
        "RTX 3090,RTX 4090",
        "--max-gpus",
        "2",
        "--no-references",
    ]
    cli = run_cli("plan", *args, "-f", "json").json()
    data = rigcheck.plan(
        "qwen-1.8b-law-lora", mode="buy", gpus=["RTX 3090", "RTX 4090"], max_gpus=2, references=False
    )

    def same(plan: dict) -> tuple:  # type: ignore[type-arg]
        rows = [(r["candidate"], r["verdict"], r["cost"], r["hours"], r["why_not"]) for r in plan["rows"]]
        return rows, plan["answer"], plan["electricity"]

    assert same(json.loads(json.dumps(data))) == same(cli)
    rig = load_yaml_file(resolve_spec_argument("home-2x3090", "Rig")).data
    with_rig = rigcheck.plan("qwen-1.8b-law-lora", mode="buy", gpus=["RTX 3090"], max_gpus=1, rigs=[rig])
    assert [row["kind"] for row in with_rig["rows"]].count("given") == 1
    with pytest.raises(rigcheck.core.engine.errors.UsageError):
        rigcheck.plan("qwen-1.8b-law-lora", mode="lease")
