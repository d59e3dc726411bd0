"""REL002: how often a job of this size is interrupted, against its checkpoints
(docs/research/rules_facts.md REL-1, REL-2).

``MTBF_job = 1 / (lambda x GPUs)``: with Llama 3's 1.97e-5 interruptions per GPU-hour, 8 GPUs run
about 6,300 h between interruptions, 1,024 GPUs 49 h, 16,384 GPUs 3.1 h.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import run_hours
from rigcheck.core.estimate.reliability import failure_rate, job_mtbf_hours
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

MTBF = Rule(
    code="REL002",
    name="interruptions-expected-without-checkpoints",
    summary="The run is likely to be interrupted and the workload sets no checkpoint interval",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Computes the job's mean time between interruptions, `M = 1 / (lambda x GPUs)` (lambda per GPU-hour: "
        "1.97e-5 from Llama 3, 8.1e-5 with `run.failure_prior: pessimistic`, or `run.failure_rate_per_gpu_hour`), "
        "and the interruptions expected in the run, `hours / M`. Without `run.checkpoint_interval_min`: fail at "
        "{facts:reliability.job_mtbf.fail_expected_interruptions:g} or more, warn at "
        "{facts:reliability.job_mtbf.warn_expected_interruptions:g} or more. With checkpoints it passes and "
        "reports the numbers (REL003 judges the "
        "interval).",
        why="Interruptions scale with the GPU count: Llama 3 saw one every 3 hours on 16,384 H100s, OPT-175B two "
        "machines a day on 1,024 A100s. A run without checkpoints restarts from zero after each.",
        example="```yaml\nparallelism: {dp: 1024}\n"
        "run: {hours: 240}   # M = 49.6 h, 4.8 interruptions expected: REL002\n```",
        fix="Checkpoint periodically (`run.checkpoint_interval_min`; REL003 suggests the interval), and make "
        "restarts automatic.",
        references=(
            "Llama 3 paper arXiv:2407.21783 section 3.3.4, Table 5",
            "https://github.com/facebookresearch/metaseq/blob/main/projects/OPT/chronicles/final_update.md",
            "https://github.com/stas00/ml-engineering/blob/master/training/fault-tolerance/README.md",
        ),
    ),
)


class JobMtbfChecker(WorkloadOnRigChecker):
    name = "reliability.job-mtbf"
    rules = (MTBF,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        where = ctx.workload_at("/run")
        if workload.task == "inference":
            yield MTBF.passed("inference: no training state to lose", location=where, subject=ctx.subject)
            return
        facts = ctx.facts("reliability")
        rate, rate_how = failure_rate(workload, facts)
        gpus = workload.parallelism.world_size
        mtbf = job_mtbf_hours(rate, gpus)
        hours, hours_how = run_hours(ctx)
        if hours is None:
            yield MTBF.skipped(
                f"job MTBF {fmt(mtbf, 0)} h on {gpus} GPUs; the run's length is unknown",
                location=where,
                subject=ctx.subject,
                fix="add run.hours",
            )
            return
        expected = hours / mtbf
        thresholds = facts["job_mtbf"]
        warn, fail = (
            float(thresholds["warn_expected_interruptions"]),
            float(thresholds["fail_expected_interruptions"]),
        )
        interval = workload.run.checkpoint_interval_min if workload.run else None
        evidence = {
            "failure_rate_per_gpu_hour": rate,
            "rate_from": rate_how,
            "gpus": gpus,
            "job_mtbf_hours": round(mtbf, 2),
            "run_hours": round(hours, 2),
            "run_hours_from": hours_how,
            "expected_interruptions": round(expected, 3),
            "checkpoint_interval_min": interval,
            **facts["failure_rate"].cite(),
        }
        told = (
            f"job MTBF 1 / ({rate:g} x {gpus} GPU{'s' if gpus != 1 else ''}) = {fmt(mtbf, 1)} h ({rate_how}); "
            f"a {fmt(hours, 1)} h run ({hours_how}) expects {expected:.2g} interruptions"
        )
        if interval:
            yield MTBF.passed(
                f"{told}, with a checkpoint every {fmt(interval)} min",
                location=where,
                evidence=evidence,
                subject=ctx.subject,
            )
            return
        fix = "set run.checkpoint_interval_min (REL003 gives the optimum) and restart automatically"
        severity = MTBF.graded(expected, warn_at=warn, fail_at=fail, inclusive=True)
        if severity is Severity.FAIL:
            yield MTBF.failed(
                f"{told} and no checkpoint interval is set",
                location=where,
                evidence=evidence,
                fix=fix,
                subject=ctx.subject,
            )
        elif severity is Severity.WARN:
            chance = 1 - math.exp(-expected)
            yield MTBF.warned(
                f"{told} (a {chance:.0%} chance of at least one) and no checkpoint interval is set",
                location=where,
                evidence=evidence,
                fix=fix,
                subject=ctx.subject,
            )
        else:
            yield MTBF.passed(
                f"{told}; no checkpoint interval set", location=where, evidence=evidence, subject=ctx.subject
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(JobMtbfChecker())
