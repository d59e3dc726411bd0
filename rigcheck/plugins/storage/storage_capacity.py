"""STO003: room for the data set and the checkpoints kept (docs/research/rules_facts.md STO-6)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import checkpoint_plan
from rigcheck.core.estimate.storage import pick_device
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

CAPACITY = Rule(
    code="STO003",
    name="storage-too-small-for-data-and-checkpoints",
    summary="The storage cannot hold the data set plus the checkpoints kept",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds the data set's size (`data.size_gb`, or tokens x bytes per token, or samples x bytes per "
        "sample) and `keep` checkpoints (`run.checkpoint.keep`, default 3) and compares the sum with the "
        "device's free space (`free_gb`, else its capacity; {facts:storage.checkpoint.network_fs_usable_fraction:.0%} "
        "of a shared file system): fail above it, warn above {facts:storage.capacity.warn_above_fraction:.0%} of it.",
        why="A full disk makes the next checkpoint fail, and every automatic restart after it; BLOOM wrote 18.4 TB "
        "of checkpoints a day.",
        example="```yaml\nstorage: [{kind: nvme, capacity_gb: 1000}]\nrun: {checkpoint: {keep: 5}}   # 7B full: 5 x "
        "98 GB + data: STO003 warn\n```",
        fix="More disk, fewer checkpoints kept locally (move older ones to object storage), or weights-only "
        "checkpoints for the ones kept long-term.",
        references=(
            "https://github.com/stas00/ml-engineering/blob/master/training/fault-tolerance/README.md",
        ),
    ),
)


class StorageCapacityChecker(WorkloadOnRigChecker):
    name = "storage.capacity"
    rules = (CAPACITY,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        facts = ctx.facts("storage")
        plan = checkpoint_plan(ctx, facts)
        where = ctx.workload_at("/run/checkpoint")
        if workload.task == "inference":
            yield CAPACITY.passed("inference: no checkpoints kept", location=where, subject=ctx.subject)
            return
        if plan is None:
            yield CAPACITY.skipped(
                "no training run, or no storage declared", location=where, subject=ctx.subject
            )
            return
        table = facts["checkpoint"]
        keep = (
            workload.run.checkpoint.keep
            if workload.run and workload.run.checkpoint and workload.run.checkpoint.keep
            else int(table["default_keep"])
        )
        data = workload.data
        data_gb = 0.0
        if data is not None:
            data_gb = (
                data.size_gb
                or ((data.tokens or 0) * (data.bytes_per_token or 0) / 1e9)
                or ((data.samples or 0) * (data.bytes_per_sample or 0) / 1e9)
            )
        data_device = pick_device(plan.node, data.storage if data is not None else None, "data")
        same_device = data_device is not None and data_device[0] == plan.rates.index
        per_writer = plan.bytes / plan.writers
        need_gb = keep * per_writer / 1e9 + (data_gb if same_device else 0.0)
        rates = plan.rates
        if rates.free_gb is not None:
            room, room_how = rates.free_gb, "free_gb"
        elif rates.capacity_gb is not None:
            fraction = float(table["network_fs_usable_fraction"]) if rates.shared else 1.0
            room, room_how = (
                rates.capacity_gb * fraction,
                (f"{fraction:.0%} of capacity" if rates.shared else "capacity"),
            )
        else:
            yield CAPACITY.skipped(
                f"{rates.label}: capacity not given",
                location=ctx.rig_at(rates.pointer),
                subject=ctx.subject,
                fix="add capacity_gb (or free_gb) to the storage entry",
            )
            return
        evidence = {
            "checkpoints_kept": keep,
            "checkpoint_gb_per_node": round(per_writer / 1e9, 2),
            "data_gb": round(data_gb, 2),
            "need_gb": round(need_gb, 2),
            "room_gb": room,
            "room_from": room_how,
            "device": rates.label,
            **table.cite(),
        }
        told = (
            f"{keep} checkpoints x {fmt(per_writer / 1e9, 1)} GB"
            + (f" + {fmt(data_gb, 1)} GB of data" if same_device and data_gb else "")
            + f" = {fmt(need_gb, 1)} GB on {rates.label} with {fmt(room, 0)} GB ({room_how})"
        )
        where = ctx.rig_at(f"{rates.pointer}/capacity_gb")
        fix = "more disk, fewer checkpoints kept locally (offload older ones), or weights-only checkpoints"
        warn_share = float(facts["capacity"]["warn_above_fraction"])
        yield CAPACITY.judged(
            CAPACITY.graded(need_gb, warn_at=warn_share * room, fail_at=room),
            told,
            location=where,
            evidence=evidence,
            fix=fix,
            subject=ctx.subject,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(StorageCapacityChecker())
