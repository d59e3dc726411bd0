"""A workload's estimate on one GPU group of a rig, as the BW, ICX and NET rules and
``rigcheck estimate --rig`` share it: the GPU's speed facts with the rig's overrides and power limit
(:mod:`rigcheck.core.estimate.gpu_speed`), and the paths the job's collectives run over
(:mod:`rigcheck.core.estimate.topology`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from rigcheck.core.estimate.estimate import WorkloadEstimate, estimate_workload
from rigcheck.core.estimate.gpu_speed import speed_facts
from rigcheck.core.estimate.topology import Topology, topology_of


class RigEstimate(NamedTuple):
    """A workload's estimate on one GPU of a rig, with the rig's topology."""

    estimate: WorkloadEstimate
    topology: Topology
    gpu_notes: tuple[str, ...]  # what the rig changed in the GPU's speed facts


def estimate_on(ctx: Any, node: Any, gpu: Any) -> RigEstimate:
    """``ctx.workload`` on ``gpu`` (a GpuView) of ``node`` (a NodeView)."""
    facts = ctx.facts("throughput")
    fast, notes = speed_facts(gpu, facts)
    topology = topology_of(node, gpu, facts["communication"], ctx.facts("interconnect"))
    estimate = estimate_workload(
        ctx.workload, gpu=fast, gpus_per_node=node.gpus_per_node, arch=ctx.arch, topology=topology
    )
    return RigEstimate(estimate, topology, tuple(notes))
