"""``rigcheck lint`` and the steps ``rigcheck check`` shares with it.

The pipeline: load the project config; run the checkers on every rig alone and on every rig +
workload pair (from ``runs_on:``, the config's ``pairs`` and ``matrix``); apply per-rule severity
overrides; attach suppressions (comments, waivers) and the baseline; build one report. A spec that
cannot be loaded becomes findings at its file and line instead of stopping the run, so one bad
file in a pull request does not hide the others.
"""

from __future__ import annotations

import gc
import glob
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rigcheck.core import spec_codes
from rigcheck.core.baseline import apply_baseline
from rigcheck.core.boundary import outside_reason
from rigcheck.core.catalog import Catalog
from rigcheck.core.config import Settings, bind_plugin_configs, fact_overrides
from rigcheck.core.discovery import discover
from rigcheck.core.documents import SpecDocument, declares_rigcheck, load_spec, spec_from_yaml
from rigcheck.core.engine import CheckerStatus, RunOptions, check_all, run_checks
from rigcheck.core.errors import Problem, SpecError
from rigcheck.core.findings import Finding, Location, Severity, restore
from rigcheck.core.lint_rules import UNKNOWN_RIG, WORKLOAD_WITHOUT_RIG
from rigcheck.core.loader import load_yaml_file
from rigcheck.core.registry import Registry
from rigcheck.core.report import (
    CheckerRun,
    Report,
    RunRecord,
    build_report,
    recount,
    summarize,
    verdict_of,
)
from rigcheck.core.rules import matches
from rigcheck.core.suppressions import apply_suppressions


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
    #: ``rigcheck lint --jobs``: worker processes for the runs (1: all in this process; see worker_count).
    jobs: int = 1
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
        )

    def check(
        self,
        rig: SpecDocument,
        workload: SpecDocument | None,
        *,
        load_ms: float = 0.0,
        evidence: Sequence[Any] = (),
    ) -> Report:
        """``rigcheck check``: one rig (and workload, and evidence), with overrides, suppressions and the
        baseline."""
        report = run_checks(
            rig, workload, self.registry, self.catalog, self.options, load_ms=load_ms, evidence=evidence
        )
        documents = [doc for doc in (rig, workload) if doc is not None]
        active = self._active(report.checkers, documents)
        return recount(report, self.finish(report.findings, documents, active))

    def finish(
        self, findings: Sequence[Finding], documents: Sequence[SpecDocument], active: dict[str, set[str]]
    ) -> list[Finding]:
        """Severity overrides, then suppressions and waivers, then the baseline."""
        options = self.options
        overridden = [self._override(finding) for finding in findings]
        result = apply_suppressions(
            overridden,
            documents,
            waivers=self.settings.waivers,
            base=self.settings.base,
            known_codes=self.registry.rules,
            active=active,
            inline=not self.no_ignores,
        )
        out = result.findings + [finding for finding in result.extra if options.selected(finding.code)]
        if self.baseline:
            out = apply_baseline(out, self.baseline)
        return out

    def _override(self, finding: Finding) -> Finding:
        overrides = self.settings["severity"]
        if not overrides or finding.severity not in (Severity.WARN, Severity.FAIL):
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

    def _active(
        self, checkers: Iterable[CheckerRun], documents: Sequence[SpecDocument]
    ) -> dict[str, set[str]]:
        ran = {run.name for run in checkers if run.status == "ran"}
        codes = {code for code, entry in self.registry.rules.items() if entry.checker in ran}
        return {doc.path: set(codes) for doc in documents}


#: Why a pair's run left a checker to its rig's own run (rigcheck.core.engine).
RIG_ONLY = "rig-only: reported with the rig"


@dataclass
class _Run:
    rig: SpecDocument
    workload: SpecDocument | None
    findings: list[Finding] = field(default_factory=list)
    #: The checkers that ran, and those left to the rig's own run (shared between runs that agree).
    ran: frozenset[str] = frozenset()
    left: frozenset[str] = frozenset()

    @property
    def subject(self) -> str:
        return f"{self.rig.name} + {self.workload.name}" if self.workload else f"rig {self.rig.name}"


def lint(paths: Sequence[str], pipeline: Pipeline) -> Report:
    """Check every spec under ``paths``: each rig alone and each rig + workload pair."""
    started = time.perf_counter()
    settings = pipeline.settings
    documents: dict[str, SpecDocument] = {}
    findings: list[Finding] = []
    for spec in discover(paths, exclude=settings["exclude"], base=settings.base):
        if spec.problem is not None:  # unreadable, not a regular file, or outside the root: said, not skipped
            problem = Problem(spec.path, spec.problem, 1, 1, "", spec.code)
            findings.extend(_problem_findings([problem], pipeline.registry))
            continue
        try:
            yaml_document = load_yaml_file(spec.path)
            if not spec.named and not declares_rigcheck(yaml_document):
                continue  # other YAML that mentions rigcheck's apiVersion in a string
            documents[_key(spec.path)] = spec_from_yaml(yaml_document, kind=spec.kind)
        except SpecError as exc:
            findings.extend(_problem_findings(exc.problems, pipeline.registry))
    load_ms = (time.perf_counter() - started) * 1000
    loader = _Loader(documents, pipeline, findings)
    rigs = [doc for doc in list(documents.values()) if doc.kind == "Rig"]
    runs = [_Run(rig, None) for rig in rigs]
    seen_pairs: set[tuple[int, int]] = set()
    for rig, workload in loader.pairs():
        if (id(rig), id(workload)) not in seen_pairs:
            seen_pairs.add((id(rig), id(workload)))
            runs.append(_Run(rig, workload))
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
    checked_started = time.perf_counter()
    broken: set[str] = set()
    options = pipeline.options
    totals = _Totals()
    collecting = gc.isenabled()
    gc.disable()  # the runs make few reference cycles; generation-0 passes over their findings cost 8%
    try:
        _check_runs(runs, pipeline, options, totals, broken, findings)
    finally:
        if collecting:
            gc.enable()
    check_ms = (time.perf_counter() - checked_started) * 1000
    all_documents = list(documents.values())
    active: dict[str, set[str]] = {}
    codes_of: dict[frozenset[str], set[str]] = {}
    for run in runs:
        if run.ran not in codes_of:
            codes_of[run.ran] = {
                code for code, entry in pipeline.registry.rules.items() if entry.checker in run.ran
            }
        for path in (run.rig.path, run.workload.path if run.workload is not None else None):
            if path is not None:
                active.setdefault(path, set()).update(codes_of[run.ran])
    everything = findings + [finding for run in runs for finding in run.findings]
    everything = [finding for finding in everything if options.selected(finding.code)]
    finished = pipeline.finish(everything, all_documents, active)
    records = _records(runs, finished)
    return _report(_dedupe(finished), records, runs, totals, all_documents, pipeline, load_ms, check_ms)


def _check_runs(
    runs: Sequence[_Run],
    pipeline: Pipeline,
    options: RunOptions,
    totals: _Totals,
    broken: set[str],
    findings: list[Finding],
) -> None:
    """Check each run in order; a spec that turns out broken is reported once and its runs skipped.

    With ``pipeline.jobs`` > 1 the runs are checked in forked worker processes first
    (:func:`_checked_in_workers`); their outcomes are then taken here in run order, exactly as if they
    had been checked here, and a run without one (a worker that died) is checked here."""
    pair_options = replace(options, skip_rig_only=True)
    done = _checked_in_workers(runs, pipeline, options, pair_options)
    for index, run in enumerate(runs):
        if run.rig.path in broken or (run.workload is not None and run.workload.path in broken):
            continue
        outcome = done.get(index)
        if outcome is None:
            outcome = _check_one(run, pipeline, options, pair_options)
        produced, statuses, problems = outcome
        if problems is not None:  # an unknown GPU, a bad model preset: reported once, at its line
            broken.update(problem.file for problem in problems)
            findings.extend(_problem_findings(problems, pipeline.registry))
            continue
        run.findings = [finding.with_changes(run=index) for finding in produced]
        run.ran, run.left = totals.add(statuses)


#: One run checked: its findings and checker statuses, or the problems of a spec it found broken.
_Outcome = tuple[list[Finding], list[CheckerStatus], list[Problem] | None]


def _check_one(run: _Run, pipeline: Pipeline, options: RunOptions, pair_options: RunOptions) -> _Outcome:
    try:
        _, produced, statuses = check_all(
            run.rig,
            run.workload,
            pipeline.registry,
            pipeline.catalog,
            pair_options if run.workload is not None else options,
        )
    except SpecError as exc:
        return [], [], list(exc.problems)
    return produced, statuses, None


#: Fewer runs than this many per job are checked in-process: forking and sending findings back costs
#: more than it saves.
RUNS_PER_JOB = 2


def worker_count(jobs: int, runs: int, *, isolate_plugins: bool = False) -> int:
    """How many worker processes ``rigcheck lint --jobs JOBS`` uses for ``runs`` runs; 0: none, every
    run is checked in this process (the ``--jobs 1`` path).

    Workers are forked (they inherit the loaded plugins, catalog and settings, nothing is imported
    again), so there are none where ``fork`` is not a start method (Windows) or not a safe one (macOS,
    where ``spawn`` is the default and would import everything again), none from a process that runs
    other threads (forking one can deadlock; rigcheck's idle plugin watchdog is fine), none with
    ``--isolate-plugins`` (which forks per checker already), and none for fewer than
    :data:`RUNS_PER_JOB` runs per job."""
    if jobs <= 1 or isolate_plugins or runs < RUNS_PER_JOB * jobs:
        return 0
    if sys.platform in ("win32", "darwin") or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    from rigcheck.core.sandbox import safe_to_fork

    return jobs if safe_to_fork() else 0


#: What forked workers inherit: the runs, the pipeline and the two run options (set only while they run).
_INHERITED: tuple[Sequence[_Run], Pipeline, RunOptions, RunOptions] | None = None


def _check_slice(start: int, stop: int) -> _Packed:
    """In a worker: check runs[start:stop] of the inherited lint run, packed to be sent back."""
    assert _INHERITED is not None
    runs, pipeline, options, pair_options = _INHERITED
    return _pack([_check_one(runs[index], pipeline, options, pair_options) for index in range(start, stop)])


#: Outcomes as plain tuples (a finding's field values, its location's, each index into a table of
#: field sets; a status's slots): pickling them costs half of pickling the models.
_Packed = tuple[list[frozenset[str]], list[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], Any]]]
_FIELDS = tuple(Finding.model_fields)
_LOCATION_FIELDS = tuple(Location.model_fields)


def _pack(outcomes: Sequence[_Outcome]) -> _Packed:
    sets: dict[frozenset[str], int] = {}

    def index(fields: set[str]) -> int:
        return sets.setdefault(frozenset(fields), len(sets))

    packed = []
    for produced, statuses, problems in outcomes:
        rows = []
        for finding in produced:
            values = finding.__dict__
            location = values["location"]
            where = (
                None
                if location is None
                else (
                    tuple(location.__dict__[name] for name in _LOCATION_FIELDS),
                    index(location.model_fields_set),
                )
            )
            rows.append(
                (
                    tuple(where if name == "location" else values[name] for name in _FIELDS),
                    index(finding.model_fields_set),
                )
            )
        states = [(s.name, s.plugin, s.status, s.findings, s.duration_ms, s.reason) for s in statuses]
        packed.append((rows, states, problems))
    return list(sets), packed


def _unpack(packed: _Packed) -> list[_Outcome]:
    sets, outcomes = packed
    out: list[_Outcome] = []
    for rows, states, problems in outcomes:
        produced = []
        for values, fields in rows:
            finding = dict(zip(_FIELDS, values, strict=True))
            where = finding["location"]
            if where is not None:
                finding["location"] = restore(
                    Location, dict(zip(_LOCATION_FIELDS, where[0], strict=True)), set(sets[where[1]])
                )
            produced.append(restore(Finding, finding, set(sets[fields])))
        out.append((produced, [CheckerStatus(*state) for state in states], problems))
    return out


def _checked_in_workers(
    runs: Sequence[_Run], pipeline: Pipeline, options: RunOptions, pair_options: RunOptions
) -> dict[int, _Outcome]:
    """Run index -> its outcome, for the runs checked in worker processes (:func:`worker_count`).

    The runs go out in slices, in order; a slice whose worker died or whose outcome could not be sent
    back is missing, and :func:`_check_runs` checks those runs in this process (a checker that raises
    is an ENGINE finding inside the worker, as here)."""
    workers = worker_count(pipeline.jobs, len(runs), isolate_plugins=pipeline.isolate_plugins)
    if not workers:
        return {}
    from concurrent.futures import Future, ProcessPoolExecutor

    global _INHERITED
    done: dict[int, _Outcome] = {}
    # The first rig alone and the first pair here: the checker modules they import and the caches they
    # fill are then inherited, not built again in each worker.
    first_pair = next((index for index, run in enumerate(runs) if run.workload is not None), None)
    for index in sorted({0} if first_pair is None else {0, first_pair}):
        done[index] = _check_one(runs[index], pipeline, options, pair_options)
    rest = [index for index in range(len(runs)) if index not in done]
    size = max(1, -(-len(rest) // (workers * 8)))
    slices: list[tuple[int, int]] = []
    for index in rest:  # contiguous ranges of the runs left, at most size long
        if slices and slices[-1][1] == index and index - slices[-1][0] < size:
            slices[-1] = (slices[-1][0], index + 1)
        else:
            slices.append((index, index + 1))
    _INHERITED = (runs, pipeline, options, pair_options)
    for stream in (sys.stdout, sys.stderr):  # a child flushes what it inherited: nothing must be waiting
        stream.flush()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            futures: list[Future[_Packed]] = [pool.submit(_check_slice, *part) for part in slices]
            for (start, _), future in zip(slices, futures, strict=True):
                try:
                    outcomes = _unpack(future.result())
                except Exception:  # a dead worker, an outcome that would not pickle
                    continue
                done.update(enumerate(outcomes, start))
    except OSError:  # no processes to be had: whatever came back stands, the rest is checked here
        pass
    finally:
        _INHERITED = None
    return done


class _Totals:
    """Each checker's status over all runs, added up as the runs end (no per-run records kept)."""

    def __init__(self) -> None:
        self.checkers: dict[str, CheckerStatus] = {}
        self._sets: dict[frozenset[str], frozenset[str]] = {}

    def add(self, statuses: Sequence[CheckerStatus]) -> tuple[frozenset[str], frozenset[str]]:
        """Add one run's statuses; the names of its checkers that ran, and of those it left to the rig."""
        checkers = self.checkers
        for checker in statuses:
            known = checkers.get(checker.name)
            if known is None:
                checkers[checker.name] = CheckerStatus(
                    checker.name,
                    checker.plugin,
                    checker.status,
                    checker.findings,
                    checker.duration_ms,
                    checker.reason,
                )
                continue
            status = "ran" if "ran" in (known.status, checker.status) else known.status
            if "crashed" in (known.status, checker.status) or "timed-out" in (known.status, checker.status):
                status = known.status if known.status in ("crashed", "timed-out") else checker.status
            known.reason = known.reason if status == known.status else checker.reason
            known.status = status
            known.findings += checker.findings
            known.duration_ms = round(known.duration_ms + checker.duration_ms, 3)
        ran = frozenset(checker.name for checker in statuses if checker.status == "ran")
        left = frozenset(checker.name for checker in statuses if checker.reason == RIG_ONLY)
        return self._sets.setdefault(ran, ran), self._sets.setdefault(left, left)


class _Loader:
    """Resolves runs_on entries and config pairs to loaded specs (loading files outside the scan)."""

    def __init__(
        self, documents: dict[str, SpecDocument], pipeline: Pipeline, findings: list[Finding]
    ) -> None:
        self.documents = documents
        self.pipeline = pipeline
        self.findings = findings
        self.refused: set[tuple[str | None, str | None]] = set()

    def pairs(self) -> list[tuple[SpecDocument, SpecDocument]]:
        out: list[tuple[SpecDocument, SpecDocument]] = []
        for workload in [doc for doc in list(self.documents.values()) if doc.kind == "Workload"]:
            for index, entry in enumerate(workload.model.runs_on or ()):
                where = workload.locate(f"/runs_on/{index}")
                rig = self.resolve(entry, "Rig", Path(workload.path).resolve().parent, where)
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
            sides: dict[str, list[SpecDocument]] = {"Rig": [], "Workload": []}
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

    def resolve(self, entry: str, kind: str, folder: Path, where: Location) -> SpecDocument | None:
        found = self.resolve_many(entry, kind, folder, where)
        return found[0] if found else None

    def resolve_many(self, entry: str, kind: str, folder: Path, where: Location) -> list[SpecDocument]:
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
            out = []
            for path in paths:
                reason = outside_reason(path)
                if reason is not None:
                    self._outside(entry, reason, where)
                elif (doc := self._load(path, kind)) is not None:
                    out.append(doc)
            return out
        by_name = [
            doc
            for doc in self.documents.values()
            if doc.kind == kind and entry in (doc.name, Path(doc.path).stem)
        ]
        if by_name:
            return by_name[:1]
        from rigcheck.core.specs_index import shipped_specs

        shipped = shipped_specs(kind).get(entry)
        return [doc] if shipped is not None and (doc := self._load(str(shipped), kind)) is not None else []

    def _load(self, path: str, kind: str) -> SpecDocument | None:
        if not os.path.isfile(path):
            return None
        key = _key(path)
        if key not in self.documents:
            display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
            try:
                self.documents[key] = load_spec(display, kind=kind)
            except SpecError as exc:
                self.findings.extend(_problem_findings(exc.problems, self.pipeline.registry))
                return None
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

    def _unknown(self, entry: str, kind: str, where: Location, subject: str) -> None:
        from rigcheck.core.fields import did_you_mean

        names = sorted({doc.name for doc in self.documents.values() if doc.kind == kind})
        self.findings.append(
            _own(
                UNKNOWN_RIG.failed(
                    f"{entry!r} matches no {kind.lower()} file or name{did_you_mean(entry, names)}",
                    location=where,
                    subject=subject,
                    fix=f"name a {kind.lower()} file (relative to the spec) or a {kind.lower()} name: "
                    + (", ".join(names[:8]) or "none scanned"),
                )
            )
        )


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


def _dedupe(findings: Sequence[Finding]) -> list[Finding]:
    """A rig's own findings come out of its alone run and of each pair; keep the first of each."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for finding in findings:
        location = finding.location
        key = (
            finding.code,
            finding.severity,
            finding.message,
            location.file if location else None,
            location.pointer if location else None,
        )
        if key in seen:
            continue
        seen.add(key)
        out.append(finding)
    return out


def _records(runs: Sequence[_Run], findings: Sequence[Finding]) -> list[RunRecord]:
    """Each run's verdict and counts. A pair's include its rig's findings from the checkers it left to
    the rig's own run (rig-only checkers), so a pair is never reported better than its rig."""
    by_run: dict[int, list[Finding]] = {}
    for finding in findings:
        if finding.run is not None:
            by_run.setdefault(finding.run, []).append(finding)
    alone = {id(run.rig): index for index, run in enumerate(runs) if run.workload is None}
    records = []
    for index, run in enumerate(runs):
        own = by_run.get(index, [])
        if run.workload is not None and id(run.rig) in alone:
            left = run.left
            own = own + [f for f in by_run.get(alone[id(run.rig)], []) if f.checker in left]
        records.append(
            RunRecord(
                subject=run.subject,
                rig=run.rig.path,
                workload=run.workload.path if run.workload else None,
                verdict=verdict_of(own).value,
                summary=summarize(own),
            )
        )
    return records


def _report(
    findings: list[Finding],
    records: list[RunRecord],
    runs: Sequence[_Run],
    totals: _Totals,
    documents: Sequence[SpecDocument],
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
        checkers=[checker.record() for checker in totals.checkers.values()],
        runs=records,
        plugins=pipeline.registry.plugins,
        load_ms=load_ms,
        check_ms=check_ms,
    )


def _own(finding: Finding) -> Finding:
    return finding.with_changes(checker="lint", plugin="rigcheck")


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))
