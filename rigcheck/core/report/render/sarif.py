"""The ``sarif`` format: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run per file (GitHub stopped merging several runs of one upload in 2025). What GitHub needs
and what trips uploads (research: docs/research/linters_and_plugins.md section 3):

- ``results`` is always present, ``[]`` on a clean report (kube-linter #213);
- ``region.startLine`` and ``startColumn`` are at least 1 (kics #4431);
- file URIs are relative to the repository root (``RenderOptions.root``) with
  ``uriBaseId: "%SRCROOT%"``; a file outside the root keeps an absolute ``file://`` URI;
- ``ruleId`` is the stable rule code and ``ruleIndex`` its index in ``tool.driver.rules``;
- ``partialFingerprints`` hash the rule code, the file, the JSON pointer and the subject, never the
  line, so an alert survives lines moving above it;
- rules carry ``problem.severity`` (not ``security-severity``: rig rules are not security rules).

Only warnings and failures are results; passes and skips are not. Suppressed findings stay results
with ``suppressions[]`` (inline and file comments are ``inSource``; waivers and baselines are
``external``), so code scanning shows them as dismissed instead of losing them.

Message texts from specs, paths and plugins are escaped (:func:`~rigcheck.core.report.render.escape.escape_sarif`:
control characters visible, a ``]`` before ``(`` escaped so that no embedded link forms); property
bags keep the exact values. The log has no NaN or Infinity and no raw control byte.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from rigcheck.core.engine.finding_store import findings_where
from rigcheck.core.engine.findings import Finding, Location, Severity, Suppression
from rigcheck.core.engine.taxonomy import code_prefix, rule_family
from rigcheck.core.report.render import RenderOptions, finding_context, relative_path
from rigcheck.core.report.render.escape import dump_json, escape_sarif, escape_text, json_safe
from rigcheck.core.report.report import Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/rigcheck/rigcheck"
FINGERPRINT_KEY = "rigcheck/v1"
SRCROOT = "%SRCROOT%"
MAX_DESCRIPTION = 1024  # GitHub: shortDescription and fullDescription at most 1024 characters

_LEVELS = {Severity.FAIL: "error", Severity.WARN: "warning"}
_SUPPRESSION_KINDS = {"inline": "inSource", "file": "inSource", "waiver": "external", "baseline": "external"}
_SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


def render_sarif(report: Report, options: RenderOptions) -> str:
    return dump_json(sarif_log(report, options)) + "\n"


def sarif_log(report: Report, options: RenderOptions) -> dict[str, Any]:
    """The SARIF log as a dict (``render_sarif`` writes it as JSON)."""
    findings = list(findings_where(report.findings, _LEVELS))
    codes = sorted({finding.code for finding in findings})
    index = {code: position for position, code in enumerate(codes)}
    by_code: dict[str, list[Finding]] = {}
    for finding in findings:
        by_code.setdefault(finding.code, []).append(finding)
    rules = [_rule(code, by_code[code], options.rules) for code in codes]
    fallback = report.inputs[0].path if report.inputs else None
    occurrences: dict[str, int] = {}
    results = []
    for finding in findings:
        result = _result(
            finding, index[finding.code], options.root, finding_context(report, finding), fallback
        )
        digest = result["partialFingerprints"][FINGERPRINT_KEY]
        occurrences[digest] = occurrences.get(digest, 0) + 1
        result["partialFingerprints"]["primaryLocationLineHash"] = f"{digest[:16]}:{occurrences[digest]}"
        results.append(result)
    driver: dict[str, Any] = {
        "name": "rigcheck",
        "version": report.tool.version,
        "informationUri": INFORMATION_URI,
    }
    if _SEMVER.match(report.tool.version):
        driver["semanticVersion"] = report.tool.version
    driver["rules"] = rules
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [{"executionSuccessful": True}],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def fingerprint(finding: Finding, root: str | None) -> str:
    """sha256 of code, file, JSON pointer and subject (not the line): stable when lines move."""
    location = finding.location
    path = relative_path(location.file, root) if location is not None else None
    pointer = location.pointer if location is not None else ""
    parts = (finding.code, path or "", pointer, finding.subject or "")
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _rule(code: str, findings: list[Finding], rules: Mapping[str, Any]) -> dict[str, Any]:
    rule = rules.get(code)
    rule = getattr(rule, "rule", rule)  # a registry RuleEntry works too
    first = findings[0]
    tags = [rule_family(code, first.checker), code_prefix(code)]
    if rule is None:
        worst = max((finding.severity for finding in findings), key=lambda severity: severity.rank)
        level = _LEVELS[worst]
        name = first.name or code
        described = escape_sarif(f"{code} {first.name}".strip())
        entry: dict[str, Any] = {
            "id": code,
            "name": name,
            "shortDescription": {"text": _clip(described)},
            "fullDescription": {"text": _clip(described)},
            "help": {"text": described},
        }
    else:
        level = "error" if Severity(rule.severity) is Severity.FAIL else "warning"
        docs = rule.docs.resolved()
        entry = {
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": _clip(_plain(rule.summary) or code)},
            "fullDescription": {"text": _clip(_plain(docs.what or rule.summary) or code)},
            "help": {"text": _help_text(rule), "markdown": _help_markdown(rule)},
        }
        tags.extend(tag for tag in getattr(rule, "tags", ()) if isinstance(tag, str))
    entry["defaultConfiguration"] = {"level": level}
    entry["properties"] = {
        "tags": list(dict.fromkeys(tags)),
        "precision": "high",
        "problem.severity": level,
    }
    return entry


def _help_text(rule: Any) -> str:
    docs = rule.docs.resolved()
    parts = [f"{rule.code} {rule.name}: {_plain(rule.summary)}"]
    for title, body in (("What", docs.what), ("Why", docs.why), ("Fix", docs.fix)):
        if body:
            parts.append(f"{title}: {_plain(body)}")
    return "\n\n".join(parts)


def _plain(markdown: str) -> str:
    """Rule prose without Markdown code marks and emphasis, for the ``text`` fields."""
    text = re.sub(r"^```[^\n]*$", "", markdown.strip(), flags=re.MULTILINE)
    text = text.replace("`", "")
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _help_markdown(rule: Any) -> str:
    docs = rule.docs.resolved()
    parts = [f"**{rule.code} {rule.name}**: {rule.summary}"]
    for title, body in (("What", docs.what), ("Why", docs.why), ("Example", docs.example), ("Fix", docs.fix)):
        if body:
            parts.append(f"## {title}\n\n{body.strip()}")
    if docs.references:
        parts.append("## References\n\n" + "\n".join(f"- {reference}" for reference in docs.references))
    return "\n\n".join(parts)


def _clip(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary, with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _result(
    finding: Finding, rule_index: int, root: str | None, context: str | None, fallback: str | None
) -> dict[str, Any]:
    text = escape_sarif(finding.message)
    location = finding.location
    if context:
        text = f"[{escape_sarif(context)}] {text}"
    if finding.fix:
        text = f"{text} Fix: {escape_sarif(finding.fix)}"
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity],
        "message": {"text": text},
    }
    if location is not None and location.file:
        result["locations"] = [{"physicalLocation": _physical(location, root)}]
    elif fallback is not None:  # GitHub needs a location: the whole first input
        result["locations"] = [{"physicalLocation": _physical(Location(file=fallback), root)}]
    related = [place for place in finding.related if place.file]
    if related:
        result["relatedLocations"] = [
            _related(place, number, root) for number, place in enumerate(related, start=1)
        ]
    result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint(finding, root)}
    if finding.suppressions:
        result["suppressions"] = [_suppression(suppression, root) for suppression in finding.suppressions]
    properties: dict[str, Any] = {}
    if location is not None and location.pointer:
        properties["pointer"] = location.pointer
    if finding.subject:
        properties["subject"] = finding.subject
    if finding.checker:
        properties["checker"] = finding.checker
    if finding.evidence:
        properties["evidence"] = json_safe(finding.evidence)
    if properties:
        result["properties"] = properties
    return result


def _physical(location: Location, root: str | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": artifact_location(location.file, root)}
    physical["region"] = {
        "startLine": max(1, location.line or 1),
        "startColumn": max(1, location.column or 1),
    }
    return physical


def _related(location: Location, number: int, root: str | None) -> dict[str, Any]:
    related: dict[str, Any] = {"id": number, "physicalLocation": _physical(location, root)}
    if location.pointer:
        related["message"] = {"text": escape_sarif(location.pointer)}
    return related


def _suppression(suppression: Suppression, root: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": _SUPPRESSION_KINDS[suppression.kind],
        "status": "accepted",
        "justification": escape_text(suppression.reason),
    }
    if suppression.location is not None and suppression.location.file:
        entry["location"] = {"physicalLocation": _physical(suppression.location, root)}
    properties: dict[str, Any] = {"rigcheck.kind": suppression.kind}
    if suppression.expires:
        properties["expires"] = suppression.expires
    entry["properties"] = properties
    return entry


def artifact_location(path: str | None, root: str | None) -> dict[str, Any]:
    """``{"uri": "specs/rigs/a.yaml", "uriBaseId": "%SRCROOT%"}``, or an absolute ``file://`` URI
    for a file outside ``root``."""
    shown = relative_path(path, root) or ""
    if _is_absolute(shown):
        if re.match(r"^[A-Za-z]:/", shown):  # a Windows drive
            shown = "/" + shown
        return {"uri": "file://" + quote(shown, safe="/:")}
    return {"uri": quote(shown, safe="/"), "uriBaseId": SRCROOT}


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or bool(re.match(r"^[A-Za-z]:/", path))
