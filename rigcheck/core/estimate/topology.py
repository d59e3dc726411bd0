"""The paths a job's collectives run over, from what the rig declares (specs/rules/throughput.yaml
``communication``).

Inside a node: the GPU link of :func:`rigcheck.core.estimate.links.intra_node_link` (NVLink /
NVSwitch, a 2-GPU bridge, PCIe with or without peer-to-peer). Across nodes: the node's compute
network, line rate x ports x an efficiency by transport (RDMA with GPUDirect, RDMA staged through host
memory, TCP sockets). NCCL runs one ring per channel and spreads the channels over the NICs, so a
ring all-reduce spanning nodes reaches about the node's whole network bandwidth (NVIDIA/nccl issue
#307: "~12 GB/s with each NIC, then ~24 when using 2 NICs"); groups that have fewer members per node
share the NICs with the node's other groups.

Ranks are laid out tensor-parallel innermost, then pipeline stages, then data parallelism
(Megatron-LM's and torchtitan's order): a group of ``size`` ranks whose members are ``stride`` ranks
apart stays in one node while ``size x stride`` fits in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from rigcheck.core.estimate.links import intra_node_link, link_gbit_per_s


class Path(NamedTuple):
    """What a collective reaches over one path: bus bandwidth and the small-message latency floor."""

    busbw_gbps: float  # GB/s an all-reduce reaches (nccl-tests busbw)
    latency_us: float  # a small collective's floor
    description: str
    inter_node: bool = False


class Topology(NamedTuple):
    """A job's GPUs as nodes of GPUs: the path inside a node and the network between nodes."""

    gpus_per_node: int
    nodes: int  # nodes of the group the job runs on
    intra: Path
    network: Path | None  # the node's whole compute network; None when it declares none

    def path(self, size: int, stride: int = 1) -> Path:
        """The path of a group of ``size`` ranks ``stride`` apart."""
        per_node = max(1, min(size, self.gpus_per_node // max(1, stride)))
        if size <= per_node:
            return self.intra
        if -(-size // per_node) > self.nodes:
            return Path(0.0, 0.0, f"more GPUs than the rig has ({size} ranks, {self.nodes} node(s))", True)
        if self.network is None:
            return Path(0.0, 0.0, "no network declared between the nodes", True)
        share = per_node / max(1, self.gpus_per_node)  # the node's NICs are shared by its groups
        busbw = min(self.intra.busbw_gbps, self.network.busbw_gbps * share)
        how = self.network.description
        if share < 1:
            how += f" shared by {self.gpus_per_node // per_node} groups per node"
        return Path(busbw, self.network.latency_us, how, True)


def network_path(node: Any, facts: Mapping[str, Any]) -> Path | None:
    """The node's network as NCCL uses it (:func:`rigcheck.core.estimate.network.nccl_choice`): each
    chosen link's line rate x ports x the efficiency of its transport (RDMA, RDMA staged through host
    memory, TCP sockets)."""
    from rigcheck.core.estimate.network import carries_gpu_traffic, nccl_choice

    efficiency = facts["network_efficiency"]
    latency = facts["latency_us"]
    choice = nccl_choice(node)
    total, parts = 0.0, []
    for link in choice.links:
        rate = link_gbit_per_s(link)
        if not rate:
            continue
        if choice.transport == "ib":
            transport = "rdma" if link.gpudirect_rdma is not False else "rdma_without_gpudirect"
        else:
            transport = "tcp"
        share = float(efficiency[transport])
        total += rate * link.count / 8 * share
        label = {"rdma": "RDMA", "rdma_without_gpudirect": "RDMA through host memory", "tcp": "TCP"}[
            transport
        ]
        role = "" if carries_gpu_traffic(link) else f", the {link.role} port"
        parts.append(f"{link.count} x {rate:g} Gb/s {link.kind} ({label}, x {share:g}{role})")
    if not total:
        return None
    floor = float(latency["tcp"] if choice.transport == "socket" else latency["rdma"])
    chosen_by = f" ({choice.why})" if "NCCL_" in choice.why else ""
    return Path(total, floor, " + ".join(parts) + " per node" + chosen_by, True)


def topology_of(node: Any, gpu: Any, facts: Mapping[str, Any], interconnect: Mapping[str, Any]) -> Topology:
    """The paths of ``node`` (a NodeView) for GPUs like ``gpu`` (a GpuView)."""
    link = intra_node_link(node, gpu, interconnect)
    latency = facts["latency_us"]
    floor = float(
        latency["nvlink"] if link.kind in ("nvlink", "nvswitch", "nvlink-bridge") else latency["pcie"]
    )
    intra = Path(link.busbw_gbps, floor, link.description)
    return Topology(node.gpus_per_node, node.count, intra, network_path(node, facts))
