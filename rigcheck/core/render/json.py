"""The ``json`` format: the Report model as JSON (schema: ``schemas/report.schema.json``).

Values are written exactly (JSON's own escaping is the escape), never as ``NaN`` or ``Infinity``:
a non-finite float (from a plugin's evidence, say) is written as ``null``, as pydantic-core writes
it. A report pydantic-core cannot write (a value JSON has no type for, a lone surrogate) is written
by ``json.dumps(allow_nan=False)`` instead, such values as their ``str``
(:func:`rigcheck.core.render.escape.json_safe`). DEL and C1 controls are written as ``\\u`` escapes.

A lint report's findings are not a list but a store that may be on disk
(:mod:`rigcheck.core.finding_store`), and its runs are tuples (:class:`rigcheck.core.report.RunRecords`):
both are written a chunk at a time into the same text, so the writer's memory does not grow with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from rigcheck.core.findings import Finding
from rigcheck.core.render import RenderOptions
from rigcheck.core.render.escape import dump_json, json_safe, json_text
from rigcheck.core.report import Report, RunRecord

#: A chunk of a list member is written inside ``{"items": [...]}`` at the report's indent, so that its items
#: come out nested as deep as the report's own (no re-indenting pass over the text: 36 MB for a lint of
#: 2,000 files), and the wrapper is cut off.
_FINDINGS = TypeAdapter(dict[str, list[Finding]])
_RUNS = TypeAdapter(dict[str, list[RunRecord]])
_WRAPPER_HEAD = '{\n  "items": [\n  '
_WRAPPER_TAIL = "\n  ]\n}"
_CHUNK = 4096

#: How the empty lists are written at the report's indent (the places the findings and runs go;
#: ``runs`` follows ``findings`` in the model).
_EMPTY_FINDINGS = '\n  "findings": [],\n'
_EMPTY_RUNS = '  "runs": [],\n'


def render_json(report: Report, options: RenderOptions) -> str | Iterator[str]:
    if isinstance(report.findings, list) and isinstance(report.runs, list):
        return _whole(report)
    return _streamed(report)


def _whole(report: Report) -> str:
    try:
        text = report.model_dump_json(indent=2)  # pydantic-core: NaN and infinities become null
    except PydanticSerializationError:
        return dump_json(json_safe(report.model_dump(), nonfinite=lambda _: None)) + "\n"
    return json_text(text) + "\n"


def _streamed(report: Report) -> Iterator[str]:
    """The text :func:`_whole` writes, the findings and the runs a chunk at a time (at the list's
    indent)."""
    shell = _whole(report.model_copy(update={"findings": [], "runs": []}))
    head, found, rest = shell.partition(_EMPTY_FINDINGS)
    between, found_runs, tail = rest.partition(_EMPTY_RUNS)
    if not found or not found_runs or between:  # pragma: no cover - the model's field order changed
        yield _whole(report.model_copy(update={"findings": list(report.findings), "runs": list(report.runs)}))
        return
    yield head + '\n  "findings": ['
    yield from _items(_chunks(report.findings), _FINDINGS)
    yield '  "runs": ['
    yield from _items(_chunks(report.runs), _RUNS)
    yield tail


def _chunks(items: Sequence[Any]) -> Iterator[list[Any]]:
    if isinstance(items, list):
        yield items
    elif hasattr(items, "chunks"):  # a FindingStore or FindingChain
        yield from items.chunks()
    else:
        chunk: list[Any] = []
        for item in items:
            chunk.append(item)
            if len(chunk) == _CHUNK:
                yield chunk
                chunk = []
        yield chunk


def _items(chunks: Iterable[list[Any]], adapter: TypeAdapter[Any]) -> Iterator[str]:
    """The items of a list member of the report, then its closing bracket and comma."""
    first = True
    for chunk in chunks:
        if chunk:
            yield ("\n  " if first else ",\n  ") + _listed(chunk, adapter)
            first = False
    yield "\n  ],\n" if not first else "],\n"


def _listed(items: list[Any], adapter: TypeAdapter[Any]) -> str:
    """The items as the members of a JSON list at the report's indent, without the brackets."""
    try:
        text = adapter.dump_json({"items": items}, indent=2).decode()
        return json_text(text[len(_WRAPPER_HEAD) : -len(_WRAPPER_TAIL)])
    except PydanticSerializationError:
        parts = []
        for item in items:
            try:
                parts.append(json_text(item.model_dump_json(indent=2)))
            except PydanticSerializationError:
                parts.append(dump_json(json_safe(item.model_dump(), nonfinite=lambda _: None)))
        text = "[\n" + ",\n".join("  " + part.replace("\n", "\n  ") for part in parts) + "\n]"
    return text[2:-2].replace("\n", "\n  ")
