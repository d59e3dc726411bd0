"""Power of a node: sustained DC load, PSU capacity, efficiency at load, wall power (docs/research/rules_facts.md
PSU-1, PSU-8, PSU-12), shared by the PWR checkers.

    sustained DC = sum(GPU power limit) + CPU sustained power + platform
    platform     = board, RAM, drives, fans: 100 W; an SXM/OAM baseboard adds its NVSwitches, NICs and
                   fans, 0.7 x the GPUs' board power (NVIDIA's DGX H100: 10.2 kW for 8 x 700 W GPUs
                   and 2 x 350 W CPUs; DGX B200: 14.3 kW for 8 x 1,000 W and 2 x 350 W)
    PSU capacity = N x rating for "N+M" redundant units (M are spares), else all units
    wall power   = DC load / efficiency at that load (80 PLUS curve at 20/50/100%); a vendor's
                   ``max_power_w`` is already input power, so it is the wall power itself

With ``feeds_gpus`` on a PSU group each of its units powers that many GPUs alone, and the units
without it share the rest (CPU, platform, remaining GPUs): each unit is then loaded on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rigcheck.core.engine.views import NodeView


@dataclass(frozen=True)
class GpuPower:
    """The GPUs of one kind in a node and the watts each draws, with where that figure came from."""

    label: str
    count: int
    watts: float  # per card
    origin: str  # "rig" (power_limit_w) or "catalog:<id>" (board power)
    tdp_w: float | None  # the card's board power, for the power-limit fix


@dataclass(frozen=True)
class PsuGroup:
    """One ``psu:`` entry of a node: its units, their rating and efficiency, and the spares."""

    index: int
    pointer: str
    watts: float
    count: int
    active: int  # units that carry the load (N of N+M)
    spares: int
    efficiency_name: str | None
    efficiency_pct: float | None
    atx_version: str | None
    connectors: tuple[str, ...]
    circuit: str | None
    feeds_gpus: int | None = None

    @property
    def capacity_w(self) -> float:
        return self.active * self.watts

    @property
    def native_12v(self) -> bool:
        """An ATX 3.x unit with a native 12VHPWR/12V-2x6 plug: the only kind tested for 200% excursions."""
        try:
            major = float((self.atx_version or "0").split(".")[0])
        except ValueError:
            major = 0.0
        return major >= 3 and bool({"12vhpwr", "12v-2x6"} & set(self.connectors))


class UnitLoad(NamedTuple):
    """One PSU unit's own load, when the rig says which GPUs each unit feeds."""

    psu: PsuGroup
    unit: int  # 1-based within the group
    load_w: float
    what: str


@dataclass(frozen=True)
class NodePower:
    """A node's power budget: the GPUs', CPUs' and platform's draw, and its power supplies."""

    gpus: tuple[GpuPower, ...]
    gpu_w: float
    cpu_w: float | None
    platform_w: float
    max_w: float | None  # the vendor's published maximum system (input) power, when the rig gives it
    psus: tuple[PsuGroup, ...] = field(default=())
    cpu_boost_w: float | None = None  # PL2 / PPT, for spikes
    platform_why: str = ""
    #: DC = max_w x this: the PSUs' efficiency at half load, else power.yaml's vendor_input_efficiency
    input_efficiency: float = field(kw_only=True)

    @property
    def sustained_w(self) -> float:
        """The DC load: GPUs + CPU + platform; with a vendor maximum (input power, fans, NICs and
        NVSwitch included), that figure x the PSUs' efficiency."""
        if self.max_w is not None:
            return self.max_w * self.input_efficiency
        return self.gpu_w + (self.cpu_w or 0.0) + self.platform_w

    @property
    def capacity_w(self) -> float:
        return sum(psu.capacity_w for psu in self.psus)

    @property
    def installed_w(self) -> float:
        return sum(psu.watts * psu.count for psu in self.psus)

    def formula(self) -> str:
        if self.max_w is not None:
            return (
                f"{self.max_w:,.0f} W (the vendor's maximum input power) x {self.input_efficiency:.0%} = "
                f"{self.sustained_w:,.0f} W DC"
            )
        gpus = " + ".join(f"{g.count} x {g.watts:,.0f} W" for g in self.gpus) or "0 W"
        cpu = f"{self.cpu_w:,.0f} W CPU" if self.cpu_w is not None else "CPU unknown"
        platform = f"{self.platform_w:,.0f} W platform" + (
            f" ({self.platform_why})" if self.platform_why else ""
        )
        return f"GPUs {gpus} + {cpu} + {platform} = {self.sustained_w:,.0f} W"

    def unit_loads(self) -> list[UnitLoad]:
        """Each unit's own load when some PSU group feeds GPUs on its own (``feeds_gpus``); else []."""
        fed = [psu for psu in self.psus if psu.feeds_gpus]
        if not fed or self.max_w is not None:
            return []
        cards = sum(g.count for g in self.gpus) or 1
        per_card = self.gpu_w / cards
        out: list[UnitLoad] = []
        assigned = 0
        for psu in fed:
            for unit in range(1, psu.active + 1):
                n = min(psu.feeds_gpus or 0, cards - assigned)
                assigned += n
                out.append(UnitLoad(psu, unit, n * per_card, f"{n} GPU(s) x {per_card:,.0f} W"))
        rest_units = [
            (psu, unit) for psu in self.psus if not psu.feeds_gpus for unit in range(1, psu.active + 1)
        ]
        rest = (cards - assigned) * per_card + (self.cpu_w or 0.0) + self.platform_w
        for psu, unit in rest_units:
            out.append(
                UnitLoad(
                    psu, unit, rest / len(rest_units), f"{cards - assigned} GPU(s), the CPU and the platform"
                )
            )
        if not rest_units and rest > 0 and out:  # nothing left to carry the board: the fed units share it
            share = rest / len(out)
            out = [
                UnitLoad(u.psu, u.unit, u.load_w + share, u.what + " + a share of the CPU and platform")
                for u in out
            ]
        return out


def node_power(node: NodeView, facts: Mapping[str, Any]) -> NodePower:
    gpus = []
    for gpu in node.gpus:
        limit = gpu.fact("power_limit_w")
        watts = float(limit.value) if limit.value is not None else 0.0
        gpus.append(GpuPower(gpu.facts.name, gpu.count, watts, limit.origin, gpu.facts.tdp_w))
    spec = node.spec
    cpu_w = float(spec.cpu.tdp_w) if spec.cpu and spec.cpu.tdp_w is not None else None
    psus = []
    psu_groups = spec.psu or ()
    for index, psu in enumerate(psu_groups):
        active, spares = psu.count, 0
        if psu.redundancy:
            n, m = (int(part) for part in psu.redundancy.replace(" ", "").split("+"))
            active, spares = n, m
        pointer = f"{node.pointer}/psu" + (f"/{index}" if len(psu_groups) > 1 else "")
        psus.append(
            PsuGroup(
                index,
                pointer,
                float(psu.watts),
                psu.count,
                active,
                spares,
                psu.efficiency,
                psu.efficiency_pct,
                psu.atx_version,
                tuple(psu.connectors or ()),
                psu.circuit,
                psu.feeds_gpus,
            )
        )
    platform, why = float(facts["sustained"]["platform_w"]), ""
    baseboard = [g for g in node.gpus if g.facts.form_factor in ("SXM", "OAM") and g.facts.tdp_w]
    if baseboard:
        fraction = float(facts["sustained"]["baseboard_fraction"])
        board = fraction * sum(float(g.facts.tdp_w or 0) * g.count for g in baseboard)  # each has a TDP
        platform += board
        why = (
            f"100 W + {fraction:g} x the SXM GPUs' board power for the baseboard's NVSwitches, NICs and fans"
        )
    boost = spec.cpu.boost_w if spec.cpu and spec.cpu.boost_w is not None else None
    rated = [psu for psu in psus if psu.efficiency_pct or psu.efficiency_name in facts["efficiency_80plus"]]
    input_efficiency = (
        efficiency(rated[0], 0.5, facts)[0] if rated else float(facts["sustained"]["vendor_input_efficiency"])
    )
    return NodePower(
        tuple(gpus),
        sum(g.count * g.watts for g in gpus),
        cpu_w,
        platform,
        spec.max_power_w,
        tuple(psus),
        float(boost) if boost is not None else cpu_w,
        why,
        input_efficiency=input_efficiency,
    )


def efficiency(psu: PsuGroup, load_fraction: float, facts: Mapping[str, Any]) -> tuple[float, str]:
    """Efficiency at a load fraction: the measured figure if given, else the 80 PLUS curve (linear
    between its 20/50/100% points)."""
    if psu.efficiency_pct:
        return psu.efficiency_pct / 100, f"{psu.efficiency_pct:g}% (rig)"
    table = facts["efficiency_80plus"]
    if not psu.efficiency_name or psu.efficiency_name not in table:
        value = float(table["unknown"])
        return value, f"{value:.0%} (rating unknown)"
    low, mid, high = (float(x) for x in table[psu.efficiency_name])
    load = min(max(load_fraction, 0.2), 1.0)
    below_half = low + (mid - low) * (load - 0.2) / 0.3
    above_half = mid + (high - mid) * (load - 0.5) / 0.5
    value = below_half if load <= 0.5 else above_half
    return value, f"{value:.1%} ({psu.efficiency_name} at {load_fraction:.0%} load)"


def wall_watts(power: NodePower, facts: Mapping[str, Any]) -> list[tuple[PsuGroup, float, str]]:
    """Wall power per PSU group: its share of the DC load (its units' own loads with ``feeds_gpus``, else
    by capacity) over its efficiency; a vendor's maximum input power is split by capacity as it is."""
    capacity = power.capacity_w or 1.0
    units = power.unit_loads()
    out = []
    for psu in power.psus:
        if power.max_w is not None:
            out.append((psu, power.max_w * psu.capacity_w / capacity, "the vendor's input power"))
            continue
        if units:  # each unit's own load, when the rig says which GPUs each unit feeds
            share = sum(u.load_w for u in units if u.psu.index == psu.index)
        else:
            share = power.sustained_w * psu.capacity_w / capacity
        load = share / (psu.watts * psu.count) if psu.watts else 1.0
        eta, why = efficiency(psu, load, facts)
        out.append((psu, share / eta, why))
    return out


def power_limit_fix(power: NodePower, target_dc_w: float, facts: Mapping[str, Any]) -> str | None:
    """The ``nvidia-smi -pl`` setting (same fraction of every card's limit) that brings the DC load to
    ``target_dc_w``, and what it costs in speed (docs/research/rules_facts.md PSU-11); None if no limit can do it."""
    if power.max_w is not None or not power.gpu_w:
        return None
    rest = (power.cpu_w or 0.0) + power.platform_w
    fraction = (target_dc_w - rest) / power.gpu_w
    table = facts["power_limit"]
    if fraction >= 1:
        return None
    if fraction < float(table["lowest_recommended_fraction"]):
        return None
    settings = ", ".join(
        dict.fromkeys(f"nvidia-smi -pl {int(g.watts * fraction)} on the {g.label}" for g in power.gpus)
    )
    loss = float(table["speed_loss_at_measured"])
    if fraction >= float(table["measured_fraction"]):
        cost = f"about {loss:.0%} slower or less"
    else:
        cost = f"more than {loss:.0%} slower; measure your workload"
    return f"{settings} ({fraction:.0%} of the current limit; {cost}, PSU-11)"
