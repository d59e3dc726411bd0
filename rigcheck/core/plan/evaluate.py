"""The full rule set on each candidate, in process, with one registry and catalog for all.

The workload runs as it would on the candidate: a training job's data-parallel degree becomes the
candidate's GPUs / (tp x pp x cp) (what one changes when the hardware changes; ZeRO/FSDP shards shrink
with it); a serve that does not fit one GPU is split over the candidate's GPUs with the tensor- or
pipeline-parallel degree MEM001's fix search found to fit (the smallest; the rules then run again on
the changed workload), and ``--deadline`` becomes ``run.hours``, which BW003 judges. What a candidate yields is read
from the findings: the verdict, the deciding failure, the run time (BW003) or serving speed (BW001) and
the sustained power (PWR001)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rigcheck.core.engine.engine import RunOptions, run_checks
from rigcheck.core.engine.errors import SpecError
from rigcheck.core.engine.findings import Finding, Severity, worst
from rigcheck.core.plan.candidates import Candidate
from rigcheck.core.spec.documents import SpecDocument, parse_spec
from rigcheck.core.spec.yaml_writer import dump_yaml

#: What counts against a part when sizing (a rule that cannot be checked does not).
_AGAINST = (Severity.WARN, Severity.FAIL)

#: The rules that decide whether a job fits its GPUs: a failure here is what more nodes could fix.
MEMORY_RULES = ("MEM001", "MEM002")


@dataclass
class Outcome:
    """What the rules said of one candidate."""

    candidate: Candidate
    verdict: str
    failures: list[Finding]
    warnings: list[str]
    hours: dict[str, float] | None = None
    tokens_per_second: float | None = None
    run_tokens: float | None = None
    sustained_w: float | None = None
    dp: int = 1
    notes: list[str] = field(default_factory=list)

    @property
    def passes(self) -> bool:
        return self.verdict != "fail"

    @property
    def deciding(self) -> Finding | None:
        """The failure that decides: a memory one first (more GPUs fix it), else the first."""
        memory = [f for f in self.failures if f.code in MEMORY_RULES]
        ordered = memory or self.failures
        return ordered[0] if ordered else None

    @property
    def fails_on_memory(self) -> bool:
        return any(f.code in MEMORY_RULES for f in self.failures)


class Evaluator:
    """Runs the rules on candidates; workload variants (by data-parallel degree) are built once."""

    def __init__(
        self,
        workload: SpecDocument,
        registry: Any,
        catalog: Any,
        *,
        deadline_hours: float | None = None,
        scale_data_parallel: bool = True,
    ) -> None:
        self.workload = workload
        self.registry = registry
        self.catalog = catalog
        self.deadline_hours = deadline_hours
        self.scale = scale_data_parallel and workload.model.task != "inference"
        self.spread = scale_data_parallel and workload.model.task == "inference"
        self._variants: dict[tuple[int, tuple[tuple[str, int], ...]], SpecDocument] = {}
        self.checks = 0

    @property
    def model_parallel(self) -> int:
        p = self.workload.model.parallelism
        return max(1, p.tp * p.pp * p.cp) if p is not None else 1

    def dp_for(self, gpus: int) -> int:
        p = self.workload.model.parallelism
        declared = p.dp if p is not None else 1
        return max(1, gpus // self.model_parallel) if self.scale else declared

    def workload_for(self, dp: int, parallel: tuple[tuple[str, int], ...] = ()) -> SpecDocument:
        """The workload with data-parallel degree ``dp`` (when scaled) and the ``parallel`` degrees
        (``(("tp", 4),)``) set."""
        key = (dp, parallel)
        if key not in self._variants:
            data = copy.deepcopy(dict(self.workload.yaml.data))
            if self.scale:
                data.setdefault("parallelism", {})["dp"] = dp
            for name, degree in parallel:
                data.setdefault("parallelism", {})[name] = degree
            if self.deadline_hours is not None:
                data.setdefault("run", {})["hours"] = self.deadline_hours
            unchanged = not self.scale and not parallel and self.deadline_hours is None
            self._variants[key] = (
                self.workload
                if unchanged
                else parse_spec(dump_yaml(data), self.workload.path, kind="Workload")
            )
        return self._variants[key]

    def judge(self, candidate_rig: dict[str, Any], gpus: int, codes: tuple[str, ...]) -> Severity:
        """The worst the rules ``codes`` say of ``candidate_rig`` (for sizing parts): pass, warn or fail."""
        report = self._run(candidate_rig, gpus, RunOptions(select=codes))
        return worst([f.severity for f in report.findings if f.counts and f.severity in _AGAINST])

    def evaluate(self, candidate: Candidate) -> Outcome:
        outcome = self._evaluate(candidate, ())
        spread = self._spread(outcome) if self.spread else ()
        if spread:
            split = self._evaluate(candidate, spread)
            degrees = ", ".join(f"{name} {degree}" for name, degree in spread)
            split.notes.append(
                f"served with {degrees} over its GPUs: the smallest split MEM001 found to fit one GPU's memory"
            )
            return split
        return outcome

    def _evaluate(self, candidate: Candidate, parallel: tuple[tuple[str, int], ...]) -> Outcome:
        dp = self.dp_for(candidate.gpus)
        try:
            report = self._run(candidate.rig, candidate.gpus, RunOptions(), parallel)
        except SpecError as error:  # a candidate rigcheck cannot express: said, never a crash
            return Outcome(candidate, "fail", [], [], dp=dp, notes=[f"not a valid rig: {error}"])
        counted = [f for f in report.findings if f.counts]
        outcome = Outcome(
            candidate=candidate,
            verdict=report.verdict,
            failures=[f for f in counted if f.severity is Severity.FAIL],
            warnings=sorted({f.code for f in counted if f.severity is Severity.WARN}),
            dp=dp,
        )
        for finding in counted:
            evidence = finding.evidence
            if finding.code == "BW003":
                outcome.hours = evidence.get("run_hours")
                outcome.run_tokens = evidence.get("run_tokens")
                speed = evidence.get("tokens_per_second")
                outcome.tokens_per_second = speed.get("default") if isinstance(speed, dict) else None
            elif finding.code == "BW001" and outcome.tokens_per_second is None:
                speed = evidence.get("aggregate_tokens_per_second")
                outcome.tokens_per_second = speed.get("default") if isinstance(speed, dict) else None
            elif finding.code == "PWR001" and "sustained_w" in evidence:
                outcome.sustained_w = (outcome.sustained_w or 0.0) + float(evidence["sustained_w"])
        return outcome

    @staticmethod
    def _spread(outcome: Outcome) -> tuple[tuple[str, int], ...]:
        """The tensor/pipeline-parallel split that MEM001's fix search found to fit on this candidate
        (its fixes are verified by estimating the changed workload; the smaller degree comes first), when
        the serve as written fails MEM001 and such a split is among them; else ()."""
        for finding in outcome.failures:
            if finding.code != "MEM001":
                continue
            for fix in finding.evidence.get("fixes", ()):
                changes = fix.get("changes", {})
                if changes and set(changes) <= {"tp", "pp"}:
                    return tuple(sorted((name, int(degree)) for name, degree in changes.items()))
        return ()

    def _run(
        self, rig: dict[str, Any], gpus: int, options: RunOptions, parallel: tuple[tuple[str, int], ...] = ()
    ) -> Any:
        self.checks += 1
        rig_doc = parse_spec(dump_yaml(rig), f"<plan:{rig['name']}>", kind="Rig")
        workload = self.workload_for(self.dp_for(gpus), parallel)
        return run_checks(rig_doc, workload, self.registry, self.catalog, options)


def judge_for(evaluator: Evaluator) -> Callable[[dict[str, Any], tuple[str, ...]], Severity]:
    """The sizing judge of :mod:`rigcheck.core.plan.sizing` for this workload."""

    def judge(rig: dict[str, Any], codes: tuple[str, ...]) -> Severity:
        node = rig["nodes"][0]
        gpus = int(node["gpus"]["count"]) * int(node.get("count", 1))
        return evaluator.judge(rig, gpus, codes)

    return judge
