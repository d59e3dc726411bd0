"""The sarif, junit, github and markdown formats, on reports of small specs written to a temporary
folder (so file paths are real and relative to a root), plus copies with suppressions added.

SARIF is validated against the official 2.1.0 schema vendored in tests/data/ (see its README)."""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rigcheck.core.engine.findings import Finding, Location, Severity, Suppression
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.report.render import RenderOptions
from rigcheck.core.report.render.github import escape_data, escape_property, render_github
from rigcheck.core.report.render.junit import group_findings, render_junit
from rigcheck.core.report.render.markdown import MAX_CHARS, render_markdown
from rigcheck.core.report.render.sarif import render_sarif
from rigcheck.core.report.report import Report, RunRecord, Summary

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "470e1d0cfdc41462ca7412ba553bcfe9f7bf133a826df0dbb2acf86ce0faf92f"


def rig_yaml(watts: int = 800, name: str = "r", blank_lines: int = 0) -> str:
    """2 x RTX 3090 (350 W) + 100 W CPU + 100 W platform = 900 W sustained."""
    gap = "\n" * blank_lines
    return (
        f"apiVersion: rigcheck/v1\nkind: Rig\nname: {name}\n{gap}nodes:\n  - name: box\n"
        "    gpus: {model: RTX 3090, count: 2}\n    cpu: {cores: 16, tdp_w: 100}\n    memory_gib: 128\n"
        f"    psu: {{watts: {watts}}}\n"
    )


WORKLOAD = """\
apiVersion: rigcheck/v1
kind: Workload
name: w
model: {preset: gpt2-124m}
task: pretrain
batch: {micro: 8, seq_len: 1024}
"""


@pytest.fixture
def check_files(tmp_path: Path, builtin_registry, catalog) -> Callable[..., Report]:  # type: ignore[no-untyped-def]
    """``check_files(rig_text, workload_text=None, select=(...), rig_name="rig.yaml")``: write the
    specs under tmp_path, load them from disk and check them."""
    from rigcheck.core.engine.engine import RunOptions, run_checks
    from rigcheck.core.spec.documents import load_spec

    def run(  # type: ignore[no-untyped-def]
        rig: str, workload: str | None = None, select=("PWR",), rig_name: str = "rig.yaml", **options
    ) -> Report:
        rig_path = tmp_path / rig_name
        rig_path.parent.mkdir(parents=True, exist_ok=True)
        rig_path.write_text(textwrap.dedent(rig), encoding="utf-8")
        workload_doc = None
        if workload is not None:
            workload_path = tmp_path / "workload.yaml"
            workload_path.write_text(textwrap.dedent(workload), encoding="utf-8")
            workload_doc = load_spec(str(workload_path))
        return run_checks(
            load_spec(str(rig_path)),
            workload_doc,
            builtin_registry,
            catalog,
            RunOptions(select=select, **options),
        )

    return run


@pytest.fixture
def options(tmp_path: Path, builtin_registry) -> RenderOptions:  # type: ignore[no-untyped-def]
    return RenderOptions(
        rules={code: entry.rule for code, entry in builtin_registry.rules.items()}, root=str(tmp_path)
    )


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def suppress(report: Report, code: str, *suppressions: Suppression) -> Report:
    """The report with every finding of ``code`` suppressed, summary and verdict recounted."""
    from rigcheck.core.report.report import recount

    findings = [
        finding.model_copy(update={"suppressions": suppressions}) if finding.code == code else finding
        for finding in report.findings
    ]
    return recount(report, findings)


def with_findings(report: Report, findings: list[Finding]) -> Report:
    from rigcheck.core.report.report import recount

    return recount(report, findings)


def one(report: Report, code: str) -> Finding:
    found = [finding for finding in report.findings if finding.code == code]
    assert len(found) == 1, found
    return found[0]


# --- the vendored schema -------------------------------------------------------------------------


def test_vendored_schema_is_the_sarif_2_1_0_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    jsonschema.Draft7Validator.check_schema(schema)
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft7Validator
    # the final 2.1.0 spelling: suppression.status (the committee draft had "state")
    assert set(schema["definitions"]["suppression"]["properties"]) >= {"kind", "status", "justification"}
    assert len(schema["definitions"]) == 52
    # byte-for-byte the file recorded in tests/data/README.md (CRLF line ends, as upstream)
    assert hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest() == SCHEMA_SHA256


def test_validator_rejects_invalid_sarif(validator, check_files, options) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(render_sarif(check_files(rig_yaml()), options))
    del document["runs"][0]["tool"]
    assert list(validator.iter_errors(document))
    document = json.loads(render_sarif(check_files(rig_yaml()), options))
    document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(validator.iter_errors(document))


# --- sarif ---------------------------------------------------------------------------------------


def assert_valid(validator, document: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:10])


def regions(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every region in the log: results, related locations, suppression locations."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "region" in node:
                found.append(node["region"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document["runs"][0]["results"])
    return found


def artifact_uris(document: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "artifactLocation" in node:
                found.append(node["artifactLocation"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    return found


class TestSarif:
    def test_failing_report_validates_and_is_shaped_for_code_scanning(
        self, validator, check_files, options
    ) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800))
        document = json.loads(render_sarif(report, options))
        assert_valid(validator, document)
        assert document["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
        assert document["version"] == "2.1.0" and len(document["runs"]) == 1
        run = document["runs"][0]
        driver = run["tool"]["driver"]
        assert driver["name"] == "rigcheck" and driver["version"] == report.tool.version
        assert driver["informationUri"] == "https://github.com/rigcheck/rigcheck"
        assert run["invocations"] == [{"executionSuccessful": True}]
        results = run["results"]
        # PWR001 fails (900 W on 800 W), PWR002 warns; the pass (PWR003) and skip (PWR005) are not results
        assert [(r["ruleId"], r["level"]) for r in results] == [("PWR001", "error"), ("PWR002", "warning")]
        pwr001 = results[0]
        assert pwr001["message"]["text"].startswith("node box: GPUs 2 x 350 W")
        assert " Fix: a PSU of at least" in pwr001["message"]["text"]
        physical = pwr001["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "rig.yaml", "uriBaseId": "%SRCROOT%"}
        assert physical["region"] == {"startLine": 9, "startColumn": 11}
        assert pwr001["properties"]["pointer"] == "/nodes/0/psu/watts"
        assert pwr001["properties"]["evidence"]["sustained_w"] == 900

    def test_rules_match_results(self, validator, check_files, options) -> None:  # type: ignore[no-untyped-def]
        document = json.loads(render_sarif(check_files(rig_yaml(800)), options))
        rules = document["runs"][0]["tool"]["driver"]["rules"]
        results = document["runs"][0]["results"]
        assert [rule["id"] for rule in rules] == sorted({result["ruleId"] for result in results})
        for result in results:
            assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        pwr001 = rules[0]
        assert pwr001["name"] == "psu-sustained-load-too-high"
        assert pwr001["shortDescription"]["text"] == options.rules["PWR001"].summary
        # text fields are plain: the docs' Markdown code marks are dropped (help.markdown keeps them)
        assert pwr001["fullDescription"]["text"] == options.rules["PWR001"].docs.resolved().what.replace(
            "`", ""
        )
        assert "`" not in pwr001["help"]["text"] and "`power_limit_w`" in pwr001["help"]["markdown"]
        assert pwr001["defaultConfiguration"] == {"level": "error"}
        assert pwr001["properties"] == {
            "tags": ["power", "PWR"],
            "precision": "high",
            "problem.severity": "error",
        }
        for heading in ("## What", "## Why", "## Example", "## Fix", "## References"):
            assert heading in pwr001["help"]["markdown"]
        assert "Why:" in pwr001["help"]["text"] and "Fix:" in pwr001["help"]["text"]
        for rule in rules:
            assert "security-severity" not in rule["properties"]
            for key in ("shortDescription", "fullDescription"):
                assert 0 < len(rule[key]["text"]) <= 1024

    def test_clean_report_has_an_empty_results_array(self, validator, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(2000), select=("PWR001", "PWR003"))
        assert report.verdict == "pass"
        text = render_sarif(report, options)
        document = json.loads(text)
        assert_valid(validator, document)
        assert "results" in document["runs"][0] and document["runs"][0]["results"] == []
        assert document["runs"][0]["tool"]["driver"]["rules"] == []

    def test_start_lines_and_uris_everywhere(self, validator, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), WORKLOAD, select=())
        first = report.findings[0]
        extra = first.model_copy(
            update={
                "code": "PWR001",
                "name": "psu-sustained-load-too-high",
                "severity": Severity.WARN,
                "location": Location(file=str(tmp_path / "rig.yaml"), line=None, column=None, pointer="/x"),
                "related": (Location(file=str(tmp_path / "workload.yaml"), pointer="/batch"),),
            }
        )
        report = with_findings(report, [*report.findings, extra])
        document = json.loads(render_sarif(report, options))
        assert_valid(validator, document)
        assert regions(document)
        for region in regions(document):
            assert region["startLine"] >= 1 and region["startColumn"] >= 1
        for artifact in artifact_uris(document):
            assert not artifact["uri"].startswith(("/", "file:")) and str(tmp_path) not in artifact["uri"]
            assert artifact["uri"] in {"rig.yaml", "workload.yaml"}
            assert artifact["uriBaseId"] == "%SRCROOT%"
        last = document["runs"][0]["results"][-1]
        assert last["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}
        assert last["relatedLocations"][0]["id"] == 1

    def test_pair_named_in_message_when_a_workload_was_checked(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        alone = json.loads(render_sarif(check_files(rig_yaml(800)), options))
        assert alone["runs"][0]["results"][0]["message"]["text"].startswith("node box:")
        report = check_files(rig_yaml(800), WORKLOAD)
        paired = json.loads(render_sarif(report, options))
        texts = [result["message"]["text"] for result in paired["runs"][0]["results"]]
        assert texts[0].startswith(f"[{report.subject}] node box: GPUs 2 x 350 W")

    def test_fingerprints_do_not_move_with_lines(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        before = json.loads(render_sarif(check_files(rig_yaml(800)), options))["runs"][0]["results"]
        after = json.loads(render_sarif(check_files(rig_yaml(800, blank_lines=3)), options))["runs"][0][
            "results"
        ]
        assert [r["ruleId"] for r in before] == [r["ruleId"] for r in after]
        for old, new in zip(before, after, strict=True):
            old_line = old["locations"][0]["physicalLocation"]["region"]["startLine"]
            new_line = new["locations"][0]["physicalLocation"]["region"]["startLine"]
            assert new_line == old_line + 3
            assert new["partialFingerprints"] == old["partialFingerprints"]
            line_hash = old["partialFingerprints"]["primaryLocationLineHash"]
            assert re.fullmatch(r"[0-9a-f]{16}:1", line_hash)
            assert re.fullmatch(r"[0-9a-f]{64}", old["partialFingerprints"]["rigcheck/v1"])
        # different rules at the same place have different fingerprints
        assert before[0]["partialFingerprints"] != before[1]["partialFingerprints"]

    def test_repeated_fingerprints_count_occurrences(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), select=("PWR001",))
        report = with_findings(report, [*report.findings, report.findings[0]])
        results = json.loads(render_sarif(report, options))["runs"][0]["results"]
        hashes = [result["partialFingerprints"]["primaryLocationLineHash"] for result in results]
        assert hashes[0].endswith(":1") and hashes[1].endswith(":2") and hashes[0][:16] == hashes[1][:16]

    def test_suppressed_findings_stay_results(self, validator, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800))
        comment = Location(file=str(tmp_path / "rig.yaml"), line=8, column=5)
        report = suppress(
            report, "PWR001", Suppression(kind="inline", reason="bench rig, 10-minute runs", location=comment)
        )
        report = suppress(
            report, "PWR002", Suppression(kind="waiver", reason="PSU swap ordered", expires="2099-01-01")
        )
        assert report.summary.suppressed == 2 and report.verdict == "pass"
        document = json.loads(render_sarif(report, options))
        assert_valid(validator, document)
        results = {result["ruleId"]: result for result in document["runs"][0]["results"]}
        inline = results["PWR001"]["suppressions"]
        assert inline[0]["kind"] == "inSource" and inline[0]["status"] == "accepted"
        assert inline[0]["justification"] == "bench rig, 10-minute runs"
        where = inline[0]["location"]["physicalLocation"]
        assert where["artifactLocation"]["uri"] == "rig.yaml" and where["region"]["startLine"] == 8
        waiver = results["PWR002"]["suppressions"][0]
        assert waiver["kind"] == "external" and waiver["justification"] == "PSU swap ordered"
        assert waiver["properties"]["expires"] == "2099-01-01"
        baseline = suppress(report, "PWR001", Suppression(kind="baseline", reason="in the baseline"))
        kinds = [
            r["suppressions"][0]["kind"]
            for r in json.loads(render_sarif(baseline, options))["runs"][0]["results"]
        ]
        assert kinds == ["external", "external"]

    def test_file_outside_root_keeps_an_absolute_uri(
        self, validator, check_files, tmp_path, builtin_registry
    ) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), rig_name="specs/rig.yaml")
        elsewhere = RenderOptions(root=str(tmp_path / "other"))
        document = json.loads(render_sarif(report, elsewhere))
        assert_valid(validator, document)
        artifact = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact["uri"].startswith("file:///") and artifact["uri"].endswith("/specs/rig.yaml")
        assert "uriBaseId" not in artifact
        nested = json.loads(render_sarif(report, RenderOptions(root=str(tmp_path))))
        artifact = nested["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact == {"uri": "specs/rig.yaml", "uriBaseId": "%SRCROOT%"}

    def test_rules_without_metadata_and_long_docs(self, validator, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800))
        # no rule metadata at all (a plugin's format call without rules): minimal entries still validate
        bare = json.loads(render_sarif(report, RenderOptions(root=options.root)))
        assert_valid(validator, bare)
        rule = bare["runs"][0]["tool"]["driver"]["rules"][0]
        assert (
            rule["id"] == "PWR001"
            and rule["shortDescription"]["text"] == "PWR001 psu-sustained-load-too-high"
        )
        assert rule["defaultConfiguration"]["level"] == "error"
        # a 2,400-character description is cut at a word, under GitHub's 1,024
        long = Rule(
            code="PWR001",
            name="psu-sustained-load-too-high",
            summary="s",
            severity=Severity.FAIL,
            docs=RuleDocs(what="watts " * 400, why="why", example="", fix="fix"),
        )
        document = json.loads(render_sarif(report, RenderOptions(rules={"PWR001": long}, root=options.root)))
        assert_valid(validator, document)
        text = document["runs"][0]["tool"]["driver"]["rules"][0]["fullDescription"]["text"]
        assert len(text) <= 1024 and text.endswith("watts…")

    def test_evidence_is_json_safe_and_output_deterministic(self, validator, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800))
        odd = one(report, "PWR001").model_copy(
            update={"evidence": {"nan": float("nan"), "inf": float("inf"), "pair": (1, 2), "set": {3}}}
        )
        report = with_findings(report, [odd if f.code == "PWR001" else f for f in report.findings])
        text = render_sarif(report, options)

        def refuse(constant: str) -> None:
            raise ValueError(constant)

        document = json.loads(text, parse_constant=refuse)
        assert_valid(validator, document)
        evidence = document["runs"][0]["results"][0]["properties"]["evidence"]
        assert evidence == {"nan": "nan", "inf": "inf", "pair": [1, 2], "set": [3]}
        assert render_sarif(report, options) == text and text.endswith("}\n")


# --- junit ---------------------------------------------------------------------------------------


def parse_junit(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(text.encode("utf-8"))


def outcome(case: ET.Element) -> str:
    for tag in ("failure", "error", "skipped"):
        if case.find(tag) is not None:
            return tag
    return "passed"


def expected_junit(report: Report) -> dict[str, dict[str, str]]:
    """subject -> code -> outcome, worked out independently of the renderer."""
    expected: dict[str, dict[str, list[Finding]]] = {}
    for finding in report.findings:
        expected.setdefault(finding.subject or report.subject, {}).setdefault(finding.code, []).append(
            finding
        )
    result: dict[str, dict[str, str]] = {}
    for subject, codes in expected.items():
        result[subject] = {}
        for code, findings in codes.items():
            counting = {f.severity for f in findings if not f.suppressions}
            if Severity.FAIL in counting:
                result[subject][code] = "error" if code.startswith("ENGINE") else "failure"
            elif Severity.WARN in counting and report.fail_on == "warn":
                result[subject][code] = "failure"
            elif any(f.suppressions for f in findings) or counting == {Severity.SKIP}:
                result[subject][code] = "skipped"
            else:
                result[subject][code] = "passed"
    return result


class TestJunit:
    def test_worked_by_hand(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        # PWR001 fail (900 W on 800 W), PWR002 warn, PWR003 pass on "r / node box"; PWR005 skip on "rig r"
        root = parse_junit(render_junit(check_files(rig_yaml(800)), options))
        assert root.tag == "testsuites"
        assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped", "time")} == {
            "tests": "4",
            "failures": "1",
            "errors": "0",
            "skipped": "1",
            "time": "0",
        }
        suites = root.findall("testsuite")
        assert [suite.get("name") for suite in suites] == ["r / node box", "rig r"]
        node, rig = suites
        assert (node.get("tests"), node.get("failures"), node.get("skipped")) == ("3", "1", "0")
        assert (rig.get("tests"), rig.get("failures"), rig.get("skipped")) == ("1", "0", "1")
        cases = {case.get("name"): case for case in node.findall("testcase")}
        assert set(cases) == {
            "PWR001 psu-sustained-load-too-high",
            "PWR002 psu-transient-headroom-too-low",
            "PWR003 gpu-power-over-connector-rating",
        }
        failed = cases["PWR001 psu-sustained-load-too-high"]
        assert failed.get("classname") == "rigcheck.power" and failed.get("time") == "0"
        failure = failed.find("failure")
        assert failure is not None and failure.get("type") == "fail"
        assert "900 W on 1 x 800 W" in failure.get("message", "")
        assert "rig.yaml:9" in (failure.text or "") and "fix: a PSU of at least" in (failure.text or "")
        warned = cases["PWR002 psu-transient-headroom-too-low"]
        assert outcome(warned) == "passed" and "1,350 W" in (warned.findtext("system-out") or "")
        assert outcome(cases["PWR003 gpu-power-over-connector-rating"]) == "passed"
        skipped = rig.find("testcase/skipped")
        assert skipped is not None and "site.circuit is not given" in skipped.get("message", "")

    def test_warnings_fail_with_fail_on_warn(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        root = parse_junit(render_junit(check_files(rig_yaml(800), fail_on=Severity.WARN), options))
        assert root.get("failures") == "2"
        warn = [f for f in root.iter("failure") if f.get("type") == "warn"]
        assert len(warn) == 1 and "1,350 W" in warn[0].get("message", "")

    @pytest.mark.parametrize("workload", [None, WORKLOAD])
    def test_counts_match_the_report(self, check_files, options, workload) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(1000), workload, select=())
        report = suppress(report, "PWR002", Suppression(kind="file", reason="known"))
        root = parse_junit(render_junit(report, options))
        expected = expected_junit(report)
        suites = root.findall("testsuite")
        assert [suite.get("name") for suite in suites] == list(expected)
        totals = {"tests": 0, "failure": 0, "error": 0, "skipped": 0}
        for suite in suites:
            got = {case.get("name", "").split()[0]: outcome(case) for case in suite.findall("testcase")}
            assert got == expected[suite.get("name", "")]
            outcomes = list(got.values())
            assert suite.get("tests") == str(len(outcomes))
            assert suite.get("failures") == str(outcomes.count("failure"))
            assert suite.get("errors") == str(outcomes.count("error"))
            assert suite.get("skipped") == str(outcomes.count("skipped"))
            totals["tests"] += len(outcomes)
            for key in ("failure", "error", "skipped"):
                totals[key] += outcomes.count(key)
        assert root.get("tests") == str(totals["tests"])
        assert root.get("failures") == str(totals["failure"])
        assert root.get("errors") == str(totals["error"])
        assert root.get("skipped") == str(totals["skipped"])
        assert totals["tests"] == len({(f.subject or report.subject, f.code) for f in report.findings})

    def test_suppressed_rule_is_skipped_with_its_reason(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = suppress(
            check_files(rig_yaml(800)), "PWR001", Suppression(kind="inline", reason="bench only")
        )
        root = parse_junit(render_junit(report, options))
        case = next(c for c in root.iter("testcase") if c.get("name", "").startswith("PWR001"))
        skipped = case.find("skipped")
        assert skipped is not None and skipped.get("message") == "suppressed: bench only"
        assert root.get("failures") == "0" and root.get("skipped") == "2"

    def test_escaping_and_crashes(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), select=("PWR001",))
        nasty = one(report, "PWR001").model_copy(
            update={"message": 'a <b> & "c" \x07 ]]> end', "fix": "use <psu watts='1200'>"}
        )
        crash = nasty.model_copy(update={"code": "ENGINE001", "name": "checker-crashed", "checker": "engine"})
        root = parse_junit(render_junit(with_findings(report, [nasty, crash]), options))
        failure = root.find(".//failure")
        assert failure is not None and failure.get("message") == 'a <b> & "c" \ufffd ]]> end'
        assert "use <psu watts='1200'>" in (failure.text or "")
        error = root.find(".//error")
        assert error is not None and error.get("type") == "crash"
        assert (root.get("failures"), root.get("errors")) == ("1", "1")

    def test_runs_become_suites_in_order(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        a = check_files(rig_yaml(800, name="a"), rig_name="a.yaml")
        b = check_files(rig_yaml(2000, name="b"), rig_name="b.yaml")
        runs = [
            RunRecord(subject="rig b", rig=str(tmp_path / "b.yaml"), verdict=b.verdict, summary=b.summary),
            RunRecord(subject="rig a", rig=str(tmp_path / "a.yaml"), verdict=a.verdict, summary=a.summary),
        ]
        numbered = [f.model_copy(update={"run": 1}) for f in a.findings] + [
            f.model_copy(update={"run": 0}) for f in b.findings
        ]
        merged = with_findings(a, numbered).model_copy(update={"subject": "lint", "runs": runs})
        groups = group_findings(merged)
        assert [subject for subject, _ in groups] == ["rig b", "rig a"]
        assert {f.subject for f in groups[0][1]} == {"b / node box", "rig b"}
        root = parse_junit(render_junit(merged, options))
        suites = root.findall("testsuite")
        assert [suite.get("name") for suite in suites] == ["rig b", "rig a"]
        assert (suites[0].get("failures"), suites[1].get("failures")) == ("0", "1")

    def test_run_index_decides_the_suite(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        # rigcheck lint numbers each finding's run; that wins over any subject match, and findings
        # of no run (a file that did not load) follow under their own subject
        report = check_files(rig_yaml(800), select=("PWR001", "PWR005"))
        rig = str(tmp_path / "rig.yaml")
        runs = [
            RunRecord(subject="rig r", rig=rig, verdict="pass", summary=Summary()),
            RunRecord(subject="r + w", rig=rig, workload="w.yaml", verdict="fail", summary=Summary(failed=1)),
        ]
        pwr001, pwr005 = one(report, "PWR001"), one(report, "PWR005")
        broken = pwr005.model_copy(
            update={"code": "SPEC012", "name": "unreadable-file", "subject": "file x.yaml"}
        )
        findings = [pwr001.model_copy(update={"run": 1}), pwr005.model_copy(update={"run": 1}), broken]
        indexed = with_findings(report, findings).model_copy(update={"runs": runs})
        groups = [(subject, [f.code for f in found]) for subject, found in group_findings(indexed)]
        assert groups == [("rig r", []), ("r + w", ["PWR001", "PWR005"]), ("file x.yaml", ["SPEC012"])]
        suites = parse_junit(render_junit(indexed, options)).findall("testsuite")
        assert [(s.get("name"), s.get("tests")) for s in suites] == [
            ("rig r", "0"),
            ("r + w", "2"),
            ("file x.yaml", "1"),
        ]

    def test_findings_without_a_run_index_belong_to_no_run(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        # the run index is the one decider: a finding without one is never guessed into a run by its
        # subject or file, even where they match a run's
        report = check_files(rig_yaml(800), select=("PWR001",))
        rig = str(tmp_path / "rig.yaml")
        runs = [RunRecord(subject="rig r", rig=rig, verdict="fail", summary=Summary(failed=1))]
        finding = one(report, "PWR001").model_copy(update={"subject": "rig r"})
        groups = group_findings(with_findings(report, [finding]).model_copy(update={"runs": runs}))
        assert [(subject, len(found)) for subject, found in groups] == [("rig r", 0), ("rig r", 1)]


# --- github --------------------------------------------------------------------------------------


def unescape_data(text: str) -> str:
    """What the Actions runner does to a command's message (%25 last)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


ANNOTATION = re.compile(r"^::(error|warning) ([^:]*)::(.*)$")


def parse_annotation(line: str) -> tuple[str, dict[str, str], str]:
    match = ANNOTATION.match(line)
    assert match, line
    properties = dict(item.split("=", 1) for item in match.group(2).split(","))
    return (
        match.group(1),
        {k: unescape_property(v) for k, v in properties.items()},
        unescape_data(match.group(3)),
    )


TRICKY = [
    "100% sure",
    "a:b,c=d",
    "two\nlines\r\nand CRLF",
    "literal %0A and %25 and %3A",
    "%",
    "::error::injected",
    "unicode ✓ Ω 中文 🚀",
    "",
]


class TestGithub:
    @pytest.mark.parametrize("text", TRICKY)
    def test_escaping_round_trips(self, text: str) -> None:
        data = escape_data(text)
        assert "\n" not in data and "\r" not in data
        assert unescape_data(data) == text
        prop = escape_property(text)
        assert not set(prop) & {"\n", "\r", ":", ","}
        assert unescape_property(prop) == text

    def test_annotations_sorted_fail_first_then_file_and_line(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800))
        fail, warn = one(report, "PWR001"), one(report, "PWR002")
        early_warn = warn.model_copy(
            update={"location": Location(file=str(tmp_path / "a.yaml"), line=2, column=1)}
        )
        late_fail = fail.model_copy(
            update={"location": Location(file=str(tmp_path / "rig.yaml"), line=20, column=3)}
        )
        report = with_findings(report, [early_warn, late_fail, *report.findings])
        lines = render_github(report, options).splitlines()
        kinds = [parse_annotation(line)[:2] for line in lines[:-1]]
        assert [(kind, props["file"], props["line"]) for kind, props in kinds] == [
            ("error", "rig.yaml", "9"),
            ("error", "rig.yaml", "20"),
            ("warning", "a.yaml", "2"),
            ("warning", "rig.yaml", "9"),
        ]
        _, props, message = parse_annotation(lines[0])
        assert props["title"] == "rigcheck PWR001 (psu-sustained-load-too-high)" and props["col"] == "11"
        assert message.startswith("node box: GPUs 2 x 350 W") and " Fix: a PSU of at least" in message
        assert lines[-1].startswith("rigcheck: FAIL 2 failed, 2 warned") and not lines[-1].startswith("::")

    def test_messages_survive_the_runner(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), select=("PWR001",))
        text = "50% over: 900 W, 800 W\nsecond line %0A literal ✓"
        odd = one(report, "PWR001").model_copy(update={"message": text, "fix": None, "subject": "a:b, c"})
        line = render_github(with_findings(report, [odd]), options).splitlines()[0]
        assert parse_annotation(line)[2] == text

    def test_suppressed_and_passing_findings_are_not_annotated(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = suppress(check_files(rig_yaml(800)), "PWR001", Suppression(kind="inline", reason="bench"))
        lines = render_github(report, options).splitlines()
        assert [parse_annotation(line)[0] for line in lines[:-1]] == ["warning"]
        assert "PWR001" not in "".join(lines[:-1]) and "PWR003" not in "".join(lines)
        assert lines[-1] == (
            "rigcheck: WARN 0 failed, 1 warned, 1 passed, 1 not checked, 1 suppressed in 1 run "
            "(exit 0 with --fail-on fail)"
        )

    def test_unknown_column_and_line_are_left_out(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), select=("PWR001",))
        finding = one(report, "PWR001")
        no_column = finding.model_copy(update={"location": Location(file=str(tmp_path / "rig.yaml"), line=4)})
        no_line = finding.model_copy(update={"location": Location(file=str(tmp_path / "rig.yaml"))})
        nowhere = finding.model_copy(update={"location": None, "name": ""})
        lines = render_github(with_findings(report, [no_column, no_line, nowhere]), options).splitlines()
        properties = sorted(sorted(parse_annotation(line)[1]) for line in lines[:-1])
        assert properties == [["file", "line", "title"], ["file", "title"], ["title"]]
        assert "title=rigcheck PWR001::" in "\n".join(lines)


# --- markdown ------------------------------------------------------------------------------------


def table_rows(text: str) -> list[list[str]]:
    """Rows of the Markdown tables (header and separator rows left out), split on unescaped ``|``."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith(("| |", "|---", "| Rule")):
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            rows.append([cell.strip() for cell in cells])
    return rows


class TestMarkdown:
    def test_summary_table(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), WORKLOAD)
        text = render_markdown(report, options)
        assert text.startswith("## rigcheck: ❌ fail\n")
        assert "**1 failed**, 1 warned, 1 passed, 1 not checked, 0 suppressed" in text
        assert f"### {report.subject}" in text
        rows = [line for line in text.splitlines() if line.startswith(("| ❌", "| ⚠️"))]
        expected = [f for f in report.findings if f.counts and f.severity in (Severity.FAIL, Severity.WARN)]
        assert len(rows) == len(expected) == 2
        assert rows[0].startswith("| ❌ | PWR001 | node box: GPUs 2 x 350 W") and rows[0].endswith(
            "| rig.yaml:9 |"
        )
        assert rows[1].startswith("| ⚠️ | PWR002 |")
        assert "<details>" not in text

    def test_pipes_and_newlines_in_cells(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), select=("PWR001",))
        odd = one(report, "PWR001").model_copy(update={"message": "a | b\nc <d>", "fix": "x|y"})
        text = render_markdown(with_findings(report, [odd]), options)
        row = next(line for line in text.splitlines() if line.startswith("| ❌"))
        assert row == "| ❌ | PWR001 | a \\| b c &lt;d&gt; Fix: x\\|y | rig.yaml:9 |"
        assert len(re.split(r"(?<!\\)\|", row)) == 6  # four cells

    def test_clean_and_suppressed(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        clean = render_markdown(check_files(rig_yaml(2000), select=("PWR001",)), options)
        assert clean.startswith("## rigcheck: ✅ pass") and "No warnings or failures." in clean
        report = suppress(
            check_files(rig_yaml(800)),
            "PWR001",
            Suppression(
                kind="waiver", reason="PSU | swap ordered", location=Location(file=str(tmp_path / "c.toml"))
            ),
        )
        text = render_markdown(report, options)
        assert text.startswith("## rigcheck: ⚠️ warn")
        assert "<details><summary>Suppressed (1)</summary>" in text and text.rstrip().endswith("</details>")
        suppressed_rows = [row for row in table_rows(text) if row[0] == "PWR001"]
        assert len(suppressed_rows) == 1
        _, message, kind, reason, where = suppressed_rows[0]
        assert kind == "waiver" and reason == "PSU \\| swap ordered" and where == "rig.yaml:9"
        assert message.startswith("r / node box: node box: GPUs")

    def test_one_section_per_run(self, check_files, options, tmp_path) -> None:  # type: ignore[no-untyped-def]
        a = check_files(rig_yaml(800, name="a"), rig_name="a.yaml")
        b = check_files(rig_yaml(2000, name="b"), rig_name="b.yaml")
        runs = [
            RunRecord(subject="rig a", rig=str(tmp_path / "a.yaml"), verdict=a.verdict, summary=a.summary),
            RunRecord(subject="rig b", rig=str(tmp_path / "b.yaml"), verdict=b.verdict, summary=b.summary),
        ]
        numbered = [f.model_copy(update={"run": 0}) for f in a.findings] + [
            f.model_copy(update={"run": 1}) for f in b.findings
        ]
        merged = with_findings(a, numbered).model_copy(update={"runs": runs})
        text = render_markdown(merged, options)
        assert text.index("### rig a") < text.index("| ❌ | PWR001") < text.index("### rig b")
        assert text.split("### rig b", 1)[1].strip() == "No warnings or failures."

    def test_long_reports_fit_in_a_comment(self, check_files, options) -> None:  # type: ignore[no-untyped-def]
        report = check_files(rig_yaml(800), select=("PWR001",))
        finding = one(report, "PWR001")
        many = [finding.model_copy(update={"message": f"{n}: " + "x" * 300}) for n in range(1000)]
        text = render_markdown(with_findings(report, many), options)
        assert len(text) <= MAX_CHARS
        assert re.search(r"^\| \| \| \.\.\. and \d+ more \| \|$", text, re.MULTILINE)
        shown = sum(line.startswith("| ❌") for line in text.splitlines())
        more = int(re.search(r"\.\.\. and (\d+) more", text).group(1))  # type: ignore[union-attr]
        assert shown + more == 1000


# --- registration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "extension"), [("sarif", ".sarif"), ("junit", ".xml"), ("github", ".txt"), ("markdown", ".md")]
)
def test_formats_are_registered(builtin_registry, check_files, options, name: str, extension: str) -> None:  # type: ignore[no-untyped-def]
    entry = builtin_registry.formats[name]
    assert entry.extension == extension and entry.description
    assert entry.plugin.builtin
    output = entry.load()(check_files(rig_yaml(800)), options)
    assert isinstance(output, str) and output.endswith("\n")
    assert list(builtin_registry.formats)[:2] == ["text", "json"]


@pytest.mark.parametrize("name", ["sarif", "junit", "github", "markdown"])
def test_cli_writes_each_format(run_cli, validator, monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = run_cli("check", "puget-quad-3090", "--format", name)
    assert result.exit_code == 1, result.err
    if name == "sarif":
        assert_valid(validator, json.loads(result.out))
    elif name == "junit":
        assert int(parse_junit(result.out).get("failures", "0")) >= 1
    elif name == "github":
        assert result.out.splitlines()[0].startswith("::error file=")
    else:
        assert result.out.startswith("## rigcheck: ❌ fail")
