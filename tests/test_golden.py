"""Golden reports: what rigcheck says about each reference rig, alone and with the shipped
workloads. Each file was read and its verdicts agreed with (docs/reference-rigs.md says why);
a change in any finding shows up here as a diff to review.

The checklists (``rig-*``, ``pair-*``) are ``--show-passes`` reports; ``compact-*`` are the default.
Regenerate after a reviewed change with ``RIGCHECK_UPDATE_GOLDEN=1 pytest tests/test_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import REPO, SPECS

GOLDEN = Path(__file__).resolve().parent / "golden"
RIGS = sorted(path.stem for path in (SPECS / "rigs").glob("*.yaml"))
PAIRS = [
    ("home-2x3090", "qwen-1.8b-law-lora"),
    ("rtx4090-desktop", "gpt-125m-pretrain"),
    ("rtx4090-desktop", "llama-2-7b-sft-lora"),
    ("dgx-h100", "llama-3-70b-serving"),
    ("dgx-h100-x4", "llama-3-8b-zero3"),
    ("puget-quad-3090", "llama-2-7b-sft-lora"),
    ("tinybox-6x4090", "llama-3-70b-serving"),
    ("aws-p4d-24xlarge", "llama-3-8b-zero3"),
]


def _compare(run_cli, name: str, *args: str) -> None:  # type: ignore[no-untyped-def]
    old = os.getcwd()
    os.chdir(REPO)  # paths in the report are relative to the repository
    try:
        result = run_cli("check", *args, "--color", "never")
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.err
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("RIGCHECK_UPDATE_GOLDEN"):
        path.write_text(result.out, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}; run with RIGCHECK_UPDATE_GOLDEN=1 and review it"
    assert result.out == path.read_text(encoding="utf-8"), f"{path.name} changed; review the diff"


@pytest.mark.parametrize("rig", RIGS)
def test_reference_rig_alone(run_cli, rig: str) -> None:  # type: ignore[no-untyped-def]
    _compare(run_cli, f"rig-{rig}", rig, "--show-passes")


@pytest.mark.parametrize(("rig", "workload"), PAIRS, ids=[f"{r}+{w}" for r, w in PAIRS])
def test_reference_rig_with_workload(run_cli, rig: str, workload: str) -> None:  # type: ignore[no-untyped-def]
    _compare(run_cli, f"pair-{rig}+{workload}", rig, workload, "--show-passes")


@pytest.mark.parametrize(("rig", "workload"), PAIRS, ids=[f"{r}+{w}" for r, w in PAIRS])
def test_default_report_of_a_pair(run_cli, rig: str, workload: str) -> None:  # type: ignore[no-untyped-def]
    """The default text report: failures and warnings in full, not-checked a line each, passes counted."""
    _compare(run_cli, f"compact-{rig}+{workload}", rig, workload)
