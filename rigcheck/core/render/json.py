"""The ``json`` format: the Report model as JSON (schema: ``schemas/report.schema.json``).

Values are written exactly (JSON's own escaping is the escape), never as ``NaN`` or ``Infinity``:
a non-finite float (from a plugin's evidence, say) is written as ``null``, as pydantic-core writes
it. A report pydantic-core cannot write (a value JSON has no type for, a lone surrogate) is written
by ``json.dumps(allow_nan=False)`` instead, such values as their ``str``
(:func:`rigcheck.core.render.escape.json_safe`). DEL and C1 controls are written as ``\\u`` escapes.

A lint report's findings are not a list but a store that may be on disk
(:mod:`rigcheck.core.finding_store`): they are written one by one into the same text, so the
writer's memory does not grow with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from rigcheck.core.findings import Finding
from rigcheck.core.render import RenderOptions
from rigcheck.core.render.escape import dump_json, json_safe, json_text
from rigcheck.core.report import Report

_FINDINGS = TypeAdapter(list[Finding])

#: How the empty findings list is written at the report's indent (the place the findings go).
_EMPTY = '\n  "findings": [],\n'


def render_json(report: Report, options: RenderOptions) -> str | Iterator[str]:
    if isinstance(report.findings, list):
        return _whole(report)
    return _streamed(report, report.findings.chunks())


def _whole(report: Report) -> str:
    try:
        text = report.model_dump_json(indent=2)  # pydantic-core: NaN and infinities become null
    except PydanticSerializationError:
        return dump_json(json_safe(report.model_dump(), nonfinite=lambda _: None)) + "\n"
    return json_text(text) + "\n"


def _streamed(report: Report, chunks: Iterable[list[Finding]]) -> Iterator[str]:
    """The text :func:`_whole` writes, the findings a chunk at a time (at the list's indent)."""
    shell = _whole(report.model_copy(update={"findings": []}))
    head, found, tail = shell.partition(_EMPTY)
    if not found:  # pragma: no cover - the model writes the empty list this way; if not, all at once
        yield _whole(report.model_copy(update={"findings": [f for chunk in chunks for f in chunk]}))
        return
    yield head + '\n  "findings": ['
    first = True
    for chunk in chunks:
        if chunk:
            yield ("\n  " if first else ",\n  ") + _listed(chunk)
            first = False
    yield ("\n  ],\n" if not first else "],\n") + tail


def _listed(findings: list[Finding]) -> str:
    """The findings as the items of a JSON list at the report's indent, without the brackets."""
    try:
        text = json_text(_FINDINGS.dump_json(findings, indent=2).decode())
    except PydanticSerializationError:
        parts = []
        for finding in findings:
            try:
                parts.append(json_text(finding.model_dump_json(indent=2)))
            except PydanticSerializationError:
                parts.append(dump_json(json_safe(finding.model_dump(), nonfinite=lambda _: None)))
        text = "[\n" + ",\n".join("  " + part.replace("\n", "\n  ") for part in parts) + "\n]"
    return text[2:-2].replace("\n", "\n  ")
