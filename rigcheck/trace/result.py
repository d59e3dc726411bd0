"""What a trace measured, and how it lines up with the analytic estimate (no torch import here).

A trace counts live tensor bytes per GPU rank by category, the way
``torch.distributed._tools.mem_tracker.MemTracker`` sorts them: parameters (and buffers), gradients,
optimizer states (with the optimizer step's temporaries), activations (everything the forward pass
keeps, the KV cache included) and temporaries (what the backward pass allocates for the gradients of
activations). Its peak is what ``torch.cuda.max_memory_allocated`` would report on a GPU, less what
the trace cannot see: the caching allocator's rounding and fragmentation, the CUDA context, kernel
workspaces (cuBLAS, flash-attention) and NCCL buffers. The analytic model adds those the same way to
both (``rigcheck.core.estimate.memory``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

GIB = 2**30

#: The categories a trace reports, in display order.
CATEGORIES = ("parameters", "gradients", "optimizer", "activations", "temporaries")

#: What a trace does not see; every traced peak is printed with this.
NOT_SEEN = (
    "the CUDA caching allocator's rounding and fragmentation (reserved - allocated)",
    "the CUDA context and lazily loaded kernels",
    "kernel workspaces outside PyTorch tensors (cuBLAS, flash-attention, NCCL buffers)",
)


@dataclass(frozen=True)
class TraceResult:
    """The live-tensor peak of one rank, by category, at the moment of the peak."""

    peak: float  # bytes
    categories: Mapping[str, float]  # bytes at the peak, by CATEGORIES
    phase: str  # where the peak was reached: forward, backward, optimizer step, prefill, decode
    phase_peaks: Mapping[str, float]  # the highest total reached in each phase
    rank: int = 0
    world: int = 1
    seconds: float = 0.0
    versions: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def peak_gib(self) -> float:
        return self.peak / GIB

    def as_dict(self) -> dict[str, Any]:
        return {
            "peak_gib": round(self.peak_gib, 4),
            "categories_gib": {name: round(self.categories.get(name, 0.0) / GIB, 4) for name in CATEGORIES},
            "phase": self.phase,
            "phase_peaks_gib": {name: round(value / GIB, 4) for name, value in self.phase_peaks.items()},
            "rank": self.rank,
            "world": self.world,
            "seconds": round(self.seconds, 2),
            "versions": dict(self.versions),
            "not_seen": list(NOT_SEEN),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraceResult:
        return cls(
            peak=float(data["peak_gib"]) * GIB,
            categories={name: float(value) * GIB for name, value in data["categories_gib"].items()},
            phase=str(data["phase"]),
            phase_peaks={name: float(value) * GIB for name, value in data.get("phase_peaks_gib", {}).items()},
            rank=int(data.get("rank", 0)),
            world=int(data.get("world", 1)),
            seconds=float(data.get("seconds", 0.0)),
            versions=dict(data.get("versions", {})),
            notes=tuple(data.get("notes", ())),
        )


def side_by_side(trace: TraceResult, estimate: Any) -> list[dict[str, Any]]:
    """Rows of (category, traced GiB, analytic GiB) and the allocated totals, for the text and JSON
    outputs. ``estimate`` is a :class:`~rigcheck.core.estimate.memory.MemoryEstimate`."""
    analytic = estimate.by_category()
    rows = []
    for name in CATEGORIES:
        traced = trace.categories.get(name, 0.0)
        modelled = analytic.get(name, 0.0)
        if traced or modelled:
            rows.append({"category": name, "traced_gib": traced / GIB, "analytic_gib": modelled / GIB})
    rows.append(
        {"category": "allocated", "traced_gib": trace.peak_gib, "analytic_gib": estimate.allocated / GIB}
    )
    return rows
