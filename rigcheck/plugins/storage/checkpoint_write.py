"""STO004: checkpoint write time against the checkpoint interval (docs/research/rules_facts.md STO-4, STO-5)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import checkpoint_plan
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import duration, fmt

WRITE_OVERHEAD = Rule(
    code="STO004",
    name="checkpoint-write-overhead-high",
    summary="Writing each checkpoint takes a large share of the checkpoint interval",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Estimates a checkpoint's size (full restartable: "
        "{facts:storage.checkpoint.full_bytes_per_param} B/param for weights, fp32 master copy and Adam "
        "moments; weights only: {facts:storage.checkpoint.weights_only_bytes_per_param} B/param; LoRA: "
        "{facts:storage.checkpoint.adapter_bytes_per_param} B per adapter parameter), its write time on the "
        "checkpoint device (`write_mb_s` x count; gp3 at 125 MiB/s unless provisioned; node-local disks of "
        "several nodes write their shards in parallel), and compares write time with "
        "`run.checkpoint_interval_min`: warn above {facts:storage.checkpoint.warn_above_overhead:.0%}, fail "
        "above {facts:storage.checkpoint.fail_above_overhead:.0%}.",
        why="Training stops (or slows) while a checkpoint is written. A 7B model's 98 GB checkpoint takes 12.5 "
        "minutes to a gp3 volume at baseline, 14 s to one Gen4 NVMe; BLOOM spent 0.37% of its time writing "
        "checkpoints, and at 2% the cost is 'quite significant'.",
        example="```yaml\nstorage: [{name: ckpt, kind: cloud-volume, volume_type: gp3}]\n"
        "run: {checkpoint_interval_min: "
        "30}   # 7B full: 12.5 min of every 30: STO004 fail\n```",
        fix="Faster checkpoint storage (local NVMe, provisioned throughput), asynchronous checkpointing, sharded "
        "checkpoints written by every node, weights-only checkpoints between full ones, or a longer interval.",
        references=(
            "https://github.com/stas00/ml-engineering/blob/master/training/fault-tolerance/README.md",
            "ZeRO, arXiv:1910.02054 (16 B/param of training state; 12-14 B/param in a checkpoint)",
        ),
    ),
)


class CheckpointWriteChecker(WorkloadOnRigChecker):
    name = "storage.checkpoint-write"
    rules = (WRITE_OVERHEAD,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        facts = ctx.facts("storage")
        plan = checkpoint_plan(ctx, facts)
        where = ctx.workload_at("/run/checkpoint_interval_min")
        if workload.task == "inference":
            yield WRITE_OVERHEAD.passed(
                "inference: no checkpoints written", location=where, subject=ctx.subject
            )
            return
        if plan is None:
            yield WRITE_OVERHEAD.skipped(
                "no training run, or no storage declared for checkpoints", location=where, subject=ctx.subject
            )
            return
        table = facts["checkpoint"]
        warn, fail = float(table["warn_above_overhead"]), float(table["fail_above_overhead"])
        related = [ctx.rig_at(plan.rates.pointer)]
        evidence = {
            "checkpoint_bytes": plan.bytes,
            "size_from": plan.size_how,
            "device": plan.rates.label,
            "write_mb_s": plan.rates.write_mb_s,
            "rates_from": plan.rates.how,
            "parallel_writers": plan.writers,
            "write_seconds": round(plan.write_seconds, 1) if plan.write_seconds else None,
            "interval_seconds": plan.interval_seconds,
            "overhead": round(plan.overhead, 4) if plan.overhead else None,
            "warn_above": warn,
            "fail_above": fail,
            **table.cite(),
        }
        size = f"{fmt(plan.bytes / 1e9, 2)} GB checkpoint ({plan.size_how})"
        write_mb_s = plan.rates.write_mb_s
        if plan.write_seconds is None or write_mb_s is None:  # a write time needs a write rate
            yield WRITE_OVERHEAD.skipped(
                f"{size}: write rate of {plan.rates.label} unknown",
                location=where,
                related=related,
                evidence=evidence,
                subject=ctx.subject,
                fix="add write_mb_s to the checkpoint storage",
            )
            return
        writers = f" by {plan.writers} nodes in parallel" if plan.writers > 1 else ""
        told = (
            f"{size} written to {plan.rates.label} at {fmt(write_mb_s, 0)} MB/s{writers}: "
            f"{duration(plan.write_seconds)}"
        )
        overhead, interval = plan.overhead, plan.interval_seconds
        if overhead is None or interval is None:  # an overhead needs an interval
            yield WRITE_OVERHEAD.skipped(
                f"{told}; run.checkpoint_interval_min not given",
                location=where,
                related=related,
                evidence=evidence,
                subject=ctx.subject,
            )
            return
        told += f" every {fmt(interval / 60)} min ({overhead:.1%})"
        fix = (
            "faster checkpoint storage, asynchronous or sharded checkpoints, weights-only checkpoints between "
            f"full ones, or an interval of at least {fmt(plan.write_seconds / warn / 60, 0)} min"
        )
        yield WRITE_OVERHEAD.judged(
            WRITE_OVERHEAD.graded(overhead, warn_at=warn, fail_at=fail),
            told,
            location=where,
            related=related,
            evidence=evidence,
            fix=fix,
            subject=ctx.subject,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CheckpointWriteChecker())
