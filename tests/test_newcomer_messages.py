"""Issue 48 point 9: messages a newcomer meets first."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("llama-3-7b", "llama-3-8b"), ("llama-3-65b", "llama-3-70b"), ("lama-3-8b", "llama-3-8b")],
)
def test_a_size_the_family_lacks_gets_its_nearest_size(typed: str, meant: str) -> None:
    """``llama-3-7b`` is nearer ``llama-3-70b`` by spelling and ``llama-3-8b`` by size: the size wins
    within the family; a misspelt family still gets the nearest name."""
    from rigcheck.core.estimate.architecture import preset_suggestion

    assert preset_suggestion(typed) == f"; did you mean {meant!r}?"


@pytest.mark.parametrize(
    ("given", "written"),
    [("2x RTX 3090", "{model: RTX 3090, count: 2}"), ("RTX 4090", "{model: RTX 4090, count: 1}")],
)
def test_gpus_as_text_say_how_to_write_them(run_cli, tmp_path, given: str, written: str) -> None:  # type: ignore[no-untyped-def]
    rig = tmp_path / "rig.yaml"
    rig.write_text(f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n    gpus: {given}\n")
    result = run_cli("check", str(rig))
    assert result.exit_code == 2
    [line] = result.err.strip().splitlines()
    assert line.startswith(f"{rig}:6:") and f"write gpus: {written}" in line


@pytest.mark.parametrize(
    ("rig", "parallelism", "degrees", "gpus"),
    [
        (
            "home-2x3090",
            "{tp: 4}",
            "dp 1, tp 2 and pp 1",
            2,
        ),  # was "dp 1 with tp 4": four GPUs on a rig of two
        ("dgx-h100", "{dp: 32, zero: 3}", "dp 8, tp 1 and pp 1", 8),
        ("dgx-h100", "{dp: 2, tp: 4, pp: 4}", "dp 1, tp 4 and pp 2", 8),
    ],
)
def test_mem002s_example_fits_the_rig(
    run_cli, tmp_path, rig: str, parallelism: str, degrees: str, gpus: int
) -> None:  # type: ignore[no-untyped-def]
    """MEM002's example degrees multiply to no more GPUs than the rig has: the model's split is kept
    where it fits, else cut to the largest of its divisors that fit."""
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: llama-2-7b}\ntask: pretrain\n"
        f"parallelism: {parallelism}\n"
    )
    report = run_cli("check", rig, str(workload), "--select", "MEM002", "-f", "json").json()
    [finding] = [f for f in report["findings"] if f["code"] == "MEM002"]
    assert f"for example {degrees})" in finding["fix"]
    numbers = [int(word) for word in degrees.replace(",", "").split() if word.isdigit()]
    product = 1
    for number in numbers:
        product *= number
    assert product <= gpus
