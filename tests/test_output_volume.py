"""What a newcomer reads (issue 17): failures first, passes counted, one-screen summary, paths as a
person reads them, ``estimate``'s exit code and Markdown, and cloud instances without the build rules."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from rigcheck.core.report.render import shown_path

from .conftest import REPO

PAIR = ("home-2x3090", "qwen-1.8b-law-lora")


def _at_repo(run_cli, *args: str):  # type: ignore[no-untyped-def]
    old = os.getcwd()
    os.chdir(REPO)
    try:
        return run_cli(*args, "--color", "never")
    finally:
        os.chdir(old)


def _passed(run_cli) -> int:  # type: ignore[no-untyped-def]
    """The pair's pass findings as the JSON report lists them (its summary counts the same)."""
    report = json.loads(_at_repo(run_cli, "check", *PAIR, "-f", "json").out)
    listed = sum(1 for finding in report["findings"] if finding["severity"] == "pass")
    assert listed == report["summary"]["passed"] > 0
    return listed


def test_default_text_lists_what_failed_first_and_counts_the_passes(run_cli) -> None:  # type: ignore[no-untyped-def]
    passed = _passed(run_cli)
    out = _at_repo(run_cli, "check", *PAIR).out
    lines = out.splitlines()
    assert lines[4] == "failed" and lines[5].startswith("  ✗ BW003 120,000,000 tokens take about 11.2 h")
    assert "✓" not in out  # no pass listed
    assert f"{passed} passed (--show-passes lists them)" in lines
    assert lines[-3:] == [
        f"FAIL  {passed} passed, 0 warned, 1 failed, 2 not checked  (exit 1 with --fail-on fail)",
        "  failed: BW003",
        "  rigcheck explain CODE says what a rule checks and how to fix it",
    ]
    checklist = _at_repo(run_cli, "check", *PAIR, "--show-passes").out.splitlines()
    assert len(checklist) - len(lines) >= passed  # the checklist adds a line per pass at least


def test_show_passes_and_verbose_list_every_finding(run_cli) -> None:  # type: ignore[no-untyped-def]
    passed = _passed(run_cli)
    passes = _at_repo(run_cli, "check", *PAIR, "--show-passes").out
    verbose = _at_repo(run_cli, "check", *PAIR, "-v").out
    assert passes.count("  ✓ ") == passed and verbose.count("  ✓ ") == passed
    assert "      formula:" not in passes and "      formula:" in verbose  # -v adds the evidence


def test_not_checked_findings_are_a_line_each_and_repeats_fold(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(
        textwrap.dedent(
            """\
            apiVersion: rigcheck/v1
            kind: Rig
            name: two-cards
            nodes:
              - gpus: [{model: RTX 3090}, {model: RTX 3090}]
            """
        ),
        "rig.yaml",
    )
    out = run_cli("check", rig, "--color", "never", "--select", "PLT003").out
    assert "not checked (2): add what each names to check it" in out
    assert (
        "  ? PLT003 node nodes[0]: chassis.gpu_clearance_mm is not given, so the 313 mm NVIDIA GeForce RTX 3090 "
        "cannot be checked  (x2)"
    ) in out.splitlines()


def test_lint_lists_problems_only_unless_asked(run_cli) -> None:  # type: ignore[no-untyped-def]
    default = _at_repo(run_cli, "lint", "specs/").out
    listed = _at_repo(run_cli, "lint", "specs/", "--show-passes").out
    assert "  ✓ " not in default and "  ✓ " in listed
    summary = default.splitlines()
    assert summary[-1] == "  rigcheck explain CODE says what a rule checks and how to fix it"
    assert summary[-3].startswith("  failed: ") and summary[-2].startswith("  warned: ")


def test_a_shipped_spec_outside_the_working_directory_shows_its_short_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = REPO / "specs" / "rigs" / "home-2x3090.yaml"
    monkeypatch.chdir(tmp_path)
    assert shown_path(str(shipped)) == "<shipped>/rigs/home-2x3090.yaml"
    monkeypatch.chdir(REPO)
    assert shown_path(str(shipped)) == "specs/rigs/home-2x3090.yaml"
    mine = tmp_path / "mine.yaml"
    assert shown_path(str(mine)) == str(mine)  # elsewhere: as given


def test_installed_copies_are_never_shown_by_their_site_packages_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv inside the project: the shipped rig is below the working directory, but under site-packages."""
    from rigcheck import resources

    data = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "rigcheck" / "_data" / "specs"
    (data / "rigs").mkdir(parents=True)
    (data / "rigs" / "home-2x3090.yaml").write_text("kind: Rig\n")
    monkeypatch.setattr(resources, "specs_dir", lambda: data)
    monkeypatch.chdir(tmp_path)
    assert shown_path(str(data / "rigs" / "home-2x3090.yaml")) == "<shipped>/rigs/home-2x3090.yaml"


def test_estimate_exits_1_when_the_workload_does_not_fit(run_cli) -> None:  # type: ignore[no-untyped-def]
    fits = run_cli("estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090")
    too_big = run_cli("estimate", "llama-2-7b-sft-lora", "--rig", "gcp-n1-t4", "-f", "json")
    assert fits.exit_code == 0 and "fits," in fits.out
    assert too_big.exit_code == 1 and json.loads(too_big.out)["fit"]["fits"] is False
    alone = run_cli("estimate", "llama-2-7b-sft-lora")
    assert alone.exit_code == 0  # no rig: nothing to fit


def test_estimate_writes_markdown(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090", "-f", "markdown")
    data = json.loads(run_cli("estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090", "-f", "json").out)
    lines = result.out.splitlines()
    assert lines[0].startswith("### qwen-1.8b-law-lora: lora of ")
    assert "| per GPU | GiB | how |" in lines
    weights = data["memory"]["per_gpu"]["components"]["weights"]["gib"]
    assert any(line.startswith(f"| weights | {weights:.2f} | ") for line in lines)
    assert any(
        line.startswith("- on home-2x3090 (NVIDIA GeForce RTX 3090, ") and "fits" in line for line in lines
    )


CLOUD_RIG = """\
apiVersion: rigcheck/v1
kind: Rig
name: rented
nodes:
  - name: a10g
    {how}
    gpus: {{model: A10G}}
    memory_gib: 64
"""
BUILD_CHECKERS = {
    "power.psu-sustained",
    "power.psu-transients",
    "power.gpu-connectors",
    "power.psu-redundancy",
    "power.wall-circuit",
    "platform.gpu-clearance",
    "platform.open-air-stacking",
    "platform.slot-budget",
    "platform.passive-cooling",
    "platform.multi-psu-sync",
}


@pytest.mark.parametrize("how", ["instance: aws g5.xlarge", "chassis: {form_factor: Cloud}"])
def test_a_cloud_instance_skips_the_rules_on_how_a_machine_is_built(run_cli, write_spec, how: str) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(CLOUD_RIG.format(how=how), "rig.yaml")
    report = run_cli("check", rig, "-f", "json").json()
    skipped = {
        run["name"] for run in report["checkers"] if run["reason"] and "cloud instances" in run["reason"]
    }
    assert skipped == BUILD_CHECKERS
    assert not [f for f in report["findings"] if f["code"][:3] == "PWR" or f["code"] in ("PLT003", "PLT006")]
    text = run_cli("check", rig, "--color", "never").out
    assert "10 checker(s) skipped, cloud instances: the provider owns power, cooling and the chassis" in text


def test_a_rig_with_a_cloud_node_and_a_built_one_checks_the_built_one_only(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    text = CLOUD_RIG.format(how="instance: aws g5.xlarge") + textwrap.indent(
        "- name: tower\n  gpus: {model: RTX 3090}\n  memory_gib: 64\n  psu: {watts: 850}\n", "  "
    )
    report = run_cli("check", write_spec(text, "rig.yaml"), "-f", "json", "--select", "PWR001").json()
    [finding] = report["findings"]
    assert finding["message"].startswith("node tower: ")
