"""Findings held as compact rows, in memory up to a limit and on disk past it.

``rigcheck lint`` of a large repository produces findings by the hundred thousand; holding each as a
model until the writers run made its memory grow with the number of files (1 GiB at 10,000 files,
issue 20). A :class:`FindingStore` keeps the findings in the order they were added, counts them as
they come (so the summary, verdict and exit code never need the findings again), and past
:data:`MEMORY_LIMIT` moves them, as plain tuples (:data:`Row`), into an unnamed temporary file.
Iterating gives them back in order, one chunk in memory at a time, as often as a writer needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import IO, Any, NamedTuple, overload

from rigcheck.core.engine.findings import Finding, Location, Severity, restore
from rigcheck.core.lint.lint_rules import FINDINGS_FOLDED

#: Findings held in memory before the store moves them to its temporary file.
MEMORY_LIMIT = 4_096

_FIELDS = tuple(Finding.model_fields)
_LOCATION_FIELDS = tuple(Location.model_fields)
_LOCATION = _FIELDS.index("location")

#: A finding as one plain tuple: its field values in the model's order, the location as (its values,
#: its set fields) or None, then the finding's set fields. Pickling rows costs half of pickling the
#: models, and the steps after a run (tallies, repeats) read them without making models.
Row = tuple[Any, ...]

_CODE = _FIELDS.index("code")
_SEVERITY = _FIELDS.index("severity")
_MESSAGE = _FIELDS.index("message")
_CHECKER = _FIELDS.index("checker")
_SUPPRESSIONS = _FIELDS.index("suppressions")
_EVIDENCE = _FIELDS.index("evidence")
_RUN = _FIELDS.index("run")
_FILE = _LOCATION_FIELDS.index("file")
_POINTER = _LOCATION_FIELDS.index("pointer")
_INTERNED: dict[frozenset[str], frozenset[str]] = {}
#: Severity's members (iterating the enum class itself is ten times slower; a lint makes a tally per
#: checker per run).
_SEVERITIES = tuple(Severity)

#: The text a writer will write for a chunk of rows (the JSON writer's members of the findings list:
#: :func:`rigcheck.core.report.render.json.stored_chunk`); UTF-8 bytes or text.
ChunkText = Callable[[list[Row]], "str | bytes | memoryview"]


def _interned(fields: set[str]) -> frozenset[str]:
    key = frozenset(fields)
    return _INTERNED.setdefault(key, key)


def pack_one(finding: Finding, run: int | None = None) -> Row:
    """``finding`` as a :data:`Row`; with ``run``, as ``finding.with_changes(run=run)`` would pack (the
    index of the lint's run that found it), without making that copy."""
    row = list(map(finding.__dict__.__getitem__, _FIELDS))
    location = row[_LOCATION]
    if location is not None:
        row[_LOCATION] = (
            tuple(map(location.__dict__.__getitem__, _LOCATION_FIELDS)),
            _interned(location.__pydantic_fields_set__),
        )
    fields_set = finding.__pydantic_fields_set__
    if run is not None:
        row[_RUN] = run
        fields_set = fields_set | {"run"}
    row.append(_interned(fields_set))
    return tuple(row)


def row_values(row: Row) -> dict[str, Any]:
    """The finding's field values as a dict, its location's as a dict too: what its model serializes to,
    without making the model (the JSON writer writes a lint's findings from these)."""
    values = dict(zip(_FIELDS, row, strict=False))
    where = values["location"]
    if where is not None:
        values["location"] = dict(zip(_LOCATION_FIELDS, where[0], strict=True))
    return values


def unpack_one(row: Row) -> Finding:
    """The finding :func:`pack_one` took apart, as it was (no validation: the values are its own)."""
    values = row_values(row)
    if values["location"] is not None:
        values["location"] = restore(Location, values["location"], set(row[_LOCATION][1]))
    return restore(Finding, values, set(row[-1]))


def pack(findings: Iterable[Finding]) -> list[Row]:
    return [pack_one(finding) for finding in findings]


def unpack(rows: Iterable[Row]) -> list[Finding]:
    return [unpack_one(row) for row in rows]


def row_key(row: Row) -> tuple[Any, ...]:
    """What makes two findings repeats of each other (apart from their file: see :func:`row_file`):
    the rule, severity, message and pointer."""
    where = row[_LOCATION]
    return (row[_CODE], row[_SEVERITY], row[_MESSAGE], where[0][_POINTER] if where is not None else None)


def row_file(row: Row) -> str | None:
    where = row[_LOCATION]
    return where[0][_FILE] if where is not None else None


def row_group(row: Row) -> tuple[str | None, str, str, bool]:
    """The finding's file, rule, severity and whether it is suppressed: what a LINT003 finding may stand
    for (:mod:`rigcheck.core.engine.folding`)."""
    return (row_file(row), row[_CODE], Severity(row[_SEVERITY]).value, bool(row[_SUPPRESSIONS]))


def row_checker(row: Row) -> str:
    return str(row[_CHECKER])


_FOLDED = FINDINGS_FOLDED.code


def folded_count(evidence: Any) -> int:
    """How many findings a LINT003 finding stands for (:mod:`rigcheck.core.engine.folding`): its evidence's
    ``folded``; a count that is not a positive whole number stands for one finding."""
    count = evidence.get("folded") if isinstance(evidence, dict) else None
    return count if type(count) is int and count > 0 else 1


def stands_for(finding: Finding) -> tuple[str, int]:
    """The rule and number of findings ``finding`` stands for: a LINT003 finding's folded rule and
    count, any other finding's own code and 1."""
    if finding.code == _FOLDED and isinstance(finding.evidence.get("rule"), str):
        return finding.evidence["rule"], folded_count(finding.evidence)
    return finding.code, 1


class Tally:
    """Counts by severity of findings that count, and of suppressed ones (a report's summary)."""

    __slots__ = ("counts", "suppressed")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(_SEVERITIES, 0)
        self.suppressed = 0

    def add(self, finding: Finding) -> None:
        weight = folded_count(finding.evidence) if finding.code == _FOLDED else 1
        if finding.suppressions:
            self.suppressed += weight
        else:
            self.counts[finding.severity] += weight

    def add_row(self, row: Row) -> None:
        weight = folded_count(row[_EVIDENCE]) if row[_CODE] == _FOLDED else 1
        if row[_SUPPRESSIONS]:
            self.suppressed += weight
        else:
            self.counts[row[_SEVERITY]] += weight

    def merge(self, other: Tally) -> None:
        for severity, count in other.counts.items():
            self.counts[severity] += count
        self.suppressed += other.suppressed

    @property
    def verdict(self) -> Severity:
        """The worst severity that counts; skips count as a pass."""
        for severity in (Severity.FAIL, Severity.WARN):
            if self.counts[severity]:
                return severity
        return Severity.PASS

    def fails(self, fail_on: Severity) -> bool:
        """Whether any finding that counts is at or above ``fail_on`` (as :func:`report.exit_code_for`)."""
        return any(count and severity.rank >= fail_on.rank for severity, count in self.counts.items())


class _Walked(Sequence[Finding]):
    """Findings read by walking them in order, a chunk at a time (:meth:`chunks`); indexing walks."""

    def row_chunks(self) -> Iterator[list[Row]]:
        """The findings in order as :data:`Row` lists, at most a store's ``limit`` long."""
        raise NotImplementedError

    def chunks(self) -> Iterator[list[Finding]]:
        for rows in self.row_chunks():
            yield unpack(rows)

    def text_chunks(self) -> Iterator[memoryview | list[Row]]:
        """As :meth:`row_chunks`, but a chunk a store rendered as it stored it comes as that text (UTF-8)."""
        yield from self.row_chunks()

    def __iter__(self) -> Iterator[Finding]:
        for chunk in self.chunks():
            yield from chunk

    @overload
    def __getitem__(self, index: int) -> Finding: ...
    @overload
    def __getitem__(self, index: slice) -> list[Finding]: ...
    def __getitem__(self, index: int | slice) -> Finding | list[Finding]:
        if isinstance(index, slice):
            return list(self)[index]
        position = index + len(self) if index < 0 else index
        if 0 <= position < len(self):
            for number, finding in enumerate(self):
                if number == position:
                    return finding
        raise IndexError("finding index out of range")


class _Spilled(NamedTuple):
    """Where a chunk moved to the temporary file lies in it: its pickled rows, and the text ``render``
    gave for them (``text_length`` -1: none)."""

    offset: int
    length: int
    text_offset: int = 0
    text_length: int = -1


class FindingStore(_Walked):
    """Findings in the order added, counted as they come; past ``limit`` (default
    :data:`MEMORY_LIMIT`) in memory, on disk.

    With ``render``, each chunk moved to disk is also written as the text ``render`` gives for it, as
    the findings come (a lint's checks are still running then, on the other CPUs); :meth:`text_chunks`
    gives that text back instead of the rows, and the writer has only the last chunk left to render.

    Indexing walks the findings (it is linear); writers iterate. Not for use across processes."""

    def __init__(self, limit: int | None = None, *, render: ChunkText | None = None) -> None:
        self.limit = max(1, MEMORY_LIMIT if limit is None else limit)
        self.tally = Tally()
        self._render = render
        self._buffer: list[Row] = []
        self._file: IO[bytes] | None = None
        # Each chunk: where it lies in the file, or its rows where they would not pickle
        self._chunks: list[_Spilled | list[Row]] = []
        self._count = 0

    def add(self, finding: Finding) -> None:
        self.add_row(pack_one(finding))

    def add_row(self, row: Row) -> None:
        self._buffer.append(row)
        self.tally.add_row(row)
        self._count += 1
        if len(self._buffer) >= self.limit:
            self._spill()

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.add(finding)

    @property
    def on_disk(self) -> bool:
        """Whether some findings were moved to the temporary file."""
        return any(not isinstance(chunk, list) for chunk in self._chunks)

    def _spill(self) -> None:
        import pickle  # here: a store that never fills its buffer (every ``check``) never needs them
        import tempfile

        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="rigcheck-findings-")  # noqa: SIM115 (closed in close())
        try:
            data = pickle.dumps(self._buffer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a plugin's evidence that does not pickle (a lock, a lambda): kept in memory
            self._chunks.append(self._buffer)
            self._buffer = []
            return
        offset = self._file.seek(0, os.SEEK_END)
        self._file.write(data)
        spilled = _Spilled(offset, len(data))
        text = self._text(self._buffer)
        if text is not None:
            spilled = spilled._replace(text_offset=offset + len(data), text_length=len(text))
            self._file.write(text)
        self._file.flush()
        self._chunks.append(spilled)
        self._buffer = []

    def _text(self, rows: list[Row]) -> bytes | memoryview | None:
        """``render``'s text for ``rows`` as UTF-8 bytes; None without ``render``, or where it failed (the
        writer then renders the rows itself, and meets the failure there)."""
        if self._render is None:
            return None
        try:
            text = self._render(rows)
        except Exception:
            return None
        return text.encode("utf-8") if isinstance(text, str) else text

    def __len__(self) -> int:
        return self._count

    def row_chunks(self) -> Iterator[list[Row]]:
        chunks, buffer = list(self._chunks), list(self._buffer)
        for chunk in chunks:
            yield chunk if isinstance(chunk, list) else self._rows(chunk)
        if buffer:
            yield buffer

    def text_chunks(self) -> Iterator[memoryview | list[Row]]:
        chunks, buffer = list(self._chunks), list(self._buffer)
        for chunk in chunks:
            if isinstance(chunk, list):
                yield chunk
            elif chunk.text_length < 0:
                yield self._rows(chunk)
            else:
                yield memoryview(self._read(chunk.text_offset, chunk.text_length))
        if buffer:
            yield buffer

    def _rows(self, chunk: _Spilled) -> list[Row]:
        import pickle

        rows: list[Row] = pickle.loads(self._read(chunk.offset, chunk.length))
        return rows

    def _read(self, offset: int, length: int) -> bytes:
        assert self._file is not None  # pread: two walks at once do not share a file position
        return os.pread(self._file.fileno(), length, offset)

    def close(self) -> None:
        """Delete the temporary file (also done when the store is collected, or the process ends)."""
        if self._file is not None:
            self._file.close()
            self._file = None
            self._chunks = []


class FindingChain(_Walked):
    """Stores one after the other, as one sequence (a lint report: file problems, the runs' findings,
    then suppression findings); their tallies added up."""

    def __init__(self, *parts: FindingStore) -> None:
        self.parts = parts
        self.tally = Tally()
        for part in parts:
            self.tally.merge(part.tally)

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    def row_chunks(self) -> Iterator[list[Row]]:
        for part in self.parts:
            yield from part.row_chunks()

    def text_chunks(self) -> Iterator[memoryview | list[Row]]:
        for part in self.parts:
            yield from part.text_chunks()

    @property
    def on_disk(self) -> bool:
        return any(part.on_disk for part in self.parts)


def findings_where(
    findings: Iterable[Finding], severities: Collection[Severity], *, counting: bool = False
) -> Iterator[Finding]:
    """The findings of ``findings`` whose severity is one of ``severities`` (with ``counting``, only those
    not suppressed), in order. From a store, only those rows are made into findings again: a lint's
    text, SARIF and annotations list its warnings and failures, a few percent of its findings."""
    if not isinstance(findings, _Walked):
        for finding in findings:
            if finding.severity in severities and not (counting and finding.suppressions):
                yield finding
        return
    for rows in findings.row_chunks():
        for row in rows:
            if row[_SEVERITY] in severities and not (counting and row[_SUPPRESSIONS]):
                yield unpack_one(row)


def findings_matching(
    findings: Iterable[Finding], keep: Callable[[Severity, str, bool, int | None], bool]
) -> list[Finding]:
    """The findings for which ``keep(severity, code, suppressed, run)`` holds, in order; from a store,
    only those rows are made into findings again (a lint's HTML page draws a few of its findings)."""
    if not isinstance(findings, _Walked):
        return [f for f in findings if keep(f.severity, f.code, bool(f.suppressions), f.run)]
    return [
        unpack_one(row)
        for rows in findings.row_chunks()
        for row in rows
        if keep(row[_SEVERITY], row[_CODE], bool(row[_SUPPRESSIONS]), row[_RUN])
    ]


def findings_listed(findings: _Walked, severities: Collection[Severity]) -> list[Finding]:
    """In one walk of a store (:func:`findings_matching`): its findings whose severity is one of
    ``severities`` or that are suppressed (what a Markdown report lists of a lint)."""
    return findings_matching(
        findings, lambda severity, code, suppressed, run: severity in severities or suppressed
    )
