"""Views of a rig's node groups and GPU groups: the rig's fields over the catalog's facts (the rig wins,
so a user's power limit or card length replaces the reference card's). Checkers and the estimators
read them; they hold no check context, so the estimators can take them without importing the
engine's context (rigcheck.core.engine.context builds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rigcheck.core.catalog.catalog import GpuSpec
from rigcheck.core.spec.models.rig import GpuGroup, NodeGroup

#: Rig fields of a GPU group that override the catalog fact of the same meaning.
_OVERRIDES = {
    "memory_gib": "memory_gib",
    "power_limit_w": "tdp_w",
    "length_mm": "length_mm",
    "height_mm": "height_mm",
    "slots": "slots",
    "cooler": "cooler",
}


@dataclass(frozen=True)
class Fact:
    """A value and where it came from (``"rig"`` or ``"catalog:<id>"``)."""

    value: Any
    origin: str


@dataclass
class GpuView:
    """One GPU group of a node: the rig's fields over the catalog's facts."""

    spec: GpuGroup
    facts: GpuSpec
    pointer: str

    @property
    def count(self) -> int:
        return self.spec.count

    def fact(self, rig_field: str) -> Fact:
        """The rig's value of ``rig_field`` if given, else the catalog's equivalent."""
        value = getattr(self.spec, rig_field, None)
        if value is not None:
            return Fact(value, "rig")
        catalog_field = _OVERRIDES.get(rig_field, rig_field)
        return Fact(getattr(self.facts, catalog_field, None), f"catalog:{self.facts.id}")

    @property
    def memory_gib(self) -> float:
        return float(self.fact("memory_gib").value)

    @property
    def power_limit_w(self) -> float | None:
        return self.fact("power_limit_w").value

    @property
    def label(self) -> str:
        return f"{self.count}x {self.facts.name}"


@dataclass
class NodeView:
    """A node group (``count`` identical nodes) with its GPUs resolved."""

    spec: NodeGroup
    index: int
    pointer: str
    gpus: list[GpuView] = field(default_factory=list)

    @property
    def count(self) -> int:
        return self.spec.count

    @cached_property
    def written_name(self) -> str:
        """The node group's name, or ``nodes[INDEX]`` where it has none."""
        return self.spec.name if self.spec.name else f"nodes[{self.index}]"

    @cached_property
    def label(self) -> str:
        return f"node {self.written_name}" + (f" (x{self.count})" if self.count > 1 else "")

    @property
    def hosted(self) -> bool:
        """A cloud instance (``instance:``, or ``chassis.form_factor: cloud``): its provider owns the power,
        cooling and chassis."""
        chassis = self.spec.chassis
        return self.spec.instance is not None or (chassis is not None and chassis.form_factor == "cloud")

    @property
    def env(self) -> dict[str, str]:
        """The node's ``software.env`` (NCCL and CUDA variables), empty when not given."""
        software = self.spec.software
        return dict((software.env if software else None) or {})

    @property
    def gpus_per_node(self) -> int:
        return sum(gpu.count for gpu in self.gpus)

    @property
    def vram_gib_per_node(self) -> float:
        return sum(gpu.count * gpu.memory_gib for gpu in self.gpus)
