"""The estimate: named components, the phase of the step where memory peaks, and three totals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rigcheck.core.estimate.memory.inputs import MemoryInputs

GIB = 2**30

#: The categories a component belongs to, as a trace sorts live tensors (rigcheck.trace.result).
CATEGORIES = ("parameters", "gradients", "optimizer", "activations", "temporaries")


@dataclass(frozen=True)
class Component:
    """One named part of the per-GPU memory, with the formula that gave it.

    ``kind`` is state | activation | transient | runtime; ``category`` the trace category (or
    ``runtime`` for what no trace sees); ``at_peak`` whether it is alive at the estimate's peak.
    """

    name: str
    bytes: float
    formula: str
    kind: str
    pageable: bool = False
    category: str = "activations"
    at_peak: bool = True

    @property
    def gib(self) -> float:
        return self.bytes / GIB


@dataclass(frozen=True)
class MemoryEstimate:
    """The per-GPU breakdown and its three totals (bytes)."""

    components: tuple[Component, ...]
    allocated: float
    reserved: float
    device: float
    peak_phase: str
    inputs: MemoryInputs
    notes: tuple[str, ...] = field(default=())
    pool: float | None = None  # vLLM: the share of the card the engine claims
    phases: Mapping[str, float] = field(default_factory=dict)  # the allocated total of each phase
    host: float = 0.0  # bytes an offloading job keeps in host memory for this GPU

    def component(self, name: str) -> Component | None:
        return next((item for item in self.components if item.name == name), None)

    def gib(self, name: str) -> float:
        item = self.component(name)
        return item.gib if item else 0.0

    @property
    def allocated_gib(self) -> float:
        return self.allocated / GIB

    @property
    def reserved_gib(self) -> float:
        return self.reserved / GIB

    @property
    def device_gib(self) -> float:
        return self.device / GIB

    def total(self, basis: str) -> float:
        """Bytes on a measurement basis: allocated, reserved or device."""
        return {"allocated": self.allocated, "reserved": self.reserved, "device": self.device}[basis]

    def by_category(self) -> dict[str, float]:
        """Bytes alive at the peak, by trace category (what ``rigcheck estimate --trace`` compares)."""
        out: dict[str, float] = {}
        for item in self.components:
            if item.at_peak and item.category in CATEGORIES:
                out[item.category] = out.get(item.category, 0.0) + item.bytes
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "components": {
                item.name: {
                    "gib": round(item.gib, 3),
                    "formula": item.formula,
                    "kind": item.kind,
                    "category": item.category,
                    **({"pageable": True} if item.pageable else {}),
                    **({"at_peak": False} if not item.at_peak else {}),
                }
                for item in self.components
            },
            "allocated_gib": round(self.allocated_gib, 3),
            "reserved_gib": round(self.reserved_gib, 3),
            "device_gib": round(self.device_gib, 3),
            "peak_phase": self.peak_phase,
            "phases_gib": {name: round(value / GIB, 3) for name, value in self.phases.items()},
            **({"engine_pool_gib": round(self.pool / GIB, 3)} if self.pool else {}),
            **({"host_gib": round(self.host / GIB, 3)} if self.host else {}),
            "notes": list(self.notes),
        }


def fmt_bytes(value: float) -> str:
    return f"{value / GIB:.2f} GiB"


def billions(params: float) -> str:
    return f"{params / 1e9:.3f}B"
