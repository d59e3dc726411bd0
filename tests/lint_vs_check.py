"""Helpers for the tests that hold ``lint`` to what ``check`` says of the same files (issue 43): a
lint or a check run in this process to report files, and each output format's findings read back
as (run, code, file, line), so every format can be compared with the JSON report's grouping."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path
from typing import Any

from rigcheck.cli import main

#: The formats a lint writes, each to its own file.
FORMATS = ("json", "text", "markdown", "junit", "sarif", "github", "html")


@contextlib.contextmanager
def _inside(root: Path):  # type: ignore[no-untyped-def]
    """In ``root``, with no installed plugin loaded and no GitHub Actions variables."""
    saved = {key: os.environ.get(key) for key in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    for key in saved:
        os.environ.pop(key, None)
    autoload = os.environ.get("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["RIGCHECK_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with contextlib.chdir(root):
            yield
    finally:
        for key, value in saved.items():
            if value is not None:
                os.environ[key] = value
        if autoload is None:
            os.environ.pop("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", None)


def run(root: Path, *args: str) -> tuple[int, str, str]:
    """``rigcheck ARGS`` in ``root``: exit code, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with _inside(root), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def lint(root: Path, *args: str, formats: tuple[str, ...] = ("json",)) -> tuple[int, dict[str, str]]:
    """``rigcheck lint ARGS`` in ``root``, each of ``formats`` to a file: the exit code and each report."""
    outdir = root.parent / f"{root.name}-out"
    outdir.mkdir(exist_ok=True)
    outputs = [item for name in formats for item in ("-f", name, "-o", str(outdir / name))]
    code, _, err = run(root, "lint", *args, "--color", "never", *outputs)
    assert code in (0, 1), err
    return code, {name: (outdir / name).read_text(encoding="utf-8") for name in formats}


def check(root: Path, rig: str, workload: str | None) -> tuple[int, dict[str, Any] | None, str]:
    """``rigcheck check RIG [WORKLOAD] -f json`` in ``root``: exit code, report (None on exit 2), stderr."""
    code, out, err = run(
        root, "check", rig, *([workload] if workload else []), "-f", "json", "--color", "never"
    )
    return code, (json.loads(out) if code in (0, 1) else None), err


def flagged(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The warnings and failures that count (not suppressed)."""
    return [f for f in report["findings"] if f["severity"] in ("warn", "fail") and not f.get("suppressions")]


def key(finding: dict[str, Any]) -> tuple[Any, ...]:
    where = finding.get("location") or {}
    return (finding["code"], finding["severity"], finding["message"], where.get("file"), where.get("line"))


#: ``path:line:column: error: pointer: message [CODE]``: check's one line per problem of a broken spec.
PROBLEM_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):\d+: error: .*\[(?P<code>[A-Z]+\d+)\]$")


def problems(stderr: str) -> Counter[tuple[str, str, int]]:
    """Check's problems of a broken spec as (code, file, line)."""
    found: Counter[tuple[str, str, int]] = Counter()
    for line in stderr.splitlines():
        match = PROBLEM_LINE.match(line)
        if match:
            found[(match["code"], os.path.normpath(match["file"]), int(match["line"]))] += 1
    return found


# -- every format's grouping, read back -------------------------------------------------------------

Placed = Counter[tuple[int | None, str, str]]  # (run index or None, code, severity)


def json_groups(report: dict[str, Any]) -> Placed:
    """The JSON report's warnings and failures by the run they are filed under."""
    return Counter((f.get("run"), f["code"], f["severity"]) for f in flagged(report))


_TEXT_RUN = re.compile(r"^(PASS|WARN|FAIL) \S.*  \(.+\)$")
_TEXT_FINDING = re.compile(r"^  (\S) ([A-Z]+\d+) ")


def text_groups(text: str, report: dict[str, Any]) -> Placed:
    """The text report's findings by block: "files and config", then one block per run in order."""
    placed: Placed = Counter()
    current: int | None = None
    runs = -1
    marks = {"✗": "fail", "!": "warn", "x": "fail"}
    for line in text.splitlines():
        if line == "files and config":
            current = None
        elif _TEXT_RUN.match(line):
            runs += 1
            current = runs
        elif (match := _TEXT_FINDING.match(line)) and match[1] in marks:
            placed[(current, match[2], marks[match[1]])] += 1
    assert runs + 1 == len(report["runs"]), "a run block too many or too few"
    return placed


def _positional(groups: list[tuple[str, list[tuple[str, str]]]], report: dict[str, Any]) -> Placed:
    """Groups named in run order, then groups of findings of no run (named by a file's subject)."""
    placed: Placed = Counter()
    runs = report["runs"]
    for index, (subject, findings) in enumerate(groups):
        run = index if index < len(runs) else None
        if run is not None:
            assert subject == runs[index]["subject"], (subject, runs[index]["subject"])
        for code, severity in findings:
            placed[(run, code, severity)] += 1
    return placed


def markdown_groups(text: str, report: dict[str, Any]) -> Placed:
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    for line in text.splitlines():
        if line.startswith("### "):
            groups.append((line[4:], []))
        elif line.startswith(("| ❌ |", "| ⚠️ |")) and groups:
            code = line.split("|")[2].strip()
            groups[-1][1].append((code, "fail" if "❌" in line.split("|")[1] else "warn"))
    return _positional(groups, report)


def junit_groups(text: str, report: dict[str, Any]) -> Placed:
    """A suite per group; a rule's findings in a suite share one test case, one line each."""
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    for suite in ElementTree.fromstring(text).iter("testsuite"):
        findings = []
        for case in suite.iter("testcase"):
            code = case.get("name", "").split()[0]
            for outcome in case:
                for line in (outcome.text or "").splitlines():
                    if line.startswith(("FAIL ", "WARN ")) and outcome.tag in (
                        "failure",
                        "error",
                        "system-out",
                    ):
                        findings.append((code, line[:4].lower()))
        groups.append((suite.get("name", ""), findings))
    return _positional(groups, report)


def html_groups(text: str, report: dict[str, Any]) -> Placed:
    placed: Placed = Counter()
    parts = re.split(r'<section class="run" id="run-(\d+)">', text)
    for index in range(0, len(parts), 2):
        run = int(parts[index - 1]) - 1 if index else None
        body = parts[index]
        if run is None and report["runs"]:  # before the first run: the "Files and config" panel only
            panel = "<h2>Files and config</h2>"
            body = body.split(panel, 1)[1] if panel in body else ""
        for code, severity in re.findall(r'data-code="([^"]+)" data-severity="(warn|fail)"', body):
            placed[(run, code, severity)] += 1
    assert (len(parts) - 1) // 2 == len(report["runs"])
    return placed


def context_groups(report: dict[str, Any]) -> Counter[tuple[str | None, str]]:
    """The JSON report's findings as SARIF and annotations name them: a pair's subject in front of its
    message, nothing for a rig alone or a file (its file says it)."""
    runs = report["runs"]
    out: Counter[tuple[str | None, str]] = Counter()
    for f in flagged(report):
        run = runs[f["run"]] if f.get("run") is not None else None
        out[(run["subject"] if run and run["workload"] else None, f["code"])] += 1
    return out


_PREFIX = re.compile(r"^\[(?P<subject>[^\]]+)\] ")


def github_groups(text: str) -> Counter[tuple[str | None, str]]:
    out: Counter[tuple[str | None, str]] = Counter()
    for line in text.splitlines():
        match = re.match(
            r"^::(error|warning) [^:]*title=rigcheck (?P<code>\S+) [^:]*::(?P<message>.*)$", line
        )
        if match:
            prefix = _PREFIX.match(match["message"])
            out[(prefix["subject"] if prefix else None, match["code"])] += 1
    return out


def sarif_groups(text: str) -> Counter[tuple[str | None, str]]:
    out: Counter[tuple[str | None, str]] = Counter()
    for sarif_run in json.loads(text)["runs"]:
        for result in sarif_run.get("results", []):
            if result.get("level") not in ("error", "warning") or result.get("suppressions"):
                continue
            prefix = _PREFIX.match(result["message"]["text"])
            out[(prefix["subject"] if prefix else None, result["ruleId"])] += 1
    return out


def every_format_groups_as_json(reports: dict[str, str]) -> None:
    """Each format files each warning and failure under the run the JSON report names."""
    report = json.loads(reports["json"])
    expected = json_groups(report)
    readers = {"text": text_groups, "markdown": markdown_groups, "junit": junit_groups, "html": html_groups}
    for name, reader in readers.items():
        if name in reports:
            found = reader(reports[name], report)
            assert found == expected, (name, found - expected, expected - found)
    named = context_groups(report)
    for name, reader in (("github", github_groups), ("sarif", sarif_groups)):
        if name in reports:
            found = reader(reports[name])
            assert found == named, (name, found - named, named - found)


def runs_exist(report: dict[str, Any]) -> None:
    """No finding names a run that does not exist, and each run's findings are at its own files."""
    runs = report["runs"]
    for f in report["findings"]:
        if f.get("run") is None:
            continue
        assert 0 <= f["run"] < len(runs), f
        run = runs[f["run"]]
        where = (f.get("location") or {}).get("file")
        assert where in (run["rig"], run["workload"]), (where, run)
