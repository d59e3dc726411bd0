"""rigcheck lint on tests/lint_repo (a small repository with known problems): discovery, pairing,
the project config, suppressions, waivers and baselines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

LINT_REPO = Path(__file__).parent / "lint_repo"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of tests/lint_repo as the working directory."""
    target = tmp_path / "repo"
    shutil.copytree(LINT_REPO, target)
    monkeypatch.chdir(target)
    return target


def lint_json(run_cli, *args: str):  # type: ignore[no-untyped-def]
    result = run_cli("lint", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.err
    return result.exit_code, result.json()


def codes(report, *, counting: bool = True) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    """(code, severity, file:line) of the findings that count (or of the suppressed ones)."""
    return sorted(
        (f["code"], f["severity"], f"{f['location']['file']}:{f['location']['line']}")
        for f in report["findings"]
        if f["severity"] in ("warn", "fail") and (not f["suppressions"]) is counting
    )


def test_known_problems(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    exit_code, report = lint_json(run_cli)
    assert exit_code == 1
    assert codes(report) == [
        ("BW003", "fail", "workloads/lora.yaml:15"),
        ("ICX003", "warn", "rigs/lab-4x3090.yaml:8"),  # GeForce 3090s: no PCIe peer-to-peer
        ("LINT001", "warn", "workloads/orphan.yaml:3"),
        ("LINT001", "warn", "workloads/typo.yaml:3"),
        ("LINT002", "fail", "workloads/typo.yaml:4"),
        ("MEM001", "fail", "workloads/lora.yaml:11"),
        ("NET003", "fail", "rigs/cluster.yaml:23"),
        # no NET004: NCCL_P2P_DISABLE=1 costs nothing on cards without peer-to-peer (its reasonless
        # suppression on line 22 is still SUP001)
        ("NET005", "warn", "rigs/cluster.yaml:25"),
        ("PLT002", "fail", "rigs/lab-4x3090.yaml:9"),  # warn, made fail by the config
        ("PWR001", "fail", "rigs/lab-4x3090.yaml:12"),
        ("SPEC011", "fail", "rigs/broken.yaml:7"),
        ("SUP001", "fail", "rigs/lab-4x3090.yaml:22"),
        ("SUP002", "warn", ".rigcheck.yaml:18"),
        ("SUP002", "warn", "rigs/lab-4x3090.yaml:15"),
        ("SUP003", "warn", ".rigcheck.yaml:14"),
    ]
    assert codes(report, counting=False) == [
        ("PWR002", "warn", "rigs/lab-4x3090.yaml:12"),  # the comment on the line above
        ("PWR005", "fail", "rigs/cluster.yaml:5"),  # the waiver
    ]
    assert [(run["subject"], run["verdict"]) for run in report["runs"]] == [
        ("rig cluster", "fail"),
        ("rig lab-4x3090", "fail"),
        ("lab-4x3090 + lora-7b", "fail"),
        ("cluster + pretrain-8b", "fail"),
    ]
    assert report["summary"]["suppressed"] == 2


def test_discovery_skips_other_yaml(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    _, report = lint_json(run_cli)
    inputs = sorted(item["path"] for item in report["inputs"])
    assert inputs == [
        "rigs/cluster.yaml",
        "rigs/lab-4x3090.yaml",
        "workloads/lora.yaml",
        "workloads/orphan.yaml",
        "workloads/pretrain.yaml",
        "workloads/typo.yaml",
    ]  # broken.yaml fails to load (a finding); .github/ and notes.yaml are not specs


def test_config_severity_and_threshold_are_cited(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    _, report = lint_json(run_cli, "--select", "PLT002")
    finding = next(f for f in report["findings"] if f["code"] == "PLT002" and f["severity"] == "fail")
    assert "4 GPU processes x (2 workers + 1) + 3 = 15 needed" in finding["message"]
    assert finding["evidence"]["severity_from"] == "warn, set to fail in .rigcheck.yaml"
    assert "reserved_cores_min = 3 set in .rigcheck.yaml (data: 1)" in finding["evidence"]["source"]


def test_show_config_names_the_origin_of_each_value(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("lint", "--show-config", "--ignore", "PLT006", "--fail-on", "warn")
    assert result.exit_code == 0
    lines = {line.split("=")[0].strip(): line for line in result.out.splitlines() if "=" in line}
    assert lines["fail-on"].endswith("# command line")
    assert lines["severity"].endswith("# .rigcheck.yaml")
    assert lines["select"].endswith("# default")
    assert "waiver: PWR005 rigs/cluster.yaml: the second 32 A feed is installed in week 3" in result.out


def test_isolated_ignores_the_config(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    _, report = lint_json(run_cli, "--isolated")
    found = {(code, severity) for code, severity, _ in codes(report)}
    assert ("PLT002", "warn") in found and ("PWR005", "fail") in found
    assert not any(code.startswith("SUP00") and code != "SUP001" and code != "SUP002" for code, _ in found)


def test_no_ignores_applies_no_suppression(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    _, report = lint_json(run_cli, "--no-ignores")
    assert codes(report, counting=False) == []
    counted = {code for code, _, _ in codes(report)}
    assert {"PWR002", "PWR005"} <= counted and not counted & {"SUP001", "SUP002", "SUP003"}


def test_file_wide_suppression(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / "rigs" / "cluster.yaml"
    path.write_text(
        path.read_text() + "# rigcheck: ignore-file[NET] reason: the fabric is being re-cabled\n",
        encoding="utf-8",
    )
    _, report = lint_json(run_cli)
    suppressed = {code for code, _, _ in codes(report, counting=False)}
    assert {"NET003", "NET005"} <= suppressed
    reasons = {
        f["suppressions"][0]["reason"]
        for f in report["findings"]
        if f["code"] == "NET003" and f["suppressions"]
    }
    assert reasons == {"the fabric is being re-cabled"}


def test_unknown_code_in_suppression(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = repo / "rigs" / "cluster.yaml"
    text = path.read_text().replace(
        "env: {NCCL_SOCKET_IFNAME: eth0}",
        "env: {NCCL_SOCKET_IFNAME: eth0}  # rigcheck: ignore[NTE003] reason: typo",
    )
    path.write_text(text, encoding="utf-8")
    _, report = lint_json(run_cli)
    bad = [f for f in report["findings"] if f["code"] == "SUP001" and "NTE003" in f["message"]]
    assert bad and ("NET003", "fail", "rigs/cluster.yaml:23") in codes(report)


def test_expired_waiver_stops_applying(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    config = repo / ".rigcheck.yaml"
    config.write_text(
        config.read_text().replace("expires: 2999-12-31", "expires: 2020-06-30"), encoding="utf-8"
    )
    _, report = lint_json(run_cli)
    assert ("PWR005", "fail", "rigs/cluster.yaml:5") in codes(report)
    expired = [f for f in report["findings"] if f["code"] == "SUP003" and "PWR005" in f["message"]]
    assert expired and expired[0]["location"]["line"] == 10  # the waiver's "- rule:" line


def test_config_errors_exit_2_with_file_and_line(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    config = repo / ".rigcheck.yaml"
    config.write_text("fail_on: warning\nselct: [PWR]\n", encoding="utf-8")
    result = run_cli("lint")
    assert result.exit_code == 2
    assert ".rigcheck.yaml:1:1: error: /fail_on: Input should be 'warn' or 'fail' [CONFIG001]" in result.err
    assert (
        ".rigcheck.yaml:2:1: error: /selct: unknown key 'selct'; did you mean 'select'? [CONFIG001]"
        in result.err
    )
    config.write_text("thresholds: {power.sustaned.warn_above_fraction: 0.9}\n", encoding="utf-8")
    result = run_cli("lint")
    assert result.exit_code == 2 and "no section 'sustaned'; did you mean 'sustained'?" in result.err
    config.write_text("waivers: [{rule: PWR001, path: x.yaml}]\n", encoding="utf-8")
    result = run_cli("lint")
    assert result.exit_code == 2 and "/waivers/0/reason: Field required" in result.err


def test_pyproject_config(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / ".rigcheck.yaml").unlink()
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.rigcheck]\nignore = ["PWR"]\n', encoding="utf-8"
    )
    result = run_cli("lint", "--show-config")
    assert "# config file: pyproject.toml" in result.out
    assert (
        "ignore     = [PWR]" in result.out.replace("  ", " ").replace("ignore =", "ignore     =")
        or "[PWR]" in result.out
    )
    _, report = lint_json(run_cli)
    assert not any(f["code"].startswith("PWR") for f in report["findings"])
    (repo / "pyproject.toml").unlink()
    _, report = lint_json(run_cli)
    assert any(f["code"].startswith("PWR") for f in report["findings"])


def test_baseline_keeps_moved_findings_and_catches_new_ones(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("lint", "--create-baseline", "rigcheck-baseline.json")
    assert result.exit_code == 0 and "baseline entries" in result.err
    entries = json.loads((repo / "rigcheck-baseline.json").read_text())["findings"]
    assert all("line" not in entry for entry in entries)
    exit_code, report = lint_json(run_cli, "--baseline", "rigcheck-baseline.json")
    assert exit_code == 0 and report["summary"]["failed"] == 0 and report["summary"]["warned"] == 0
    # move every finding of the lab rig ten lines down
    lab = repo / "rigs" / "lab-4x3090.yaml"
    text = lab.read_text()
    lab.write_text(text.replace("nodes:\n", "nodes:\n" + "# moved\n" * 10, 1), encoding="utf-8")
    exit_code, report = lint_json(run_cli, "--baseline", "rigcheck-baseline.json")
    pwr001 = next(f for f in report["findings"] if f["code"] == "PWR001" and f["severity"] == "fail")
    assert pwr001["location"]["line"] == 22 and pwr001["suppressions"][0]["kind"] == "baseline"
    assert exit_code == 0
    # a new problem is not in the baseline: NCCL told to use an interface the node does not have
    lab.write_text(
        lab.read_text().replace(
            'env: {NCCL_P2P_DISABLE: "1"}', 'env: {NCCL_P2P_DISABLE: "1", NCCL_SOCKET_IFNAME: eth9}'
        ),
        encoding="utf-8",
    )
    exit_code, report = lint_json(run_cli, "--baseline", "rigcheck-baseline.json")
    assert exit_code == 1
    assert [code for code, severity, _ in codes(report) if severity == "fail"] == ["NET003"]


def test_check_uses_the_config_and_suppressions(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", "rigs/lab-4x3090.yaml", "--format", "json")
    report = result.json()
    pwr002 = next(f for f in report["findings"] if f["code"] == "PWR002")
    assert pwr002["suppressions"][0]["kind"] == "inline"
    assert next(f for f in report["findings"] if f["code"] == "PLT002")["severity"] == "fail"


def test_lint_of_the_shipped_specs(run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The repository's .rigcheck.yaml pairs the reference workloads with their rigs; every verdict is
    explained in docs/reference-rigs.md."""
    monkeypatch.chdir(Path(__file__).parents[1])
    result = run_cli("lint", "specs", "--format", "json")
    assert result.exit_code == 1
    report = result.json()
    verdicts = {run["subject"]: run["verdict"] for run in report["runs"]}
    assert len(verdicts) == 25 and list(verdicts.values()).count("fail") == 10
    assert verdicts["rig home-2x3090"] == "pass" and verdicts["dgx-h100-x4 + llama-3-8b-zero3"] == "fail"
    assert not any(
        f["code"].startswith(("LINT", "SUP", "SPEC")) for f in report["findings"] if f["severity"] != "pass"
    )


def test_suppression_of_a_rule_that_did_not_run_is_not_unused(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    """MEM001 needs a workload: checking the rig alone cannot tell whether its suppression is used."""
    lab = repo / "rigs" / "lab-4x3090.yaml"
    lab.write_text(
        lab.read_text().replace("memory_gib: 128", "memory_gib: 128  # rigcheck: ignore[MEM001] reason: x"),
        encoding="utf-8",
    )
    report = run_cli("check", "rigs/lab-4x3090.yaml", "--format", "json").json()
    assert not [f for f in report["findings"] if f["code"] == "SUP002" and "MEM001" in f["message"]]
    _, linted = lint_json(run_cli)
    assert [f for f in linted["findings"] if f["code"] == "SUP002" and "MEM001" in f["message"]]


def test_quoted_hash_is_not_a_comment(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    lab = repo / "rigs" / "lab-4x3090.yaml"
    lab.write_text(
        lab.read_text().replace("name: ws", "name: 'ws # rigcheck: ignore[PWR001] reason: inside a string'"),
        encoding="utf-8",
    )
    _, report = lint_json(run_cli)
    assert ("PWR001", "fail", "rigs/lab-4x3090.yaml:12") in codes(report)


def test_a_checkers_status_over_all_runs_is_its_worst_fault_else_ran_else_its_first() -> None:
    from rigcheck.core.engine.engine import CheckerStatus, StatusSlots
    from rigcheck.core.lint.lint import CheckerTotals

    def status(name: str, state: str, reason: str | None, findings: int = 1) -> StatusSlots:
        return CheckerStatus(name, "builtin", state, findings, 0.5, reason).slots()

    totals = CheckerTotals()
    runs = [
        [status("a", "skipped", "needs a workload"), status("b", "ran", None), status("c", "ran", None)],
        [status("d", "skipped", "needs a workload", 0)],
        [status("a", "ran", None), status("b", "crashed", "ValueError: x"), status("c", "deselected", "off")],
        [
            status("a", "deselected", "off"),
            status("b", "timed-out", "timed out"),
            status("c", "timed-out", "slow"),
        ],
    ]
    ran = [totals.add(statuses) for statuses in runs]
    seen = {name: (s.status, s.reason, s.findings, s.duration_ms) for name, s in totals.checkers.items()}
    assert seen == {
        "a": ("ran", None, 3, 1.5),
        "b": ("crashed", "ValueError: x", 3, 1.5),
        "c": ("timed-out", "slow", 3, 1.5),
        "d": ("skipped", "needs a workload", 0, 0.5),
    }
    assert ran == [frozenset({"b", "c"}), frozenset(), frozenset({"a"}), frozenset()]
    assert [run.duration_ms for run in totals.records()] == [1.5, 1.5, 1.5, 0.5]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_select_and_ignore_leave_only_the_chosen_rules_findings_in_a_lint(repo, run_cli, jobs: str) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.engine.rules import structural

    _, everything = lint_json(run_cli, "--jobs", jobs)
    all_codes = {finding["code"] for finding in everything["findings"]}
    # structural warnings and failures (a broken spec, an orphan workload) are never deselected
    kept = {
        f["code"]
        for f in everything["findings"]
        if structural(f["code"]) and f["severity"] in ("warn", "fail")
    }
    assert {"MEM001", "PWR002"} <= all_codes and kept
    _, selected = lint_json(run_cli, "--jobs", jobs, "--select", "MEM001,PWR")
    chosen = {code for code in all_codes if code == "MEM001" or code.startswith("PWR")}
    codes = {finding["code"] for finding in selected["findings"]}
    # SUP002 (a suppression that matched nothing) is said only of rules that ran
    assert chosen <= codes and kept - {"SUP002"} <= codes and codes <= chosen | kept
    _, ignored = lint_json(run_cli, "--jobs", jobs, "--ignore", "MEM")
    assert {finding["code"] for finding in ignored["findings"]} == {
        code for code in all_codes if not code.startswith("MEM")
    }
