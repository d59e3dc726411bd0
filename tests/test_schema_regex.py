"""The published schemas' patterns in ECMAScript regex (issue 20): check-jsonschema's default engine and
editors' YAML language servers read JSON Schema patterns as ECMAScript in unicode mode, which refuses
escapes Python accepts (``\\"`` inside a class refused ``schemas/rig.schema.json``). Every pattern must
compile under `regress` (the ECMAScript engine check-jsonschema uses) and match what Python's ``re``
matches on the schema's own examples and on spellings around them."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import regress

from .conftest import REPO

SCHEMAS = sorted((REPO / "schemas").glob("*.schema.json"))
PROBES = (
    "64 GiB",
    "10.5 in",
    '5"',
    "1.6 kW",
    "1e9 B",
    "-2 W",
    "",
    " ",
    "abc",
    "BF16",
    "bf16_mixed",
    "Open-Air",
)


def _patterns(node: Any) -> Iterator[tuple[str, list[str]]]:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            examples = [str(v) for v in node.get("examples", []) + node.get("enum", []) if isinstance(v, str)]
            yield node["pattern"], examples
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


CASES = sorted(
    {
        (path.name, pattern, tuple(examples))
        for path in SCHEMAS
        for pattern, examples in _patterns(json.loads(path.read_text()))
    }
)


def test_there_are_patterns_to_check() -> None:
    assert len(CASES) > 20


@pytest.mark.parametrize(("schema", "pattern", "examples"), CASES, ids=[f"{c[0]}:{c[1][:40]}" for c in CASES])
def test_each_pattern_is_ecmascript_and_means_what_python_means(
    schema: str, pattern: str, examples: tuple[str, ...]
) -> None:
    ecma = regress.Regex(pattern, "u")  # raises on what ECMAScript refuses
    python = re.compile(pattern)
    for text in {
        *PROBES,
        *examples,
        *(e.upper() for e in examples),
        *(e.replace("-", "_") for e in examples),
    }:
        assert (ecma.find(text) is not None) == (python.search(text) is not None), (schema, pattern, text)


@pytest.mark.skipif(
    importlib.util.find_spec("check_jsonschema") is None, reason="check-jsonschema is not installed"
)
def test_check_jsonschema_accepts_the_shipped_specs_with_its_default_engine() -> None:
    for kind, folder in (("rig", "rigs"), ("workload", "workloads")):
        files = sorted(str(p) for p in (REPO / "specs" / folder).glob("*.yaml"))
        schema = str(REPO / "schemas" / f"{kind}.schema.json")
        result = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--schemafile", schema, *files],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
