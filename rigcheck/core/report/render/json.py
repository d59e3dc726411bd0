"""The ``json`` format: the Report model as JSON (schema: ``schemas/report.schema.json``).

Values are written exactly (JSON's own escaping is the escape), never as ``NaN`` or ``Infinity``:
a non-finite float (from a plugin's evidence, say) is written as ``null``, as pydantic-core writes
it. A report pydantic-core cannot write (a value JSON has no type for, a lone surrogate) is written
by ``json.dumps(allow_nan=False)`` instead, such values as their ``str``
(:func:`rigcheck.core.report.render.escape.json_safe`). DEL and C1 controls are written as ``\\u`` escapes.

A lint report's findings are not a list but a store that may be on disk
(:mod:`rigcheck.core.engine.finding_store`), and its runs are tuples (:class:`rigcheck.core.report.report.RunRecords`):
both are written a chunk at a time into the same text, so the writer's memory does not grow with them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from rigcheck.core.engine.finding_store import Row, row_values, unpack
from rigcheck.core.engine.findings import Finding
from rigcheck.core.report.render import RenderOptions
from rigcheck.core.report.render.escape import dump_json, json_safe, json_text
from rigcheck.core.report.report import Report, RunRecord

#: A chunk of a list member is written inside ``{"items": [...]}`` at the report's indent, so that its items
#: come out nested as deep as the report's own (no re-indenting pass over the text: 36 MB for a lint of
#: 2,000 files), and the wrapper is cut off.
_FINDINGS = TypeAdapter(dict[str, list[Finding]])


@functools.cache  # built when a lint's store is first written (a check's report never needs it)
def _finding_values() -> TypeAdapter[Any]:
    """How a store's findings are written from their rows' values (:func:`row_values`): the values of a
    model's fields serialize to the model's JSON; making 2 models per finding again cost a lint of
    2,000 files 0.1 s. The values are typed as the model's fields are (a dict typed by the fields of
    Finding, its location's by those of Location): pydantic-core writes them a quarter faster than
    as ``dict[str, Any]`` (0.17 s instead of 0.22 s for a lint of 2,000 files), the same text."""
    from typing_extensions import TypedDict

    from rigcheck.core.engine.findings import Location

    def typed(name: str, model: Any, **replaced: Any) -> Any:
        fields = {key: field.annotation for key, field in model.model_fields.items()}
        make: Any = TypedDict
        return make(name, {**fields, **replaced})

    location = typed("LocationValues", Location)
    finding = typed("FindingValues", Finding, location=location | None)
    values: Any = dict[str, list[finding]]  # type: ignore[valid-type]  # a class made at run time
    return TypeAdapter(values)


_RUNS = TypeAdapter(dict[str, list[RunRecord]])
_WRAPPER_HEAD = '{\n  "items": [\n  '
_WRAPPER_TAIL = "\n  ]\n}"
_CHUNK = 4096

#: How the empty lists are written at the report's indent (the places the findings and runs go;
#: ``runs`` follows ``findings`` in the model).
_EMPTY_FINDINGS = '\n  "findings": [],\n'
_EMPTY_RUNS = '  "runs": [],\n'


def render_json(report: Report, options: RenderOptions) -> str | Iterator[str | memoryview]:
    if isinstance(report.findings, list) and isinstance(report.runs, list):
        return _whole(report)
    return _streamed(report)


def _whole(report: Report) -> str:
    try:
        text = report.model_dump_json(indent=2)  # pydantic-core: NaN and infinities become null
    except PydanticSerializationError:
        return dump_json(json_safe(report.model_dump(), nonfinite=lambda _: None)) + "\n"
    return json_text(text) + "\n"


def _streamed(report: Report) -> Iterator[str | memoryview]:
    """The text :func:`_whole` writes, the findings and the runs a chunk at a time (at the list's
    indent)."""
    shell = _whole(report.model_copy(update={"findings": [], "runs": []}))
    head, found, rest = shell.partition(_EMPTY_FINDINGS)
    between, found_runs, tail = rest.partition(_EMPTY_RUNS)
    if not found or not found_runs or between:  # pragma: no cover - the model's field order changed
        yield _whole(report.model_copy(update={"findings": list(report.findings), "runs": list(report.runs)}))
        return
    yield head + '\n  "findings": ['
    yield from _items(_finding_chunks(report.findings))
    yield '  "runs": ['
    yield from _items(_listed(chunk, _RUNS) for chunk in _chunks(report.runs) if chunk)
    yield tail


def _finding_chunks(findings: Sequence[Finding]) -> Iterator[str | memoryview]:
    """The findings' text a chunk at a time: a store's chunk as it wrote it already, or rendered here."""
    if hasattr(findings, "text_chunks"):  # a FindingStore or FindingChain
        for chunk in findings.text_chunks():
            yield chunk if isinstance(chunk, memoryview) else stored_chunk(chunk)
    else:
        for items in _chunks(findings):
            if items:
                yield _listed(items, _FINDINGS)


def stored_chunk(rows: list[Row]) -> str | memoryview:
    """The text :func:`render_json` writes for these rows of a store's findings (members of the
    report's findings list, at its indent). A lint asked for a JSON report has its stores write each
    chunk so as they keep it (:class:`rigcheck.core.engine.finding_store.FindingStore` ``render``): while the
    checks still run, on the CPUs the workers leave, instead of after them (issue 20)."""
    return _listed([row_values(row) for row in rows], _finding_values(), partial(unpack, rows))


def _chunks(items: Sequence[Any]) -> Iterator[list[Any]]:
    if isinstance(items, list):
        yield items
    else:
        chunk: list[Any] = []
        for item in items:
            chunk.append(item)
            if len(chunk) == _CHUNK:
                yield chunk
                chunk = []
        yield chunk


def _items(texts: Iterable[str | memoryview]) -> Iterator[str | memoryview]:
    """The items of a list member of the report (each text a non-empty chunk of them, as
    :func:`_listed` writes it), then its closing bracket and comma."""
    first = True
    for text in texts:
        yield "\n  " if first else ",\n  "  # not joined: each chunk's text is megabytes
        yield text
        first = False
    yield "\n  ],\n" if not first else "],\n"


def _listed(
    items: list[Any], adapter: TypeAdapter[Any], models: Callable[[], list[Any]] | None = None
) -> str | memoryview:
    """The items as the members of a JSON list at the report's indent, without the brackets; where
    pydantic-core cannot write them, each item as its model (``models()``, if given) on its own.

    Text that is ASCII without DEL (what :func:`json_text` leaves as it is: nearly every report) comes
    back as the bytes pydantic-core wrote, cut without a copy, for :func:`rigcheck.commands._shared.emit`
    to write as they are: decoding, slicing and encoding again the 46 MB of a lint of 2,000 files took
    60 ms of the writer's 260 ms."""
    try:
        data = adapter.dump_json({"items": items}, indent=2)
    except PydanticSerializationError:
        return _one_by_one(items if models is None else models())
    inner = memoryview(data)[len(_WRAPPER_HEAD) : -len(_WRAPPER_TAIL)]  # the wrapper is ASCII
    if data.isascii() and b"\x7f" not in data:
        return inner
    return json_text(bytes(inner).decode())


def _one_by_one(items: Iterable[Any]) -> str:
    """:func:`_listed` for items pydantic-core cannot write together: each model on its own, by
    pydantic-core where it can, else by ``json.dumps`` (:func:`dump_json`)."""
    parts = []
    for item in items:
        try:
            parts.append(json_text(item.model_dump_json(indent=2)))
        except PydanticSerializationError:
            parts.append(dump_json(json_safe(item.model_dump(), nonfinite=lambda _: None)))
    text = "[\n" + ",\n".join("  " + part.replace("\n", "\n  ") for part in parts) + "\n]"
    return text[2:-2].replace("\n", "\n  ")
