"""``rigcheck lint`` and the steps ``rigcheck check`` shares with it.

The pipeline: load the project config; run the checkers on every rig alone and on every rig +
workload pair (from ``runs_on:``, the config's ``pairs`` and ``matrix``); apply per-rule severity
overrides; attach suppressions (comments, waivers) and the baseline; build one report. A spec that
cannot be loaded becomes findings at its file and line instead of stopping the run, so one bad
file in a pull request does not hide the others.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rigcheck.core.catalog.catalog import Catalog
from rigcheck.core.engine.baseline import Baseline
from rigcheck.core.engine.collector import collector_paused
from rigcheck.core.engine.config import Settings, bind_plugin_configs, fact_overrides
from rigcheck.core.engine.engine import CheckerStatus, RunOptions, StatusSlots, check_all
from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.engine.finding_store import (
    ChunkText,
    FindingChain,
    FindingStore,
    Row,
    Tally,
    pack_one,
    row_file,
    row_key,
    unpack_one,
)
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.folding import Folder
from rigcheck.core.engine.registry import Registry
from rigcheck.core.engine.rules import matches, structural
from rigcheck.core.engine.suppressions import Suppressor
from rigcheck.core.lint import lint_workers
from rigcheck.core.lint.lint_rules import FOLD_AFTER, UNKNOWN_RIG, WORKLOAD_WITHOUT_RIG
from rigcheck.core.report.report import (
    CheckerRun,
    Report,
    RunRecords,
    build_report,
)
from rigcheck.core.spec import spec_codes
from rigcheck.core.spec.boundary import outside_reason, resolved
from rigcheck.core.spec.discovery import discover
from rigcheck.core.spec.documents import (
    NOT_PARSED,
    SpecDocument,
    SpecSummary,
    Unsure,
    load_spec,
    read_if_spec,
    spec_from_yaml,
)
from rigcheck.core.spec.loader import load_yaml_file


@dataclass
class Pipeline:
    """What every run shares: plugins, catalog, effective settings and the CLI's switches."""

    registry: Registry
    catalog: Catalog
    settings: Settings
    timeout_s: float
    no_ignores: bool = False
    baseline: str | None = None
    isolate_plugins: bool = False
    #: ``rigcheck lint --jobs``: worker processes for the runs (1: all in this process; see lint_workers.worker_count).
    jobs: int = 1
    #: What a lint's finding stores write each chunk of findings into as they keep it, for the report
    #: asked for (the JSON writer's text: rigcheck.core.report.render.json.stored_chunk); None: nothing.
    chunk_text: ChunkText | None = None
    #: Fold the findings past FOLD_AFTER of one rule per file into LINT003 (rigcheck.core.engine.folding);
    #: False lists every one (``--create-baseline``).
    fold: bool = True
    #: ``--timeout``: when the whole run must end, on time.monotonic()'s clock (None: no limit).
    deadline: float | None = None
    #: Plugin name -> its validated settings (``plugins-config``), checked when the pipeline is built.
    plugin_configs: dict[str, Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.plugin_configs = bind_plugin_configs(self.settings, self.registry)

    @property
    def options(self) -> RunOptions:
        off = [code for code, level in self.settings["severity"].items() if level == "off"]
        return RunOptions(
            select=tuple(self.settings["select"]),
            ignore=(*self.settings["ignore"], *off),
            fail_on=Severity(self.settings["fail-on"]),
            timeout_s=self.timeout_s,
            fact_overrides=fact_overrides(self.settings),
            isolate_plugins=self.isolate_plugins,
            plugin_configs=self.plugin_configs,
            deadline=self.deadline,
        )

    def check(
        self,
        rig: SpecDocument,
        workload: SpecDocument | None,
        *,
        load_ms: float = 0.0,
        evidence: Sequence[Any] = (),
    ) -> Report:
        """``rigcheck check``: a lint of one run (the rig, or the rig and the workload, with the evidence),
        through the same steps as :func:`lint`; a spec found broken while checking raises
        :class:`SpecError` (exit code 2), where a lint files it as findings of its run."""
        run = _Run(rig, workload, evidence=tuple(evidence))
        documents = [doc for doc in (rig, workload) if doc is not None]
        result = check_runs([run], documents, [], self, numbered=False)
        if result.problems:
            raise SpecError(result.problems)
        return build_report(
            run.subject,
            list(result.findings),
            Severity(self.settings["fail-on"]),
            documents=documents,
            checkers=result.totals.records(),
            plugins=self.registry.plugins,
            load_ms=load_ms,
            check_ms=result.check_ms,
        )

    def override(self, finding: Finding) -> Finding:
        """``finding`` at the severity the project config sets for its rule, if it sets one."""
        overrides = self.settings["severity"]
        if (
            not overrides
            or structural(finding.code)
            or finding.severity not in (Severity.WARN, Severity.FAIL)
        ):
            return finding
        best = max((code for code in overrides if matches(finding.code, [code])), key=len, default=None)
        if best is None or overrides[best] == "off" or overrides[best] == finding.severity.value:
            return finding
        origin = self.settings.values["severity"].origin
        evidence = {
            **finding.evidence,
            "severity_from": f"{finding.severity.value}, set to {overrides[best]} in {origin}",
        }
        return finding.with_changes(severity=Severity(overrides[best]), evidence=evidence)


@dataclass
class _Broken:
    """A spec file that does not load, named by a run (``runs_on``, the config's pairs and matrix): the
    run fails with its problems, as ``check`` of the same files exits 2 with them."""

    path: str
    kind: str | None
    problems: list[Problem]

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass
class _Run:
    """One check of a lint: a rig alone, or a rig and a workload."""

    rig: SpecDocument | SpecSummary | _Broken
    workload: SpecDocument | SpecSummary | _Broken | None
    #: Measured evidence to check with the rig (``rigcheck check --evidence``).
    evidence: tuple[Any, ...] = ()
    #: The checkers that ran (shared between runs that agree).
    ran: frozenset[str] = frozenset()

    @property
    def subject(self) -> str:
        return f"{self.rig.name} + {self.workload.name}" if self.workload else f"rig {self.rig.name}"


def lint(paths: Sequence[str], pipeline: Pipeline) -> Report:
    """Check every spec under ``paths``: each rig alone and each rig + workload pair."""
    started = time.perf_counter()
    settings = pipeline.settings
    documents: dict[str, SpecDocument] = {}
    broken: dict[str, _Broken] = {}  # specs that do not load, by key: a run that names one fails with them
    # each file's own problems, in discovery order: the problems, a spec that does not load (said here
    # unless a run names it), or YAML that cannot be read or parsed (said where specs live)
    found_problems: list[tuple[str, list[Problem] | _Broken | Unsure]] = []
    for spec in discover(paths, exclude=settings["exclude"], base=settings.base):
        if spec.problem is not None:  # unreadable, not a regular file, or outside the root: said, not skipped
            found_problems.append((spec.path, [Problem(spec.path, spec.problem, 1, 1, "", spec.code)]))
            continue
        try:
            found = load_yaml_file(spec.path) if spec.named else read_if_spec(spec.path)
            if isinstance(found, Unsure):
                found_problems.append((spec.path, found))
            elif found is not None:  # None: YAML none of whose documents declares rigcheck
                documents[_key(spec.path)] = spec_from_yaml(found, kind=spec.kind)
        except SpecError as exc:
            broken[_key(spec.path)] = _Broken(spec.path, spec.kind, exc.problems)
            found_problems.append((spec.path, broken[_key(spec.path)]))
    load_ms = (time.perf_counter() - started) * 1000
    paired_findings: list[Finding] = []
    loader = _Loader(documents, broken, pipeline, paired_findings)
    pairs = loader.pairs()  # may load more rigs (runs_on and pairs naming files outside the scan)
    rigs = [doc for doc in list(documents.values()) if doc.kind == "Rig"]
    runs = [_Run(rig, None) for rig in rigs]
    seen_pairs: set[tuple[int, int]] = set()
    for rig, workload in pairs:
        if (id(rig), id(workload)) not in seen_pairs:
            seen_pairs.add((id(rig), id(workload)))
            runs.append(_Run(rig, workload))
    named = {id(doc) for run in runs for doc in (run.rig, run.workload)}
    spec_folders = {os.path.dirname(key) for key in (*documents, *broken)}
    findings: list[Finding] = []
    for path, problems in found_problems:
        if isinstance(problems, _Broken):
            problems = [] if id(problems) in named else problems.problems  # else its runs fail with them
        elif isinstance(problems, Unsure):
            problems = _unsure_problems(path, problems, spec_folders)
        findings.extend(_problem_findings(problems, pipeline.registry))
    findings.extend(paired_findings)
    paired = {id(run.workload) for run in runs if run.workload is not None}
    for doc in list(documents.values()):
        if doc.kind == "Workload" and id(doc) not in paired:
            findings.append(
                _own(
                    WORKLOAD_WITHOUT_RIG.warned(
                        f"workload {doc.name} is paired with no rig: only its syntax was checked",
                        location=doc.locate("/name"),
                        subject=f"workload {doc.name}",
                        fix="add runs_on: [rig file or name] to the workload, or a pair to .rigcheck.yaml",
                    )
                )
            )
    all_documents = [doc.summary() for doc in documents.values()]
    loaded = list(documents.values())
    documents.clear()  # from here on only the runs hold the specs, each until its last run
    result = check_runs(runs, loaded, findings, pipeline)
    del loaded
    return _report(
        result.findings,
        result.records,
        runs,
        result.totals,
        all_documents,
        pipeline,
        load_ms,
        result.check_ms,
    )


@dataclass
class Checked:
    """What :func:`check_runs` found: the findings (the files' own problems, the runs', the
    suppressions'), each run's record, the checkers' statuses, and the problems of specs found broken
    while checking (each also a finding of its run)."""

    findings: FindingChain
    records: RunRecords
    totals: CheckerTotals
    problems: list[Problem]
    check_ms: float


def check_runs(
    runs: list[_Run],
    documents: list[SpecDocument],
    file_findings: Sequence[Finding],
    pipeline: Pipeline,
    *,
    numbered: bool = True,
) -> Checked:
    """The one pipeline of ``check`` and ``lint``: check each run, then apply the rule selection,
    severity overrides, suppressions, waivers and the baseline; ``file_findings`` (the files' own
    problems) come first. ``numbered``: each finding of a run carries the run's index (a lint's)."""
    started = time.perf_counter()
    finisher = _Finisher(pipeline, documents)
    problems, checked = FindingStore(render=pipeline.chunk_text), FindingStore(render=pipeline.chunk_text)
    for finding in file_findings:  # the files' own problems, found while loading
        finisher.keep(finisher.take(finding), problems)
    totals = CheckerTotals()
    with collector_paused():  # the runs make few reference cycles; generation-0 passes cost 8%
        records, broken = _check_runs(runs, pipeline, totals, finisher, checked, numbered)
    # Each file -> the codes of the rules that ran on it (SUP002): shared sets, one per combination of
    # checkers (not one per file: 10,000 files held 50 MiB of copies).
    active: dict[str, frozenset[str]] = {}
    codes_of: dict[frozenset[str], frozenset[str]] = {}
    unions: dict[tuple[int, int], frozenset[str]] = {}
    for run in runs:
        codes = codes_of.get(run.ran)
        if codes is None:
            codes = codes_of[run.ran] = frozenset(
                code for code, entry in pipeline.registry.rules.items() if entry.checker in run.ran
            )
        for path in (run.rig.path, run.workload.path if run.workload is not None else None):
            if path is None:
                continue
            known = active.get(path)
            if known is None or known is codes:
                active[path] = codes
            else:
                joined = unions.get((id(known), id(codes)))
                if joined is None:
                    joined = unions[(id(known), id(codes))] = known | codes
                active[path] = joined
    suppression_findings = FindingStore(render=pipeline.chunk_text)
    for finding in finisher.suppressor.finish(active):
        if pipeline.options.selected(finding.code):
            finisher.keep(finisher.take(finding, selected=True), suppression_findings)
    folded = FindingStore(render=pipeline.chunk_text)
    folded.extend(finisher.folder.notices())
    chain = FindingChain(problems, checked, suppression_findings, folded)
    return Checked(chain, records, totals, broken, (time.perf_counter() - started) * 1000)


class _Finisher:
    """The steps :meth:`Pipeline.finish` applies to a whole list, one finding at a time as the runs
    end (lint keeps counts, not findings): the rule selection, severity overrides, suppressions and
    waivers, the baseline; then :meth:`keep` drops the repeats (a rig's own findings come out of its
    alone run and of each pair: the first is kept)."""

    def __init__(self, pipeline: Pipeline, documents: Sequence[SpecDocument]) -> None:
        self.pipeline = pipeline
        self.options = pipeline.options
        self.suppressor = Suppressor(
            documents,
            waivers=pipeline.settings.waivers,
            base=pipeline.settings.base,
            known_codes=pipeline.registry.rules,
            inline=not pipeline.no_ignores,
        )
        self.baseline = Baseline(pipeline.baseline) if pipeline.baseline else None
        self.seen: dict[str | None, set[tuple[Any, ...]]] = {}  # file -> keys of the findings kept
        self.folder = Folder(FOLD_AFTER if pipeline.fold else None)

    def prepare(self, finding: Finding, *, selected: bool = False) -> Finding | None:
        """``finding`` after the selection, severity overrides and suppressions (the steps that need
        no other finding: worker processes apply them); None when the selection leaves it out."""
        if not selected and not self.options.selected(finding.code):
            return None
        return self.suppressor.apply(self.pipeline.override(finding))

    def finish(self, row: Row) -> Row:
        """A prepared finding after the baseline (whose counts are spent in run order, so here)."""
        if self.baseline is None:
            return row
        finding = unpack_one(row)
        baselined = self.baseline.apply(finding)
        return row if baselined is finding else pack_one(baselined)

    def take(self, finding: Finding, *, selected: bool = False) -> Row | None:
        """``finding`` after every step; None when the selection leaves it out."""
        prepared = self.prepare(finding, selected=selected)
        return None if prepared is None else self.finish(pack_one(prepared))

    def keep(self, row: Row | None, store: FindingStore) -> None:
        """Add the finding to ``store`` unless it repeats one kept already."""
        if row is None:
            return
        file = row_file(row)
        key = row_key(row)
        seen = self.seen.get(file)
        if seen is None:
            seen = self.seen[file] = set()
        if key not in seen:
            seen.add(key)
            self.folder.add(row, store)

    def used(self) -> tuple[list[tuple[int, frozenset[str]]], frozenset[int]]:
        """What the suppressions covered here (a worker's, sent back with its runs)."""
        comments = [(i, frozenset(c.used)) for i, c in enumerate(self.suppressor.valid) if c.used]
        return comments, frozenset(self.suppressor.used_waivers)

    def add_used(self, used: tuple[list[tuple[int, frozenset[str]]], frozenset[int]]) -> None:
        comments, waivers = used
        for index, codes in comments:
            self.suppressor.valid[index].used.update(codes)
        self.suppressor.used_waivers.update(waivers)


def _check_runs(
    runs: list[_Run],
    pipeline: Pipeline,
    totals: CheckerTotals,
    finisher: _Finisher,
    checked: FindingStore,
    numbered: bool,
) -> tuple[RunRecords, list[Problem]]:
    """Check each run in order, its findings finished and stored as it ends; each run's record, and the
    problems of the specs found broken while checking.

    Every run is recorded, in order, so a record's index is its run's index in every format. A run whose
    spec turns out broken (an unknown GPU, a bad model preset) carries those problems as its findings
    and fails, as ``check`` of the same files does. A pair lists its rig's findings once: those its rig's
    own run listed already are counted with the pair, not listed again. With ``pipeline.jobs`` > 1 the
    runs are checked in forked worker processes (:func:`_outcomes`) and taken here in run order, exactly
    as if they had been checked here; a run without an outcome (a worker that died) is checked here."""
    options = pipeline.options
    records = RunRecords()
    broken: list[Problem] = []
    # file -> the findings listed once for every run that reads the file: a rig's own (its alone run's
    # findings at its file) and a broken spec's problems; a later run counts them without listing them
    listed: dict[str, set[tuple[Any, ...]]] = {}
    last_run: dict[str, int] = {}  # spec path -> the index of the last run that reads it
    for index, run in enumerate(runs):
        for path in _paths(run):
            last_run[path] = index
    outcomes = _outcomes(runs, pipeline, options, finisher, numbered)
    try:
        for index, run in enumerate(runs):
            outcome = next(outcomes)
            if outcome is None:
                outcome = _check_one(index if numbered else None, run, pipeline, options, finisher)
            rows, statuses, found = outcome
            if found is not None:  # an unknown GPU, a bad model preset: the run's own findings
                broken.extend(found)
                rows = []
                for finding in _problem_findings(found, pipeline.registry):
                    kept = finisher.prepare(finding, selected=True)
                    if kept is not None:
                        rows.append(pack_one(kept, run=index if numbered else None))
            run.ran = totals.add(statuses)
            own = Tally()
            files = _paths(run)
            here: set[tuple[Any, ...]] = set()
            for prepared in rows:
                row = finisher.finish(prepared)
                file, key = row_file(row), row_key(row)
                if (file, *key) in here:
                    continue  # the same finding twice in one run: said and counted once
                here.add((file, *key))
                own.add_row(row)
                if file in files:
                    known = listed.get(file)
                    if known is not None and key in known:
                        continue  # listed with an earlier run of the file, counted with this one too
                    if found is not None or (run.workload is None and file == run.rig.path):
                        listed.setdefault(file, set()).add(key)
                finisher.folder.add(row, checked)
            _record(run, own, records)
            _forget_done(runs, index, last_run, listed)
    finally:
        outcomes.close()
    return records, broken


def _paths(run: _Run) -> tuple[str, ...]:
    """The files the run reads."""
    return (run.rig.path,) if run.workload is None else (run.rig.path, run.workload.path)


def _forget_done(runs: list[_Run], index: int, last_run: dict[str, int], listed: dict[str, set[Any]]) -> None:
    """After run ``index``: it keeps only its specs' summaries, and what was listed of a file no later
    run reads is forgotten; memory stays flat in the number of files."""
    run = runs[index]
    for path in _paths(run):
        if last_run.get(path) == index:
            listed.pop(path, None)
    runs[index] = _Run(
        run.rig.summary() if isinstance(run.rig, SpecDocument) else run.rig,
        run.workload.summary() if isinstance(run.workload, SpecDocument) else run.workload,
        ran=run.ran,
    )


def _record(run: _Run, own: Tally, records: RunRecords) -> None:
    """The run's verdict and counts (a pair's include its rig's findings from the checkers it left to
    the rig's own run, so a pair is never reported better than its rig)."""
    counts = own.counts
    records.add(
        run.subject,
        run.rig.path,
        run.workload.path if run.workload else None,
        own.verdict.value,
        (
            counts[Severity.PASS],
            counts[Severity.SKIP],
            counts[Severity.WARN],
            counts[Severity.FAIL],
            own.suppressed,
        ),
    )


#: One run checked: its findings (prepared, as rows) and checker statuses (as tuples: a lint adds up
#: one per checker per run), or the problems of a spec it found broken.
_Outcome = tuple[list[Row], list[StatusSlots], list[Problem] | None]


def _check_one(
    index: int | None,
    run: _Run,
    pipeline: Pipeline,
    options: RunOptions,
    finisher: _Finisher,
) -> _Outcome:
    """Check ``run``; its findings carry ``index`` (the run's in a lint, None in a check) and are
    prepared (:meth:`_Finisher.prepare`)."""
    rig, workload = run.rig, run.workload
    problems = [problem for doc in (rig, workload) if isinstance(doc, _Broken) for problem in doc.problems]
    if problems:
        return [], [], problems
    assert isinstance(rig, SpecDocument) and (workload is None or isinstance(workload, SpecDocument))
    try:
        _, produced, statuses = check_all(
            rig,
            workload,
            pipeline.registry,
            pipeline.catalog,
            options,
            evidence=run.evidence,
        )
    except SpecError as exc:
        return [], [], list(exc.problems)
    rows = []
    for finding in produced:
        # the engine kept only selected rules' findings; overrides and suppressions read no run index
        prepared = finisher.prepare(finding, selected=True)
        if prepared is not None:
            rows.append(pack_one(prepared, run=index))
    return rows, [status.slots() for status in statuses], None


def _outcomes(
    runs: Sequence[_Run],
    pipeline: Pipeline,
    options: RunOptions,
    finisher: _Finisher,
    numbered: bool,
) -> Generator[_Outcome | None, None, None]:
    """For each run in order, its outcome when a worker process checked it, else None
    (:func:`_check_runs` checks it here); see :mod:`rigcheck.core.lint.lint_workers`. The first rig alone
    and the first pair are checked here first: the checker modules they import and the caches they
    fill are then inherited, not built again in each worker."""

    def check(index: int) -> _Outcome:
        return _check_one(index if numbered else None, runs[index], pipeline, options, finisher)

    first_pair = next((index for index, run in enumerate(runs) if run.workload is not None), None)
    return lint_workers.outcomes(
        len(runs),
        check,
        jobs=pipeline.jobs,
        isolate_plugins=pipeline.isolate_plugins,
        first=sorted({0} if first_pair is None else {0, first_pair}),
        state=finisher.used,
        add_state=finisher.add_used,
    )


#: The statuses of a checker that failed; one run's fault is the checker's status over all runs.
_FAULTS = ("crashed", "timed-out")


class CheckerTotals:
    """Each checker's status over all runs, added up as the runs end (no per-run records kept)."""

    def __init__(self) -> None:
        self.checkers: dict[str, CheckerStatus] = {}
        self._sets: dict[frozenset[str], frozenset[str]] = {}

    def add(self, statuses: Sequence[StatusSlots]) -> frozenset[str]:
        """Add one run's statuses (as :meth:`CheckerStatus.slots`); the names of its checkers that ran."""
        checkers = self.checkers
        for slots in statuses:
            name, _, state, findings, duration_ms, reason = slots
            known = checkers.get(name)
            if known is None:
                checkers[name] = CheckerStatus(*slots)
                continue
            if state != known.status:  # a fault outranks "ran", which outranks the rest
                if known.status in _FAULTS or state in _FAULTS:
                    status = known.status if known.status in _FAULTS else state
                else:
                    status = "ran" if "ran" in (known.status, state) else known.status
                if status != known.status:
                    known.reason = reason
                    known.status = status
            known.findings += findings
            known.duration_ms += duration_ms
        ran = frozenset(slots[0] for slots in statuses if slots[2] == "ran")
        return self._sets.setdefault(ran, ran)

    def records(self) -> list[CheckerRun]:
        """The report's ``checkers[]``: each checker's status, its findings and its time over all runs."""
        for checker in self.checkers.values():
            checker.duration_ms = round(checker.duration_ms, 3)
        return [checker.record() for checker in self.checkers.values()]


#: Unknown rig and workload names (runs_on, the config's pairs and matrix) that get a "did you mean":
#: each is a fuzzy search over every name scanned, so past these the rest are only named and the lint
#: stays linear in the files (1,000 tiny workloads naming rigs that do not exist, beside 1,000 tiny
#: rigs, took 3.7 s to lint; 0.9 s with this).
MAX_HINTED_NAMES = 20


class SpecNames:
    """The specs of each kind by name and by file stem, each key to the first spec that has it (what a
    scan of the specs in order finds first), and the sorted names of each kind; kept up to date as specs
    are added. Resolving N runs_on names is N lookups, not N scans of every spec: 1,000 workloads naming
    their rigs (not their files) took 2.3 s longer to lint than naming files, a cost that grew with the
    square of the files."""

    def __init__(self, documents: Iterable[SpecDocument]) -> None:
        self._first: dict[tuple[str, str], SpecDocument] = {}
        self._names: dict[str, set[str]] = {}
        self._sorted: dict[str, list[str]] = {}
        for doc in documents:
            self.add(doc)

    def add(self, doc: SpecDocument) -> None:
        self._first.setdefault((doc.kind, doc.name), doc)
        self._first.setdefault((doc.kind, Path(doc.path).stem), doc)
        self._names.setdefault(doc.kind, set()).add(doc.name)
        self._sorted.pop(doc.kind, None)

    def first(self, kind: str, name: str) -> SpecDocument | None:
        """The first spec of ``kind`` named ``name`` or in a file ``name.yaml``, or None."""
        return self._first.get((kind, name))

    def sorted(self, kind: str) -> list[str]:
        """The names of the specs of ``kind``, sorted."""
        names = self._sorted.get(kind)
        if names is None:
            names = self._sorted[kind] = sorted(self._names.get(kind, ()))
        return names


class _Loader:
    """Resolves runs_on entries and config pairs to loaded specs (loading files outside the scan)."""

    def __init__(
        self,
        documents: dict[str, SpecDocument],
        broken: dict[str, _Broken],
        pipeline: Pipeline,
        findings: list[Finding],
    ) -> None:
        self.documents = documents
        self.broken = broken
        self.pipeline = pipeline
        self.findings = findings
        self.refused: set[tuple[str | None, str | None]] = set()
        self._names: SpecNames | None = None  # made at the first name looked up
        self._hinted = 0  # unknown names given a "did you mean" so far

    def pairs(self) -> list[tuple[SpecDocument | _Broken, SpecDocument | _Broken]]:
        """Each rig + workload pair asked for, in order; a file named that does not load is a
        :class:`_Broken` (its run fails with the file's problems)."""
        out: list[tuple[SpecDocument | _Broken, SpecDocument | _Broken]] = []
        for workload in [doc for doc in list(self.documents.values()) if doc.kind == "Workload"]:
            for index, entry in enumerate(workload.model.runs_on or ()):
                where = workload.locate(f"/runs_on/{index}")
                rig = self.resolve(entry, "Rig", Path(resolved(workload.path)).parent, where)
                if rig is None:
                    if not self._refused(where):
                        self._unknown(entry, "Rig", where, f"workload {workload.name}")
                else:
                    out.append((rig, workload))
        settings = self.pipeline.settings
        base = settings.base
        for index, pair in enumerate(settings["pairs"]):
            line, column = settings.location(f"/pairs/{index}")
            where = Location(file=settings.path, line=line, column=column, pointer=f"/pairs/{index}")
            pair_rig = self.resolve(pair["rig"], "Rig", base, where)
            pair_workload = self.resolve(pair["workload"], "Workload", base, where)
            for wanted, found, kind in (
                (pair["rig"], pair_rig, "Rig"),
                (pair["workload"], pair_workload, "Workload"),
            ):
                if found is None and not self._refused(where):
                    self._unknown(wanted, kind, where, f"config {settings.path}")
            if pair_rig is not None and pair_workload is not None:
                out.append((pair_rig, pair_workload))
        matrix = settings["matrix"]
        if matrix:
            sides: dict[str, list[SpecDocument | _Broken]] = {"Rig": [], "Workload": []}
            for kind, key in (("Rig", "rigs"), ("Workload", "workloads")):
                for index, entry in enumerate(matrix[key]):
                    line, column = settings.location(f"/matrix/{key}/{index}")
                    where = Location(
                        file=settings.path, line=line, column=column, pointer=f"/matrix/{key}/{index}"
                    )
                    matched = self.resolve_many(entry, kind, base, where)
                    if not matched and not self._refused(where):
                        self._unknown(entry, kind, where, f"config {settings.path}")
                    sides[kind].extend(matched)
            out.extend((rig, workload) for rig in sides["Rig"] for workload in sides["Workload"])
        return out

    def resolve(self, entry: str, kind: str, folder: Path, where: Location) -> SpecDocument | _Broken | None:
        found = self.resolve_many(entry, kind, folder, where)
        return found[0] if found else None

    def resolve_many(
        self, entry: str, kind: str, folder: Path, where: Location
    ) -> list[SpecDocument | _Broken]:
        if entry.endswith((".yaml", ".yml")) or "/" in entry or os.sep in entry:
            if any(c in entry for c in "*?["):
                if os.path.isabs(entry) or ".." in Path(entry).parts:  # the pattern itself leaves the root
                    reason = outside_reason(Path(entry) if os.path.isabs(entry) else folder / entry)
                    if reason is not None:
                        self._outside(entry, reason, where)
                        return []
                paths = sorted(glob.glob(str(folder / entry)))
            else:
                paths = [str(folder / entry)]
            out: list[SpecDocument | _Broken] = []
            for path in paths:
                reason = outside_reason(path)
                if reason is not None:
                    self._outside(entry, reason, where)
                elif (doc := self._load(path, kind)) is not None:
                    out.append(doc)
            return out
        named = self.names.first(kind, entry)
        if named is not None:
            return [named]
        from rigcheck.core.spec.specs_index import shipped_specs

        shipped = shipped_specs(kind).get(entry)
        return [doc] if shipped is not None and (doc := self._load(str(shipped), kind)) is not None else []

    def _load(self, path: str, kind: str) -> SpecDocument | _Broken | None:
        """The spec at ``path`` if it is a ``kind`` (loaded once), a :class:`_Broken` if it does not
        load, or None."""
        if not os.path.isfile(path):
            return None
        key = _key(path)
        if key in self.broken:
            return self.broken[key]
        if key not in self.documents:
            display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
            try:
                self.documents[key] = load_spec(display, kind=kind)
            except SpecError as exc:
                self.broken[key] = _Broken(display, kind, exc.problems)
                return self.broken[key]
            if self._names is not None:
                self._names.add(self.documents[key])
        doc = self.documents[key]
        return doc if doc.kind == kind else None

    def _outside(self, entry: str, reason: str, where: Location) -> None:
        problem = Problem(
            where.file or "",
            f"{entry!r}: {reason}; not read",
            where.line or 1,  # always set: these locations come from a spec or the config
            where.column or 1,
            where.pointer or "",
            spec_codes.OUTSIDE_ROOT,
        )
        self.findings.extend(_problem_findings([problem], self.pipeline.registry))
        self.refused.add((where.file, where.pointer))

    def _refused(self, where: Location) -> bool:
        return (where.file, where.pointer) in self.refused

    @property
    def names(self) -> SpecNames:
        if self._names is None:
            self._names = SpecNames(self.documents.values())
        return self._names

    def _unknown(self, entry: str, kind: str, where: Location, subject: str) -> None:
        from rigcheck.core.spec.fields import did_you_mean

        names = self.names.sorted(kind)
        hint = did_you_mean(entry, names) if self._hinted < MAX_HINTED_NAMES else ""
        self._hinted += 1
        self.findings.append(
            _own(
                UNKNOWN_RIG.failed(
                    f"{entry!r} matches no {kind.lower()} file or name{hint}",
                    location=where,
                    subject=subject,
                    fix=f"name a {kind.lower()} file (relative to the spec) or a {kind.lower()} name: "
                    + (", ".join(names[:8]) or "none scanned"),
                )
            )
        )


def _unsure_problems(path: str, found: Unsure, spec_folders: set[str]) -> list[Problem]:
    """The problems of YAML that cannot be read or parsed, where it is said: when its text names
    rigcheck or it sits in a folder that holds a spec; elsewhere (a broken Helm template beside the
    CI files) it is not a spec's to say."""
    if not found.names_rigcheck and os.path.dirname(_key(path)) not in spec_folders:
        return []
    if found is NOT_PARSED:  # other YAML beside specs: said if it is not valid YAML either
        parsed = read_if_spec(path, pre_filter=False)
        return parsed.problems if isinstance(parsed, Unsure) else []
    return found.problems


def _problem_findings(problems: Iterable[Problem], registry: Registry) -> list[Finding]:
    out = []
    for problem in problems:
        entry = registry.rules.get(problem.code)
        out.append(
            Finding(
                code=problem.code,
                name=entry.rule.name if entry else "",
                severity=Severity.FAIL,
                message=problem.message,
                location=Location(
                    file=problem.file, line=problem.line, column=problem.column, pointer=problem.pointer
                ),
                subject=f"file {problem.file}",
                checker="loader",
                plugin="rigcheck",
                fix="fix the spec at this line; `rigcheck validate FILE` checks it alone",
            )
        )
    return out


def _report(
    findings: FindingChain,
    records: RunRecords,
    runs: Sequence[_Run],
    totals: CheckerTotals,
    documents: Sequence[SpecSummary],
    pipeline: Pipeline,
    load_ms: float,
    check_ms: float,
) -> Report:
    fail_on = Severity(pipeline.settings["fail-on"])
    rigs = sum(1 for doc in documents if doc.kind == "Rig")
    workloads = len(documents) - rigs
    pairs = sum(1 for run in runs if run.workload is not None)
    return build_report(
        f"lint: {rigs} rig(s), {workloads} workload(s), {pairs} pair(s)",
        findings,
        fail_on,
        documents=documents,
        checkers=totals.records(),
        runs=records,
        plugins=pipeline.registry.plugins,
        load_ms=load_ms,
        check_ms=check_ms,
    )


def _own(finding: Finding) -> Finding:
    return finding.with_changes(checker="lint", plugin="rigcheck")


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))
