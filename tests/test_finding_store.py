"""Issue 20: lint keeps counts, not findings. A :class:`FindingStore` holds findings in memory up to
a limit and in a temporary file past it; the report written from a store on disk is the report
written from memory, in every format, byte for byte."""

from __future__ import annotations

import pytest

from rigcheck.core.engine import finding_store
from rigcheck.core.engine.finding_store import FindingChain, FindingStore, Tally, pack, unpack
from rigcheck.core.engine.findings import Finding, Location, Severity, Suppression
from tests.test_lint_formats import FORMATS, normalized


def _finding(number: int, severity: Severity = Severity.WARN, **changes: object) -> Finding:
    values: dict[str, object] = {
        "code": f"T{number:03d}",
        "severity": severity,
        "message": f"finding {number}",
        "evidence": {"number": number, "pair": (number, number + 1), "nested": {"x": [1.5, None]}},
        "location": Location(file="rig.yaml", line=number + 1, column=3, pointer=f"/nodes/{number}"),
    }
    values.update(changes)
    return Finding(**values)  # type: ignore[arg-type]


FINDINGS = [
    _finding(0),
    _finding(1, Severity.PASS, location=None),
    _finding(2, Severity.FAIL, suppressions=(Suppression(kind="inline", reason="known"),)),
    _finding(3, Severity.SKIP, fix="do this", run=4, related=(Location(file="w.yaml", line=2),)),
    _finding(4, Severity.FAIL),
]


def test_pack_and_unpack_give_the_findings_back_with_their_set_fields() -> None:
    back = unpack(pack(FINDINGS))
    assert back == FINDINGS
    assert [f.model_fields_set for f in back] == [f.model_fields_set for f in FINDINGS]
    assert back[0].location is not None and back[0].location.model_fields_set == {
        "file",
        "line",
        "column",
        "pointer",
    }


@pytest.mark.parametrize("limit", [1, 2, 3, 100])
def test_a_store_gives_its_findings_in_order_whatever_is_on_disk(limit: int) -> None:
    store = FindingStore(limit)
    store.extend(FINDINGS)
    assert store.on_disk is (limit <= len(FINDINGS))
    assert len(store) == 5
    assert list(store) == FINDINGS
    assert list(store) == FINDINGS  # a second walk reads the file again
    assert [store[i].code for i in (0, 2, -1)] == ["T000", "T002", "T004"]
    assert store[1:3] == FINDINGS[1:3]
    assert sum(len(chunk) for chunk in store.chunks()) == 5
    walks = zip(store, store, strict=True)  # two walks at once share no file position
    assert all(a == b for a, b in walks)
    with pytest.raises(IndexError):
        store[5]
    store.close()


def test_findings_that_do_not_pickle_stay_in_memory() -> None:
    """A plugin's evidence may hold anything (a lock, a lambda): that chunk is kept, not lost."""
    import threading

    odd = _finding(9, evidence={"lock": threading.Lock(), "f": lambda: 1})
    store = FindingStore(1)
    store.extend([FINDINGS[0], odd, FINDINGS[1]])
    back = list(store)
    assert [f.code for f in back] == ["T000", "T009", "T001"] and back[1].evidence is odd.evidence
    assert store.on_disk  # the others did move to the file


def test_the_tally_counts_what_counts_and_what_is_suppressed() -> None:
    store = FindingStore(2)
    store.extend(FINDINGS)
    # WARN T000, PASS T001, suppressed FAIL T002, SKIP T003, FAIL T004
    assert store.tally.counts == {Severity.PASS: 1, Severity.SKIP: 1, Severity.WARN: 1, Severity.FAIL: 1}
    assert store.tally.suppressed == 1
    assert store.tally.verdict is Severity.FAIL
    assert store.tally.fails(Severity.FAIL) and store.tally.fails(Severity.WARN)
    only_warn = Tally()
    only_warn.add(FINDINGS[0])
    assert only_warn.verdict is Severity.WARN
    assert not only_warn.fails(Severity.FAIL) and only_warn.fails(Severity.WARN)
    skip_only = Tally()
    skip_only.add(FINDINGS[3])
    assert skip_only.verdict is Severity.PASS  # skips count as a pass, as verdict_of says


def test_a_chain_is_its_parts_in_order() -> None:
    first, second = FindingStore(1), FindingStore(10)
    first.extend(FINDINGS[:2])
    second.extend(FINDINGS[2:])
    chain = FindingChain(first, second)
    assert list(chain) == FINDINGS and len(chain) == 5
    assert chain[3] == FINDINGS[3] and chain[-1] == FINDINGS[-1]
    assert chain.tally.counts[Severity.FAIL] == 1 and chain.tally.suppressed == 1
    assert chain.on_disk


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_lint_report_from_disk_is_the_report_from_memory(  # type: ignore[no-untyped-def]
    in_repo, run_cli, monkeypatch, name: str
) -> None:
    """The lint repository's report with every finding on disk (a limit of 1) and with none."""
    outputs = []
    for limit in (1, 10**9):
        monkeypatch.setattr(finding_store, "MEMORY_LIMIT", limit)
        result = run_cli("lint", "--format", name, "--color", "never")
        assert result.exit_code == 1, result.err
        outputs.append(normalized(name, result.out))
    assert outputs[0] == outputs[1]


def test_a_store_past_its_limit_is_on_disk_and_reads_back_in_order() -> None:
    """The disk path the report above takes with a limit of 1: every finding in a chunk of its own."""
    findings = [FINDINGS[i % len(FINDINGS)] for i in range(9)]
    small, large = FindingStore(limit=1), FindingStore(limit=10**9)
    for store in (small, large):
        store.extend(findings)
    assert small.on_disk and not large.on_disk
    assert list(small) == list(large) == findings


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from tests.test_lint_formats import LINT_REPO

    monkeypatch.chdir(LINT_REPO)
    monkeypatch.setattr("rigcheck.commands._shared.report_root", lambda: str(LINT_REPO))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return LINT_REPO


def test_run_records_are_kept_as_tuples_and_read_as_models() -> None:
    from rigcheck.core.report.report import RunRecord, RunRecords, Summary

    records = RunRecords()
    records.add("rig a", "a.yaml", None, "warn", (3, 1, 2, 0, 1))
    records.add("a + w", "a.yaml", "w.yaml", "fail", (1, 0, 0, 4, 0))
    expected = [
        RunRecord(
            subject="rig a",
            rig="a.yaml",
            verdict="warn",
            summary=Summary(passed=3, skipped=1, warned=2, failed=0, suppressed=1),
        ),
        RunRecord(
            subject="a + w",
            rig="a.yaml",
            workload="w.yaml",
            verdict="fail",
            summary=Summary(passed=1, failed=4),
        ),
    ]
    assert len(records) == 2
    assert list(records) == expected and records[1] == expected[1] and records[:1] == expected[:1]
    assert [r.model_dump() for r in records] == [r.model_dump() for r in expected]


@pytest.mark.parametrize("picks", [[], [1], [3], [0, 3], [2], [1, 2], [0, 1, 2, 3, 4], [2, 3]])
def test_one_pass_counts_follow_the_definitions(picks: list[int]) -> None:
    """Counts by severity of the findings not suppressed; the verdict is the worst of them, a skip
    counting as a pass; exit 1 when one is at or above fail-on."""
    from rigcheck.core.report.report import summary_of, tally_of

    findings = [FINDINGS[i] for i in picks]
    tally = tally_of(findings)
    counting = [finding for finding in findings if not finding.suppressions]
    summary = summary_of(tally)
    assert (summary.passed, summary.skipped, summary.warned, summary.failed, summary.suppressed) == (
        *(sum(f.severity is s for f in counting) for s in Severity),
        len(findings) - len(counting),
    )
    severities = {finding.severity for finding in counting}
    expected = next((s for s in (Severity.FAIL, Severity.WARN) if s in severities), Severity.PASS)
    assert tally.verdict is expected
    assert tally.fails(Severity.WARN) == bool(severities & {Severity.WARN, Severity.FAIL})
    assert tally.fails(Severity.FAIL) == (Severity.FAIL in severities)


def test_packing_with_a_run_index_is_packing_the_copy_with_it() -> None:
    """``pack_one(finding, run=N)`` (lint's workers) equals packing ``finding.with_changes(run=N)``."""
    from rigcheck.core.engine.finding_store import pack_one, unpack_one
    from rigcheck.core.engine.findings import Severity, new_finding, new_location

    location = new_location("rig.yaml", 3, 5, "/nodes/0")
    finding = new_finding(
        code="PLT001",
        name="n",
        severity=Severity.WARN,
        message="m",
        evidence={"a": 1},
        fix=None,
        location=location,
        related=(),
        checker="c",
        plugin="p",
        subject="s",
        suppressions=(),
        run=None,
    )
    assert pack_one(finding, run=7) == pack_one(finding.with_changes(run=7))
    restored = unpack_one(pack_one(finding, run=7))
    assert restored.run == 7 and "run" in restored.model_fields_set
    assert restored.model_dump() == finding.with_changes(run=7).model_dump()


@pytest.mark.parametrize("limit", [1, 2, 100])
def test_findings_where_gives_the_matching_findings_and_makes_only_those_into_models(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FindingStore(limit)
    store.extend(FINDINGS)
    chain = FindingChain(store)
    made: list[str] = []
    real = finding_store.unpack_one
    monkeypatch.setattr(finding_store, "unpack_one", lambda row: made.append(row[0]) or real(row))
    shown = (Severity.WARN, Severity.FAIL)
    assert list(finding_store.findings_where(chain, shown, counting=True)) == [FINDINGS[0], FINDINGS[4]]
    assert made == ["T000", "T004"]  # the pass, the skip and the suppressed failure stay rows
    assert list(finding_store.findings_where(store, shown)) == [FINDINGS[0], FINDINGS[2], FINDINGS[4]]
    assert list(finding_store.findings_where(FINDINGS, shown, counting=True)) == [FINDINGS[0], FINDINGS[4]]
    assert list(finding_store.findings_where(FINDINGS, (Severity.SKIP,))) == [FINDINGS[3]]


class _Opaque:
    """Evidence pydantic-core cannot write (the writer falls back to ``str``)."""

    def __str__(self) -> str:
        return "opaque"


@pytest.mark.parametrize(
    "evidence",
    [
        {"nan": float("nan"), "inf": float("inf"), "set": {2, 1}, "text": "m \x7f\u2028"},
        {"obj": _Opaque(), "surrogate": "\ud800"},
        {"lock": __import__("threading").Lock()},  # does not pickle: its chunk stays in memory
    ],
    ids=["pydantic-core", "fallback", "not-pickled"],
)
@pytest.mark.parametrize("limit", [1, 3, 100])
@pytest.mark.parametrize("stored", [False, True], ids=["written-at-the-end", "written-as-stored"])
def test_the_json_written_from_a_store_is_the_json_of_its_findings(
    evidence: dict[str, object], limit: int, stored: bool
) -> None:
    """The JSON writer writes a store's findings from their rows' values, not from models made again:
    the text is the one the findings themselves give, also where pydantic-core cannot write a value;
    and so is the text the store had written as it moved each chunk to disk (a lint's JSON report)."""
    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.report.render.json import render_json, stored_chunk
    from rigcheck.core.report.report import build_report

    findings = [*FINDINGS[:2], _finding(7, evidence=evidence), *FINDINGS[2:]]
    store = FindingStore(limit, render=stored_chunk if stored else None)
    store.extend(findings)
    report = build_report("lint", findings, Severity.FAIL)
    from_list = render_json(report, RenderOptions())
    from_store = render_json(report.model_copy(update={"findings": store}), RenderOptions())
    assert isinstance(from_list, str) and not isinstance(from_store, str)
    # an ASCII chunk comes as the bytes pydantic-core wrote (emit writes them as they are), others as text
    parts = [part if isinstance(part, str) else bytes(part).decode() for part in from_store]
    assert "".join(parts) == from_list


def test_a_store_writes_what_it_moves_to_disk_as_it_moves_it() -> None:
    """With ``render``, each chunk moved to disk is written then, once, and given back as that text;
    the chunk still in memory is given as rows (the writer renders it), and the rows stay readable."""
    rendered: list[list[str]] = []

    def render(rows: list[finding_store.Row]) -> str:
        rendered.append([row[0] for row in rows])
        return "|".join(row[0] for row in rows) + " \u00e9"  # text, not only ASCII: kept as UTF-8

    findings = [_finding(number) for number in range(8)]
    store = FindingStore(3, render=render)
    store.extend(findings)
    assert rendered == [["T000", "T001", "T002"], ["T003", "T004", "T005"]]  # as each chunk moved
    chunks = list(store.text_chunks())
    assert [bytes(chunk).decode() for chunk in chunks[:2]] == [
        "T000|T001|T002 \u00e9",
        "T003|T004|T005 \u00e9",
    ]
    assert unpack(chunks[2]) == findings[6:]  # type: ignore[arg-type]
    assert list(store) == findings and len(rendered) == 2  # rows read back, nothing rendered again
    chained = FindingChain(FindingStore(), store).text_chunks()  # an empty store gives nothing
    assert [bytes(c) if isinstance(c, memoryview) else c for c in chained] == [
        bytes(c) if isinstance(c, memoryview) else c for c in chunks
    ]


def test_a_chunk_render_fails_on_is_given_back_as_rows() -> None:
    """A render that raises leaves that chunk to the writer, which renders its rows itself."""

    def render(rows: list[finding_store.Row]) -> str:
        if any(row[0] == "T001" for row in rows):
            raise ValueError("cannot")
        return "ok"

    findings = [_finding(number) for number in range(4)]
    store = FindingStore(2, render=render)
    store.extend(findings)
    chunks = list(store.text_chunks())
    assert unpack(chunks[0]) == findings[:2]  # type: ignore[arg-type]
    assert bytes(chunks[1]) == b"ok"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("formats", "written"), [(("json",), True), (("sarif",), False), (("sarif", "json"), True)]
)
def test_a_lint_asked_for_json_writes_its_findings_as_it_stores_them(  # type: ignore[no-untyped-def]
    in_repo, run_cli, monkeypatch, tmp_path, formats: tuple[str, ...], written: bool
) -> None:
    """A lint's stores write each chunk's JSON as they move it to disk when a JSON report is asked for
    (``stored_chunk_text``), and the report is the one the writer gives on its own (byte for byte,
    timings aside)."""
    from rigcheck.commands import reporting
    from rigcheck.core.report.render import json as json_render

    outputs = [
        reporting.Output(name, json_render.render_json if name == "json" else str, None) for name in formats
    ]
    assert (reporting.stored_chunk_text(outputs) is json_render.stored_chunk) == written
    monkeypatch.setattr(finding_store, "MEMORY_LIMIT", 2)
    reports = []
    for with_render in (True, False):
        if not with_render:
            monkeypatch.setattr(reporting, "stored_chunk_text", lambda outputs: None)
        arguments = ["lint"]
        for index, name in enumerate(formats):
            arguments += ["--format", name, "--output", str(tmp_path / f"{with_render}-{index}.{name}")]
        result = run_cli(*arguments, "--color", "never")
        assert result.exit_code == 1, result.err
        reports.append(
            [
                normalized(name, (tmp_path / f"{with_render}-{index}.{name}").read_text())
                for index, name in enumerate(formats)
            ]
        )
    assert reports[0] == reports[1]


def _runs(count: int) -> list[object]:
    from rigcheck.core.report.report import RunRecord, Summary

    return [
        RunRecord(subject=f"rig r{n}", rig=f"r{n}.yaml", verdict="warn", summary=Summary(passed=1, warned=1))
        for n in range(count)
    ]


def _run_finding(
    number: int, run: int | None, severity: Severity = Severity.PASS, **changes: object
) -> Finding:
    location = Location(
        file=f"r{run if run is not None else 0}.yaml", line=number + 1, pointer=f"/x/{number}"
    )
    values: dict[str, object] = {"run": run, "subject": None, "location": location, **changes}
    return _finding(number, severity, **values)


#: Findings as lint gives them (run indices in order, file problems and suppression findings with
#: none), out of run order, with no run index at all (a report assembled by other code: grouped by
#: subject), and a report without runs.
_ORDERS = {
    "in run order": [
        _run_finding(0, None, Severity.FAIL),
        _run_finding(1, 0),
        _run_finding(2, 0, Severity.WARN),
        _run_finding(3, 2, Severity.FAIL, suppressions=(Suppression(kind="inline", reason="known"),)),
        _run_finding(4, 2, Severity.SKIP),
        _run_finding(5, 9, Severity.WARN),  # no such run: with the files' problems
        _run_finding(6, None, Severity.WARN, subject="suppressions"),
    ],
    "out of run order": [_run_finding(1, 2), _run_finding(2, 0, Severity.WARN), _run_finding(3, 1)],
    "no run index": [
        _finding(1, Severity.FAIL, subject="rig r1"),
        _finding(2, Severity.WARN, subject="rig r0", location=Location(file="r0.yaml", line=3)),
        _finding(3, subject="elsewhere"),
    ],
    "no findings": [],
}


@pytest.mark.parametrize("runs", [0, 3], ids=["no runs", "3 runs"])
@pytest.mark.parametrize("order", sorted(_ORDERS))
@pytest.mark.parametrize("fmt", ["junit", "markdown"])
def test_junit_and_markdown_from_a_store_are_those_of_the_list(order: str, runs: int, fmt: str) -> None:
    """JUnit writes a store's suites run by run as it walks it, Markdown takes only the findings it
    lists: the text is the one the whole list gives, in every order (where the findings are not in run
    order, JUnit groups them as :func:`group_findings` does)."""
    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.report.render.junit import render_junit
    from rigcheck.core.report.render.markdown import render_markdown
    from rigcheck.core.report.report import build_report

    render = {"junit": render_junit, "markdown": render_markdown}[fmt]
    findings = _ORDERS[order]
    report = build_report("lint", findings, Severity.FAIL, runs=_runs(runs))  # type: ignore[arg-type]
    for limit in (1, 100):
        store = FindingStore(limit)
        store.extend(findings)
        from_store = render(report.model_copy(update={"findings": store}), RenderOptions())
        assert "".join(from_store) == render(report, RenderOptions())


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown", "html"])
def test_writers_take_no_more_memory_for_ten_times_the_runs(fmt: str) -> None:
    """Memory flat in the number of files (issue 20): a writer walks a lint's store a chunk at a time
    and holds what it lists or draws, not every finding. 100 and 1,000 runs of 20 passes (one warning,
    in the first run): the peak Python memory while writing stays within 1.5x, plus eight bytes per
    character the text grows by where the writer returns it as one string (and holds its pieces: the
    HTML page has a section per run, 2.2 MB more for 0.43 MB more page). Holding every finding as a
    model, as the JUnit, Markdown and HTML writers did, made it 10x."""
    import importlib
    import tracemalloc

    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.report.report import build_report

    render = getattr(importlib.import_module(f"rigcheck.core.report.render.{fmt}"), f"render_{fmt}")
    peaks, sizes = [], []
    for runs in (100, 100, 1000):  # the first: imports and templates, not measured
        store = FindingStore(500)
        for run in range(runs):
            for number in range(20):
                store.add(_run_finding(number, run, Severity.WARN if run == number == 0 else Severity.PASS))
        report = build_report("lint", store, Severity.FAIL, runs=_runs(runs))  # type: ignore[arg-type]
        tracemalloc.start()
        try:
            text = render(report, RenderOptions())
            for _ in [] if isinstance(text, str) else text:
                pass
            peaks.append(tracemalloc.get_traced_memory()[1])
            sizes.append(len(text) if isinstance(text, str) else 0)
        finally:
            tracemalloc.stop()
    assert peaks[2] < 1.5 * peaks[1] + 8 * (sizes[2] - sizes[1]), (peaks, sizes)


def test_junit_from_a_store_without_a_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no temporary file can be made, JUnit's suites wait in memory: the same text."""
    import tempfile

    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.report.render.junit import render_junit
    from rigcheck.core.report.report import build_report

    findings = _ORDERS["in run order"]
    report = build_report("lint", findings, Severity.FAIL, runs=_runs(3))  # type: ignore[arg-type]
    store = FindingStore(100)
    store.extend(findings)

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    from_store = render_junit(report.model_copy(update={"findings": store}), RenderOptions())
    assert "".join(from_store) == render_junit(report, RenderOptions())
