"""The case library: real configurations with the verdict their public source supports, per rule.

Each file under tests/rules/<CODE>/ is one configuration (a rig, and a workload where the rule needs
one) with ``expect:`` (pass, warn, fail or skip), ``kind:`` (validated: a configuration a vendor ships
or validates; failure: a published report of the problem; doc-example: the configuration of the rule's
own documentation example) and ``source:``. Each is written out as spec files and run through
``rigcheck check --select CODE --format json``; the verdict is the worst of that rule's findings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rigcheck.core.spec.loader import load_yaml_file

CASES = Path(__file__).resolve().parent / "rules"
FILES = sorted(CASES.glob("*/*.yaml"))
ORDER = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}


def _spec(kind: str, name: str, body: dict[str, Any]) -> str:
    lines = ["apiVersion: rigcheck/v1", f"kind: {kind}", f"name: {name}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in body.items()]
    return "\n".join(lines) + "\n"


def load_case(path: Path) -> dict[str, Any]:
    return dict(load_yaml_file(str(path)).data)


@pytest.mark.parametrize("path", FILES, ids=[f"{path.parent.name}/{path.stem}" for path in FILES])
def test_case(path: Path, run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    case = load_case(path)
    code = path.parent.name
    assert case["rule"] == code, f"{path}: rule {case['rule']} in the folder of {code}"
    assert case["kind"] in ("validated", "failure", "doc-example")
    assert case["expect"] in ORDER
    assert str(case.get("source", "")).strip(), f"{path}: no source"
    name = path.stem.replace("_", "-")
    files = [write_spec(_spec("Rig", name, case["rig"]), f"{name}.rig.yaml")]
    if case.get("workload"):
        files.append(write_spec(_spec("Workload", name, case["workload"]), f"{name}.workload.yaml"))
    result = run_cli("check", *files, "--select", code, "--format", "json")
    assert result.exit_code in (0, 1), result.err
    found = [f for f in result.json()["findings"] if f["code"] == code]
    verdict = max((f["severity"] for f in found), key=lambda value: ORDER.get(value, 0)) if found else "skip"
    messages = [f"{f['severity']}: {f['message']}" for f in found]
    assert verdict == case["expect"], f"{path.name}: {case['title']}\n" + "\n".join(messages)


def test_every_rule_family_has_validated_and_failure_cases(builtin_registry) -> None:  # type: ignore[no-untyped-def]
    """Issues 14 and 48: for every PLT, PWR, ICX, NET, STO, REL, CUDA and ROCM rule, a configuration a vendor
    ships that passes, a known failure, and its doc example."""
    families = ("PLT", "PWR", "ICX", "NET", "STO", "REL", "CUDA", "ROCM")
    codes = sorted(code for code in builtin_registry.rules if code.startswith(families))
    kinds: dict[str, set[str]] = {code: set() for code in codes}
    for path in FILES:
        if path.parent.name in kinds:
            kinds[path.parent.name].add(load_case(path)["kind"])
    missing = {code: sorted({"validated", "failure", "doc-example"} - found) for code, found in kinds.items()}
    assert not {code: need for code, need in missing.items() if need}, missing
    assert len(FILES) >= 150


DOC_EXAMPLES = sorted(CASES.glob("*/doc-example.yaml"))


@pytest.mark.parametrize("path", DOC_EXAMPLES, ids=[path.parent.name for path in DOC_EXAMPLES])
def test_doc_example_case_is_the_rules_example(path: Path, builtin_registry) -> None:  # type: ignore[no-untyped-def]
    """The case carries the rule's documentation example word for word (``example:``), so a changed example
    fails here until its case is brought along; a verdict the example names is the case's."""
    import re

    case = load_case(path)
    rule = builtin_registry.rules[path.parent.name].rule
    assert case["kind"] == "doc-example"
    assert str(case.get("example", "")).strip() == rule.docs.resolved().example.strip(), (
        f"{path}: docs/rules/{rule.code}.md's example changed; update the case"
    )
    named = set(re.findall(r"\b(fail|warn)\b", rule.docs.resolved().example))
    if len(named) == 1:
        assert case["expect"] == named.pop(), f"{path}: the example says {named}"
