"""``rigcheck validate``: check spec files against the schema, the catalog and the YAML traps only.

Each file is validated by the pydantic models (with positions), its GPU names are resolved
against the catalog, and it is validated once more against the published JSON Schema, so that
what editors check and what rigcheck checks cannot drift apart unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.spec import spec_codes


@dataclass
class TrapRecord:
    code: str
    severity: str
    message: str
    line: int
    column: int
    pointer: str
    fix: str


@dataclass
class ValidationResult:
    path: str
    kind: str | None = None
    name: str | None = None
    problems: list[Problem] = field(default_factory=list)
    traps: list[TrapRecord] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "name": self.name,
            "valid": not self.problems,
            "errors": [problem.as_dict() for problem in self.problems],
            "findings": [
                {
                    "code": t.code,
                    "severity": t.severity,
                    "message": t.message,
                    "fix": t.fix,
                    "location": {"file": self.path, "line": t.line, "column": t.column, "pointer": t.pointer},
                }
                for t in self.traps
            ],
        }


def validate_files(paths: list[str]) -> list[ValidationResult]:
    from rigcheck.core.catalog.catalog import Catalog
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.engine.plugin_manager import PluginHost
    from rigcheck.core.spec.documents import load_spec
    from rigcheck.core.spec.spec_rules import SPEC_RULES

    severities = {rule.code: rule.severity.value for rule in SPEC_RULES}
    catalog: Catalog | None = None
    results = []
    for path in paths:
        result = ValidationResult(path)
        results.append(result)
        try:
            document = load_spec(path)
            result.kind, result.name = document.kind, document.name
            result.traps = [
                TrapRecord(
                    trap.code,
                    severities[trap.code],
                    trap.message,
                    trap.mark.line,
                    trap.mark.column,
                    trap.pointer,
                    trap.fix,
                )
                for trap in document.traps
            ]
            if document.kind == "Rig":
                if catalog is None:
                    catalog = build_catalog(PluginHost().load())
                CheckContext(document, None, catalog)
            result.problems.extend(json_schema_problems(document))
        except SpecError as exc:
            result.problems.extend(exc.problems)
    return results


def json_schema_problems(document: Any) -> list[Problem]:
    import jsonschema

    from rigcheck.core.spec.schemas import schema

    validator = jsonschema.Draft202012Validator(schema(document.kind.lower()))
    problems = []
    for error in validator.iter_errors(document.yaml.data):
        leaf = jsonschema.exceptions.best_match([error])
        pointer = document.pointer(*leaf.absolute_path)
        mark = document.yaml.source_map.value_mark(pointer)  # at the value, as the loader's errors are
        location = document.locate(pointer)
        problems.append(
            Problem(
                document.path,
                f"does not match the published JSON Schema: {schema_error_message(leaf)}",
                mark.line if mark else location.line or 1,
                mark.column if mark else location.column or 1,
                location.pointer or "/",
                spec_codes.INVALID_VALUE,
            )
        )
    return problems


def schema_error_message(error: Any) -> str:
    """What a JSON Schema error says, as the loader would say it: a choice lists its choices and the nearest
    one, an enumeration its values; ``error`` is the most relevant leaf (``best_match``) of an ``anyOf``."""
    from rigcheck.core.spec.fields import did_you_mean

    choice = _choice_of(error)
    if choice is not None:
        return choice.refusal(error.instance)
    if error.validator == "enum" and isinstance(error.validator_value, list):
        options = [repr(option) for option in error.validator_value]
        listed = options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
        names = [str(option) for option in error.validator_value]
        return f"{error.instance!r} is not one of {listed}{did_you_mean(str(error.instance), names)}"
    return str(error.message)


def _choice_of(error: Any) -> Any:
    """The :class:`~rigcheck.core.spec.fields.Choice` whose schema refused ``error``'s value, if one did: its own
    ``pattern``, or the ``anyOf`` around it (a choice that also takes numbers, an optional one)."""
    from rigcheck.core.spec.fields import Choice

    current = error
    while current is not None and list(current.absolute_path) == list(error.absolute_path):
        schema = current.schema if isinstance(current.schema, dict) else {}
        branches = [schema, *[b for b in schema.get("anyOf", ()) if isinstance(b, dict)]]
        for branch in branches:
            pattern = branch.get("pattern")
            if isinstance(pattern, str) and pattern in Choice.by_pattern:
                return Choice.by_pattern[pattern]
        current = current.parent
    return None


def render_validation(results: list[ValidationResult], fmt: str, *, color: bool = False) -> str:
    from rigcheck.core.report.render.escape import dump_json, escape_line

    if fmt == "json":
        return dump_json([result.as_dict() for result in results]) + "\n"
    lines: list[str] = []
    for result in results:
        if result.problems:
            lines.extend(problem.format() for problem in result.problems)
            continue
        for trap in result.traps:
            lines.append(
                f"{result.path}:{trap.line}:{trap.column}: {trap.severity}: {trap.message} [{trap.code}]"
            )
        lines.append(
            f"{result.path}: valid {result.kind} {result.name!r}"
            + (f" ({len(result.traps)} YAML trap(s))" if result.traps else "")
        )
    return "".join(escape_line(line) + "\n" for line in lines)  # keys, names, messages: from the file
