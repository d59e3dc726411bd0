"""Generated files stay in step with the code: schemas/, docs/rules/, and the specs against them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from rigcheck.core.report.docgen import generate
from rigcheck.core.spec.loader import load_yaml_file
from rigcheck.core.spec.schemas import WHICH, schema

from .conftest import REPO, SPECS


@pytest.mark.parametrize("which", WHICH)
def test_schema_files_match_the_models(which: str) -> None:
    path = REPO / "schemas" / f"{which}.schema.json"
    assert json.loads(path.read_text()) == schema(which), (
        f"{path} is stale: run python -m rigcheck.core.spec.schemas schemas"
    )
    jsonschema.Draft202012Validator.check_schema(schema(which))


@pytest.mark.parametrize(
    "path",
    sorted((SPECS / "rigs").glob("*.yaml")) + sorted((SPECS / "workloads").glob("*.yaml")),
    ids=lambda p: p.name,
)
def test_shipped_specs_validate_against_the_json_schemas(path: Path) -> None:
    data = load_yaml_file(str(path)).data
    validator = jsonschema.Draft202012Validator(
        json.loads((REPO / "schemas" / f"{data['kind'].lower()}.schema.json").read_text())
    )
    assert [error.message for error in validator.iter_errors(data)] == []


def test_schema_rejects_a_typo_like_the_models_do() -> None:
    data = load_yaml_file(str(SPECS / "rigs" / "home-2x3090.yaml")).data
    data["nodes"][0]["memroy_gib"] = 64
    assert not jsonschema.Draft202012Validator(schema("rig")).is_valid(data)


def test_rule_docs_match_the_registry(builtin_registry) -> None:  # type: ignore[no-untyped-def]
    folder = REPO / "docs" / "rules"
    pages = generate(builtin_registry)
    on_disk = {path.name: path.read_text() for path in folder.glob("*.md")}
    assert set(on_disk) == set(pages), "run python -m rigcheck.core.report.docgen docs/rules"
    for name, text in pages.items():
        assert on_disk[name] == text, (
            f"docs/rules/{name} is stale: run python -m rigcheck.core.report.docgen docs/rules"
        )


def test_every_rule_is_fully_documented(builtin_registry) -> None:  # type: ignore[no-untyped-def]
    for code, entry in builtin_registry.rules.items():
        docs = entry.rule.docs
        for section in ("what", "why", "example", "fix"):
            assert len(getattr(docs, section)) > 20, (code, section)
        assert docs.references, code
        assert entry.rule.summary[0].isupper() and not entry.rule.summary.endswith("."), code


def test_every_threshold_section_is_sourced() -> None:
    for path in (SPECS / "rules").glob("*.yaml"):
        for key, section in load_yaml_file(str(path)).data.items():
            if key != "schema_version":
                assert section.get("source") and section.get("as_of"), (path.name, key)
