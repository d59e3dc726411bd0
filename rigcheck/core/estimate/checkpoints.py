"""A workload's checkpoints: size, where they are written, how long a write takes (STO-4, STO-5),
shared by the storage-capacity, checkpoint-write and checkpoint-policy checkers."""

from __future__ import annotations

from typing import NamedTuple

from rigcheck.core.engine.views import NodeView
from rigcheck.core.estimate.storage import DeviceRates


class CheckpointPlan(NamedTuple):
    """How a checkpoint is written: its size, the devices and writers, and how long it takes."""

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
