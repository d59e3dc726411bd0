"""``emit`` writes a report's parts in order, text and bytes alike (the JSON writer gives its ASCII
chunks as the bytes pydantic-core wrote: rigcheck.core.report.render.json._listed)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from rigcheck.commands._shared import emit

PARTS = ['{\n  "findings": [', memoryview(b'\n    {"a": 1},\n    {"b": 2}'), b"\n  ],", "\n}\n"]
TEXT = '{\n  "findings": [\n    {"a": 1},\n    {"b": 2}\n  ],\n}\n'


class _Recorded(io.TextIOWrapper):
    """A UTF-8 stream over bytes that notes the text written through its text layer."""

    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__(io.BytesIO(), encoding=encoding, newline="\n")
        self.texts: list[str] = []

    def write(self, text: str) -> int:
        self.texts.append(text)
        return super().write(text)

    def written(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode(self.encoding)


def test_a_file_gets_the_parts_in_order(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    emit(iter(PARTS), str(out))
    assert out.read_bytes() == TEXT.encode()


def test_bytes_go_to_a_utf8_stream_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = _Recorded()
    monkeypatch.setattr(sys, "stdout", stream)
    emit(iter(PARTS), None)
    assert stream.written() == TEXT
    assert all('"a"' not in text for text in stream.texts)  # not decoded and written as text


@pytest.mark.parametrize(
    "stream", [io.StringIO(), _Recorded(encoding="latin-1")], ids=["no-buffer", "latin-1"]
)
def test_bytes_are_written_as_text_where_the_stream_is_not_utf8_bytes(
    stream: io.TextIOBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", stream)
    emit(iter(PARTS), None)
    written = stream.getvalue() if isinstance(stream, io.StringIO) else stream.written()  # type: ignore[attr-defined]
    assert written == TEXT


def test_a_lint_report_written_from_a_store_is_the_report_of_its_findings(tmp_path: Path) -> None:
    """The whole path: a lint's JSON report (findings in a store, partly on disk) written by emit is the
    text the same report gives when its findings are a list."""
    from rigcheck.core.engine.finding_store import FindingStore
    from rigcheck.core.engine.findings import Finding, Location, Severity
    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.report.render.json import render_json
    from rigcheck.core.report.report import build_report

    findings = [
        Finding(
            code=f"T{number:03d}",
            severity=Severity.PASS if number % 3 else Severity.FAIL,
            message=f"finding {number}" + (" \u00e9" if number == 7 else ""),  # one chunk is not ASCII
            evidence={"number": number},
            location=Location(file="rig.yaml", line=number + 1, column=1, pointer=f"/n/{number}"),
        )
        for number in range(40)
    ]
    store = FindingStore(8)
    store.extend(findings)
    assert store.on_disk
    report = build_report("lint", findings, Severity.FAIL)
    out = tmp_path / "lint.json"
    emit(render_json(report.model_copy(update={"findings": store}), RenderOptions()), str(out))
    whole = render_json(report, RenderOptions())
    assert isinstance(whole, str)
    assert out.read_text(encoding="utf-8") == whole
