"""Every case of tests/data/cuda_cases.yaml (copied from the project's research data) through
``rigcheck check``: a one-node rig built from the case, and the worst CUDA finding's severity must be
the case's ``expect``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

CASES = yaml.safe_load((Path(__file__).parent / "data" / "cuda_cases.yaml").read_text(encoding="utf-8"))[
    "cases"
]
ORDER = {"pass": 0, "skip": 0, "warn": 1, "fail": 2}


def rig_for(case: dict) -> str:
    software = {"os": case["os"], "driver": str(case["driver"]), "cuda_runtime": str(case["cuda_runtime"])}
    if case.get("torch_wheel"):
        software["torch"] = case["torch_wheel"]
    if case.get("compat_package"):
        software["cuda_compat"] = case["compat_package"]
    rig = {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": "case",
        "nodes": [{"name": "n", "gpus": {"model": case["gpu"]}, "software": software}],
    }
    return yaml.safe_dump(rig, sort_keys=False)


def test_every_case_is_here() -> None:
    assert len(CASES) == 22
    assert {case["expect"] for case in CASES} == {"pass", "warn", "fail"}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_worst_cuda_finding_matches_the_case(case, run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(rig_for(case), "rig.yaml")
    result = run_cli("check", path, "--format", "json", "--select", "CUDA")
    assert result.exit_code in (0, 1), result.err
    findings = [f for f in result.json()["findings"] if f["code"].startswith("CUDA")]
    assert {f["code"] for f in findings} == {"CUDA001", "CUDA002", "CUDA003", "CUDA004", "CUDA005"}
    worst = max(findings, key=lambda f: ORDER[f["severity"]])
    severity = "pass" if worst["severity"] == "skip" else worst["severity"]
    assert severity == case["expect"], (
        case["why"],
        [(f["code"], f["severity"], f["message"]) for f in findings],
    )
