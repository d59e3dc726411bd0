"""A workload's checkpoints: size, where they are written, how long a write takes (STO-4, STO-5),
shared by the storage-capacity, checkpoint-write and checkpoint-policy checkers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rigcheck.core.context import CheckContext, NodeView
from rigcheck.core.estimation.storage import DeviceRates, checkpoint_bytes, device_rates, pick_device


@dataclass(frozen=True)
class CheckpointPlan:
    node: NodeView
    rates: DeviceRates
    bytes: float
    size_how: str
    writers: int  # nodes writing their shards in parallel to node-local devices (1 for a shared file system)
    write_seconds: float | None
    interval_seconds: float | None
    kind: str

    @property
    def overhead(self) -> float | None:
        if self.write_seconds is None or not self.interval_seconds:
            return None
        return self.write_seconds / self.interval_seconds


def checkpoint_plan(ctx: CheckContext, facts: Mapping[str, Any]) -> CheckpointPlan | None:
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
