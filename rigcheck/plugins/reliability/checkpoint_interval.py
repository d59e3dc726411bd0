"""REL003: the checkpoint interval against Young's optimum (docs/research/rules_facts.md REL-4, REL-5).

Young (1974): ``tau = sqrt(2 delta M)`` minimises the time lost to writing checkpoints (delta each)
plus the work redone after failures (mean time between them M). Daly (2006) refines it with
higher-order terms; both are reported. The expected share of the run lost at an interval ``I`` is
``delta / I + (I / 2 + R) / M`` with restart time ``R``.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import checkpoint_plan, run_hours
from rigcheck.core.estimate.reliability import (
    failure_rate,
    job_mtbf_hours,
    lost_fraction,
    young_daly_tau,
    young_tau,
)
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import duration, fmt

INTERVAL = Rule(
    code="REL003",
    name="checkpoint-interval-far-from-optimum",
    summary="The checkpoint interval is far from Young's optimum and that costs a noticeable share of the run",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Takes the checkpoint write time delta (size / write rate, as STO004) and the job's MTBF M (REL002), "
        "computes Young's optimum `tau = sqrt(2 delta M)` (and Daly's refinement), and the expected share of the "
        "run lost, `delta / I + (I / 2 + R) / M` (restart time R: `run.restart_minutes`, default "
        "{facts:reliability.checkpoint_interval.restart_minutes}). Warns when "
        "`run.checkpoint_interval_min` is above "
        "{facts:reliability.checkpoint_interval.warn_outside_factor:g} tau or below tau / "
        "{facts:reliability.checkpoint_interval.warn_outside_factor:g} and that interval loses at least "
        "{facts:reliability.checkpoint_interval.negligible_loss_fraction:.1%} more "
        "of the run than tau would; warns when no interval is set for a run longer than tau.",
        why="Checkpoint too rarely and each failure throws away hours of work; too often and the writes eat the "
        "run. The optimum is flat, so an interval within a factor of two of tau, or one whose extra cost is "
        "negligible, is fine. At Llama 3 scale (M = 3.1 h) a 1-minute write gives tau = 19 min. The failure prior "
        "counts hardware interruptions; shorter intervals also guard against crashes and preemption.",
        example="```yaml\n# 16,384 GPUs (M = 3.1 h), 1-minute checkpoint writes\n"
        "run: {checkpoint_interval_min: 60}   # "
        "tau = 19 min; 23% of the run lost instead of 16%: REL003\n```",
        fix="Set `run.checkpoint_interval_min` near tau; if tau is short because writes are slow, speed them up "
        "(asynchronous or sharded checkpoints, faster storage).",
        references=(
            "Young, A first order approximation to the optimum checkpoint interval, CACM 17(9), 1974",
            "Daly, A higher order estimate of the optimum checkpoint interval for restart dumps, FGCS 22(3), 2006",
            "https://github.com/stas00/ml-engineering/blob/master/training/fault-tolerance/README.md",
        ),
    ),
)


class CheckpointIntervalChecker(WorkloadOnRigChecker):
    name = "reliability.checkpoint-interval"
    rules = (INTERVAL,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        run = workload.run
        where = ctx.workload_at(
            "/run/checkpoint_interval_min" if run and run.checkpoint_interval_min else "/run"
        )
        if workload.task == "inference":
            yield INTERVAL.passed(
                "inference: no training state to checkpoint", location=where, subject=ctx.subject
            )
            return
        plan = checkpoint_plan(ctx, ctx.facts("storage"))
        if plan is None or plan.write_seconds is None:
            yield INTERVAL.skipped(
                "checkpoint write time unknown (no training run, checkpoint storage or write rate)",
                location=where,
                subject=ctx.subject,
            )
            return
        facts = ctx.facts("reliability")
        rate, rate_how = failure_rate(workload, facts)
        gpus = workload.parallelism.world_size
        mtbf_s = job_mtbf_hours(rate, gpus) * 3600
        delta = plan.write_seconds
        tau, tau_daly = young_tau(delta, mtbf_s), young_daly_tau(delta, mtbf_s)
        table = facts["checkpoint_interval"]
        restart_s = (
            float(run.restart_minutes if run and run.restart_minutes else table["restart_minutes"]) * 60
        )
        factor, negligible = float(table["warn_outside_factor"]), float(table["negligible_loss_fraction"])
        loss_at_tau = lost_fraction(tau, delta, mtbf_s, restart_s)
        basis = (
            f"write {duration(delta)} (STO004), job MTBF {fmt(mtbf_s / 3600, 1)} h "
            f"({gpus} GPU{'s' if gpus != 1 else ''}, {rate_how}): "
            f"tau = sqrt(2 x {delta:.3g} s x {fmt(mtbf_s, 0)} s) = {duration(tau)} (Daly {duration(tau_daly)})"
        )
        evidence = {
            "write_seconds": round(delta, 2),
            "mtbf_seconds": round(mtbf_s),
            "failure_rate_per_gpu_hour": rate,
            "gpus": gpus,
            "tau_young_seconds": round(tau, 1),
            "tau_daly_seconds": round(tau_daly, 1),
            "restart_seconds": restart_s,
            "lost_fraction_at_tau": round(loss_at_tau, 5),
            "window": [round(tau / factor, 1), round(tau * factor, 1)],
            "negligible_loss": negligible,
            **table.cite(),
        }
        interval_s = run.checkpoint_interval_min * 60 if run and run.checkpoint_interval_min else None
        if interval_s is None:
            hours, hours_how = run_hours(ctx)
            if hours is not None and hours * 3600 > tau:
                yield INTERVAL.warned(
                    f"no checkpoint interval set for a {fmt(hours, 1)} h run ({hours_how}); {basis}",
                    location=where,
                    evidence=evidence,
                    subject=ctx.subject,
                    fix=f"checkpoint about every {duration(tau)}",
                )
            else:
                yield INTERVAL.passed(
                    f"no checkpoint interval set; {basis}",
                    location=where,
                    evidence=evidence,
                    subject=ctx.subject,
                )
            return
        loss = lost_fraction(interval_s, delta, mtbf_s, restart_s)
        evidence.update(interval_seconds=interval_s, lost_fraction=round(loss, 5))
        told = (
            f"every {fmt(interval_s / 60, 1)} min against tau {duration(tau)}; {basis}; expected loss "
            f"{loss:.2%} of the run (at tau: {loss_at_tau:.2%})"
        )
        outside = interval_s > factor * tau or interval_s < tau / factor
        excess = loss - loss_at_tau
        evidence["excess_lost_fraction"] = round(excess, 5)
        if outside and excess >= negligible:
            often = interval_s < tau / factor
            yield INTERVAL.warned(
                told,
                location=where,
                evidence=evidence,
                subject=ctx.subject,
                fix=f"checkpoint about every {duration(tau)}"
                + (
                    ", or make writes faster (keep a shorter interval if crashes or preemption are likely)"
                    if often
                    else ""
                ),
            )
        elif outside:
            yield INTERVAL.passed(
                f"{told}: outside [tau/{factor:g}, {factor:g} tau], but within {negligible:.1%} of the run of "
                "the optimum",
                location=where,
                evidence=evidence,
                subject=ctx.subject,
            )
        else:
            yield INTERVAL.passed(told, location=where, evidence=evidence, subject=ctx.subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CheckpointIntervalChecker())
