"""What a workload asks of the rig it runs on, for the checkers: its run length, the nodes it uses,
its checkpoint plan. These read the check context (:class:`rigcheck.core.engine.context.CheckContext`);
the arithmetic they call lives in :mod:`rigcheck.core.estimate`, which never sees a context."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.estimate.checkpoints import CheckpointPlan
from rigcheck.core.estimate.storage import checkpoint_bytes, device_rates, pick_device


def checkpoint_plan(ctx: CheckContext, facts: Mapping[str, Any]) -> CheckpointPlan | None:
    """How the workload's checkpoints are written on the rig's first GPU node: the device, the size,
    the writers and the time per checkpoint (``facts``: specs/rules/storage.yaml); None for inference
    or a rig without GPUs or storage."""
    workload, arch = ctx.workload, ctx.arch  # the architecture is None exactly when the workload is
    node = ctx.first_gpu_node
    if workload is None or arch is None or node is None or workload.task == "inference":
        return None
    run = workload.run
    checkpoint = run.checkpoint if run else None
    world = workload.parallelism.world_size
    nodes_used = max(1, math.ceil(world / node.gpus_per_node))
    picked = pick_device(
        node, checkpoint.storage if checkpoint else None, "checkpoints", prefer_shared=nodes_used > 1
    )
    if picked is None:
        return None
    rates = device_rates(node, *picked, facts)
    trainable = arch.params
    if workload.task in ("lora", "qlora"):
        lora = workload.lora
        roles = arch.lora_roles(lora.targets if lora else None)
        trainable = arch.lora_params_per_layer(lora.rank if lora else 8, roles) * arch.layers
    kind = checkpoint.kind if checkpoint else "full"
    size, how = checkpoint_bytes(arch.params, trainable, kind, facts)
    writers = 1 if rates.shared or nodes_used == 1 else nodes_used  # sharded checkpoints: each node its part
    write = size / (rates.write_mb_s * 1e6 * writers) if rates.write_mb_s else None
    interval = run.checkpoint_interval_min * 60 if run and run.checkpoint_interval_min else None
    return CheckpointPlan(node, rates, size, how, writers, write, interval, kind)


def job_nodes(ctx: CheckContext) -> tuple[NodeView, int] | None:
    """The node group the workload runs on and how many of its nodes it uses (ranks / GPUs per node)."""
    node = ctx.first_gpu_node
    if node is None or ctx.workload is None:
        return None
    world = ctx.workload.parallelism.world_size
    return node, max(1, math.ceil(world / max(1, node.gpus_per_node)))


def rig_gpu_nodes(ctx: CheckContext) -> int:
    """Nodes with GPUs the rig has, across its node groups."""
    return sum(node.count for node in ctx.nodes if node.gpus)


def run_hours(ctx: CheckContext) -> tuple[float | None, str]:
    """The run's length: ``run.hours``, else the throughput estimate's time for the data (``ctx`` must
    hold a workload)."""
    workload = ctx.workload
    if workload is None:
        raise ValueError("no workload in this context")
    if workload.run is not None and workload.run.hours:
        return float(workload.run.hours), "run.hours"
    if ctx.first_gpu_node is None or workload.task == "inference":
        return None, "unknown"
    estimate = ctx.estimate()  # computed once per context
    assert estimate is not None  # a workload and a GPU node: checked above
    speed = estimate.training
    if speed is None or speed.run_hours is None:
        return None, "unknown"
    return speed.run_hours.default, "estimated training time"
