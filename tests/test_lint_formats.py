"""Golden files of every format for ``rigcheck lint`` on tests/lint_repo, a small repository with
known problems (``RIGCHECK_UPDATE_GOLDEN=1`` rewrites them; review the diff). The SARIF also
validates against the official schema, the JUnit parses into the report's counts, and the GitHub
annotations are one per counting warning or failure."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

LINT_REPO = Path(__file__).parent / "lint_repo"
GOLDEN = Path(__file__).parent / "golden" / "lint"
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
FORMATS = {"text": "txt", "json": "json", "sarif": "sarif", "junit": "xml", "github": "txt", "markdown": "md"}


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(LINT_REPO)
    monkeypatch.setattr("rigcheck.commands._shared.report_root", lambda: str(LINT_REPO))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return LINT_REPO


def normalized(name: str, text: str) -> str:
    """Times and dates vary between runs; nothing else may."""
    if name == "json":
        report = json.loads(text)
        report["created_at"] = "<created_at>"
        report["timings"] = {key: 0 for key in report["timings"]}
        for checker in report["checkers"]:
            checker["duration_ms"] = 0
        text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    return re.sub(r"rigcheck \d+\.\d+\.\d+\S*", "rigcheck <version>", text) if name != "sarif" else text


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_golden(in_repo, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("lint", "--format", name, "--color", "never")
    assert result.exit_code == 1, result.err
    text = normalized(name, result.out)
    path = GOLDEN / f"lint_repo.{name}.{FORMATS[name]}"
    if os.environ.get("RIGCHECK_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}; run with RIGCHECK_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed; review the diff"


def test_sarif_is_valid_and_follows_github_rules(in_repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    sarif = json.loads(run_cli("lint", "--format", "sarif").out)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(sarif)
    run = sarif["runs"][0]
    report = json.loads(run_cli("lint", "--format", "json").out)
    counted = [f for f in report["findings"] if f["severity"] in ("warn", "fail")]
    assert len(run["results"]) == len(counted)  # suppressed ones included, with suppressions[]
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["region"]["startLine"] >= 1
        assert not location["artifactLocation"]["uri"].startswith("/")
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    suppressed = {r["ruleId"]: r["suppressions"][0] for r in run["results"] if r.get("suppressions")}
    assert suppressed["PWR002"]["kind"] == "inSource" and suppressed["PWR002"]["status"] == "accepted"
    assert suppressed["PWR002"]["justification"] == "ATX 3.1 unit, its excursion rating covers the spikes"
    assert suppressed["PWR005"]["kind"] == "external"


def test_clean_repository_gives_empty_results(tmp_path, monkeypatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.yaml").write_text("a: 1\n", encoding="utf-8")
    result = run_cli("lint", "--format", "sarif")
    assert result.exit_code == 0
    assert json.loads(result.out)["runs"][0]["results"] == []


def test_junit_counts(in_repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    root = ET.fromstring(run_cli("lint", "--format", "junit").out)
    suites = root.findall("testsuite")
    assert int(root.get("tests")) == sum(int(suite.get("tests")) for suite in suites)
    failures = [case for case in root.iter("testcase") if case.find("failure") is not None]
    failed_rules = sorted({case.get("name").split()[0] for case in failures})
    # every rule with a counting failure (warnings pass under --fail-on fail)
    assert failed_rules == ["BW003", "LINT002", "MEM001", "NET003", "PLT002", "PWR001", "SPEC011", "SUP001"]
    assert int(root.get("failures")) == len(failures)


def test_github_annotations_and_step_summary(in_repo, run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = run_cli("lint")  # github is the default under Actions
    lines = result.out.splitlines()
    annotations = [line for line in lines if line.startswith("::")]
    assert len(annotations) == 15  # 8 failures, 7 warnings; suppressed ones are not annotated
    assert [line.split()[0] for line in annotations] == ["::error"] * 8 + ["::warning"] * 7
    assert summary.read_text(encoding="utf-8").startswith("## rigcheck: ❌ fail")


def test_several_formats_in_one_run(in_repo, run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    result = run_cli(
        "lint", "-f", "sarif", "-o", str(sarif), "-f", "junit", "-o", str(junit), "-f", "markdown"
    )
    assert result.exit_code == 1 and result.out.startswith("## rigcheck")
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert ET.fromstring(junit.read_text()).tag == "testsuites"
    assert run_cli("lint", "-f", "json", "-f", "text").exit_code == 2  # two formats on standard output
