"""GPU-to-GPU bandwidth inside a node, from the rig's interconnect and the catalog (docs/research/rules_facts.md
NET-5, NET-7, NET-8, NET-9), shared by the ICX checkers.

The all-reduce bus bandwidth NCCL reaches is about 80% of a link's per-direction rate (NET-5).
NVLink and NVSwitch: the GPU's NVLink total / 2 per direction. A 2-GPU NVLink bridge: the bridge's
rate, for exactly two GPUs; with more GPUs the ring also crosses PCIe. PCIe: the generation's x16
rate scaled by the lanes, of the link as it trains (the lower of slot and card); without
peer-to-peer (GeForce RTX 4090/5090 on the stock driver) traffic bounces through host memory at
about half that.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

from rigcheck.core.engine.views import GpuView, NodeView


class Link(NamedTuple):
    """The GPU-to-GPU link of a node: its kind, per-GPU bandwidth and the all-reduce bus bandwidth."""

    kind: str  # nvswitch | nvlink | nvlink-bridge | infinity-fabric | pcie | none
    unidirectional_gbps: float  # GB/s per direction per GPU on the link
    busbw_gbps: float  # expected all-reduce bus bandwidth, GB/s
    p2p: bool
    description: str
    nvlink_class: bool


@cache
def _tables() -> dict[str, Any]:
    from rigcheck.core.spec.frozen import freeze
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.resources import hardware_file

    return freeze(load_yaml_file(str(hardware_file("interconnects.yaml"))).data)


def pcie_x16_gbps(gen: int) -> float:
    """A PCIe generation's x16 rate per direction, GB/s (specs/hardware/interconnects.yaml, NET-8; the
    table holds every generation the rig schema accepts)."""
    for row in _tables()["pcie_generations"]:
        if int(row["gen"]) == gen:
            return float(row["x16_unidirectional_gbps"])
    raise ValueError(f"PCIe generation {gen} is not in specs/hardware/interconnects.yaml")


def pcie_link(node: NodeView, gpu: GpuView) -> tuple[int, int]:
    """The generation and width a GPU's PCIe link trains to: the lower of the slot's (``pcie:``) and the
    card's own, as NVML reports it ("the maximum PCIe link generation possible with this device and
    system", ``nvmlDeviceGetMaxPcieLinkGeneration``; likewise the width). Without either, Gen4 x16."""
    slot, card = node.spec.pcie, gpu.facts.pcie
    gens = [g for g in (slot.gen if slot else None, card.gen if card else None) if g is not None]
    lanes = [n for n in (slot.lanes_per_gpu if slot else None, card.lanes if card else None) if n is not None]
    return min(gens, default=4), min(lanes, default=16)


def bridge_gbps(gpu_id: str) -> float | None:
    for bridge in _tables()["nvlink_bridges"]:
        if gpu_id in bridge["gpus"]:
            return float(bridge["bidirectional_gbps"])
    return None


def peer_to_peer(node: NodeView, gpu: GpuView) -> bool:
    """Whether the node's GPUs reach each other peer-to-peer: the rig's word (``p2p``), else over NVLink
    (a bridge joins a pair), else the catalog's PCIe P2P with the stock driver (GeForce Ampere and Ada
    have none)."""
    interconnect = node.spec.gpu_interconnect
    if interconnect is not None and interconnect.p2p is not None:
        return bool(interconnect.p2p)
    if interconnect is not None and interconnect.kind in ("nvlink", "nvswitch"):
        return True
    if interconnect is not None and interconnect.kind == "nvlink-bridge" and node.gpus_per_node == 2:
        return bridge_gbps(gpu.facts.id) is not None
    return gpu.facts.p2p_stock_driver is not False


def intra_node_link(node: NodeView, gpu: GpuView, facts: Mapping[str, Any]) -> Link:
    """The link an all-reduce among this node's GPUs runs over, and its expected bus bandwidth."""
    efficiency = float(facts["bus_bandwidth"]["efficiency"])
    interconnect = node.spec.gpu_interconnect
    nvlink = gpu.facts.nvlink if gpu.facts.nvlink not in (None, "none") else None
    fabric = gpu.facts.infinity_fabric
    if interconnect is not None:
        kind = interconnect.kind
    elif nvlink and gpu.facts.form_factor in ("SXM", "OAM"):
        kind = "nvlink"
    else:
        kind = "infinity-fabric" if fabric and gpu.facts.form_factor == "OAM" else "pcie"
    gen, lanes = pcie_link(node, gpu)
    pcie_rate = pcie_x16_gbps(gen) * lanes / 16
    p2p = peer_to_peer(node, gpu)
    override = interconnect.bandwidth_gbps if interconnect is not None else None
    if kind in ("nvswitch", "nvlink") and (nvlink or override):
        total = float(override or nvlink.total_bidirectional_gbps)  # type: ignore[union-attr]
        rate = total / 2
        return Link(
            kind,
            rate,
            rate * efficiency,
            True,
            f"{kind} {total:g} GB/s per GPU ({rate:g} GB/s each way) x {efficiency:g} bus efficiency",
            True,
        )
    if kind == "infinity-fabric" and (fabric or override):
        xgmi = float(facts["bus_bandwidth"]["infinity_fabric_efficiency"])
        return _infinity_fabric(node, fabric or {}, override, xgmi)
    if kind == "nvlink-bridge" and node.gpus_per_node == 2:
        total = float(override or bridge_gbps(gpu.facts.id) or 0)
        if total:
            rate = total / 2
            return Link(
                kind,
                rate,
                rate * efficiency,
                True,
                f"2-GPU NVLink bridge {total:g} GB/s ({rate:g} each way) x {efficiency:g}",
                False,
            )
    factor = 1.0 if p2p else float(facts["bus_bandwidth"]["no_p2p_factor"])
    busbw = pcie_rate * efficiency * factor
    how = f"PCIe {gen}.0 x{lanes}: {pcie_rate:g} GB/s each way x {efficiency:g}"
    if not p2p:
        how += f" x {factor:g} (no peer-to-peer: through host memory)"
    return Link("pcie", pcie_rate, busbw, p2p, how, False)


def _infinity_fabric(
    node: NodeView, fabric: Mapping[str, Any], override: float | None, efficiency: float
) -> Link:
    """AMD's xGMI joins every pair of a node's GPUs by a link of its own (a full mesh, no switch): a
    collective among g GPUs runs over g - 1 links per GPU, each at ``peer_to_peer_gbps`` per
    direction, up to the GPU's total (its bidirectional total / 2); RCCL reaches ``efficiency`` of it
    (AMD's measurement, specs/rules/interconnect.yaml)."""
    total = float(override or fabric.get("total_bidirectional_gbps") or 0)
    rate = total / 2
    peer = fabric.get("peer_to_peer_gbps")
    how = f"infinity-fabric {total:g} GB/s per GPU ({rate:g} GB/s each way)"
    if peer and not override:
        links = max(1, node.gpus_per_node - 1)
        if links * float(peer) < rate:
            rate = links * float(peer)
            how = f"infinity-fabric: {links} link(s) to the node's other GPUs x {float(peer):g} GB/s each way"
    return Link(
        "infinity-fabric", rate, rate * efficiency, True, f"{how} x {efficiency:g} bus efficiency", True
    )


def link_gbit_per_s(link: Any) -> float | None:
    """Line rate of one port in Gb/s: the rig's ``gbps``, else its InfiniBand ``rate`` (NDR = 400)."""
    if link.gbps:
        return float(link.gbps)
    if link.rate:
        for row in _tables()["infiniband_rates"]:
            if row["name"] == link.rate:
                return float(row["gbps_per_4x_port"])
    return None


def node_network_gbps(node: NodeView, role: str = "compute") -> float:
    """GB/s per node of the network links for GPU traffic (role compute, or unspecified)."""
    total = 0.0
    for link in node.spec.network or ():
        if link.role not in (None, role, "any"):
            continue
        rate = link_gbit_per_s(link)
        if rate:
            total += rate * link.count / 8
    return total
