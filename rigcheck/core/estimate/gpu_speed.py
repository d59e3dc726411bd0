"""A GPU's speed facts as the rig has it: the catalog's, with the rig's overrides (a measured or
down-clocked card) and the clock effect of a power limit (``nvidia-smi -pl``).

A power limit lowers the sustained clock, and with it the tensor throughput, much less than the
power: an RTX 4090 at 60% of its board power still clocks 2.44 of 2.72 GHz (Quasarzone, via
hardwaretimes.com); four RTX 3090s at 280 of 350 W kept "over 95% of maximum performance" in
TensorFlow training (Puget Systems). Memory clocks do not drop, so the bandwidth stays.
``specs/rules/throughput.yaml`` ``power_limit`` holds the curves (board-power share -> clock share),
interpolated linearly; below the lowest point the clock falls in proportion to the power.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from rigcheck.core.catalog.catalog import GpuSpec

#: Rig fields that replace the catalog's fact of the same name.
OVERRIDES = ("memory_bandwidth_gbps", "bf16_dense_tflops", "fp8_dense_tflops", "fp32_tflops")
TFLOPS = (
    "bf16_dense_tflops",
    "fp16_tensor_dense_tflops",
    "fp8_dense_tflops",
    "fp32_tflops",
    "tf32_dense_tflops",
    "fp64_tflops",
    "fp64_tensor_tflops",
)


def clock_share(power_share: float, architecture: str, facts: Mapping[str, Any]) -> float:
    """The sustained clock at ``power_share`` of the board power, as a share of the stock clock."""
    table = facts["power_limit"]
    family = next((key for key in table["curves"] if key.lower() in architecture.lower()), "default")
    points = sorted((float(x), float(y)) for x, y in table["curves"][family])
    if power_share >= points[-1][0]:
        return points[-1][1]
    if power_share <= points[0][0]:
        return points[0][1] * power_share / points[0][0]
    for (x0, y0), (x1, y1) in pairwise(points):
        if x0 <= power_share <= x1:
            return y0 + (y1 - y0) * (power_share - x0) / (x1 - x0)
    return 1.0


def speed_facts(gpu: Any, facts: Mapping[str, Any]) -> tuple[GpuSpec, list[str]]:
    """``gpu`` (a GpuView) as its speed estimates should see it, and notes saying what changed."""
    spec, catalog = gpu.spec, gpu.facts
    updates: dict[str, float] = {}
    notes: list[str] = []
    for name in OVERRIDES:
        value = getattr(spec, name, None)
        if value is not None:
            updates[name] = float(value)
            notes.append(f"{name} {float(value):g} (the rig's, over the catalog's {getattr(catalog, name)})")
    limit, board = spec.power_limit_w, catalog.tdp_w
    if limit and board and float(limit) < float(board):
        share = clock_share(float(limit) / float(board), catalog.architecture, facts)
        for name in TFLOPS:
            value = getattr(catalog, name, None)
            if value and name not in updates:
                updates[name] = float(value) * share
        notes.append(
            f"power limit {float(limit):g} W of {float(board):g} W: clocks and TFLOPS x {share:.3f}, "
            f"bandwidth unchanged (specs/rules/throughput.yaml power_limit)"
        )
    return (catalog.model_copy(update=updates) if updates else catalog), notes
