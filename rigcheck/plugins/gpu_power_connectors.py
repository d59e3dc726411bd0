"""PWR003: each card's power limit against what its power connectors and slot deliver (PSU-6)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

CONNECTORS = Rule(
    code="PWR003",
    name="gpu-power-over-connector-rating",
    summary="A card's power limit exceeds its power connectors plus the slot",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds the ratings of each card's power inputs (12VHPWR/12V-2x6 600 W, 8-pin PCIe 150 W, 6-pin 75 W, "
        "8-pin EPS 300 W) and the x16 slot's 75 W, and compares the sum with the card's power limit; also "
        "warns when a 12VHPWR card meets a PSU without a native 12VHPWR cable (an adapter of 8-pin cables: "
        "each carries 150 W, and the adapter's sense pins encode the total).",
        why="A card set above what its plugs may carry overheats them; partly seated 12VHPWR plugs melted on "
        "RTX 4090s. Two 8-pin cables cannot feed a 450 W card.",
        example="```yaml\ngpus: {model: RTX 3090, power_limit_w: 420, power_connectors: [8pin-pcie, 8pin-pcie]}"
        "   # PWR003: 300 + 75 = 375 W\n```",
        fix="Lower the power limit to the connector budget, use the card's full set of power cables, or a PSU "
        "with a native 12V-2x6 cable.",
        references=(
            "Intel ATX 3.0 design guide 2.1a (12VHPWR sense pins, 600 W)",
            "https://www.techpowerup.com/review/nvidia-geforce-rtx-4090-founders-edition/3.html",
        ),
    ),
)


class GpuPowerConnectorChecker(Checker):
    name = "power.gpu-connectors"
    rules = (CONNECTORS,)
    reads_workload = False

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        table = ctx.facts("power")["connectors"]
        for node in ctx.nodes:
            subject = f"{ctx.rig.name} / {node.label}"
            psu_plugs = {plug for psu in node.spec.psu or () for plug in psu.connectors or ()}
            for gpu in node.gpus:
                plugs = gpu.spec.power_connectors or list(gpu.facts.power_connectors or ())
                limit = gpu.fact("power_limit_w").value
                where = ctx.rig_at(
                    f"{gpu.pointer}/power_connectors" if gpu.spec.power_connectors else f"{gpu.pointer}/model"
                )
                if not plugs or limit is None:
                    yield CONNECTORS.skipped(
                        f"{gpu.facts.name}: power connectors or limit unknown",
                        location=where,
                        subject=subject,
                        fix="add power_connectors to the gpus entry",
                    )
                    continue
                if plugs == ["none"]:
                    yield CONNECTORS.passed(
                        f"{gpu.facts.name}: powered by its baseboard or slot, no cables",
                        location=where,
                        subject=subject,
                    )
                    continue
                budget = sum(float(table[plug]) for plug in plugs) + float(table["slot"])
                evidence = {
                    "power_limit_w": limit,
                    "connectors": plugs,
                    "budget_w": budget,
                    "formula": "sum(connector ratings) + 75 W slot",
                    **table.cite(),
                }
                told = (
                    f"{gpu.facts.name}: {fmt(limit)} W limit on {' + '.join(plugs)} + slot = {fmt(budget)} W"
                )
                if limit > budget:
                    yield CONNECTORS.failed(
                        told,
                        location=where,
                        evidence=evidence,
                        subject=subject,
                        fix=f"set nvidia-smi -pl {int(budget)} or lower, or connect the card's "
                        f"full set of power cables",
                    )
                    continue
                modern = {"12vhpwr", "12v-2x6"} & set(plugs)
                if modern and psu_plugs and not ({"12vhpwr", "12v-2x6"} & psu_plugs):
                    cables = min(4, -(-int(limit) // 150))
                    yield CONNECTORS.warned(
                        f"{told}; the PSU has no native 12VHPWR cable, so it needs an adapter fed by {cables} "
                        f"separate 8-pin PCIe cables",
                        location=where,
                        evidence=evidence,
                        subject=subject,
                        fix=f"use {cables} separate 8-pin cables on the adapter (no daisy-chained pigtails), or a "
                        f"PSU with a native 12V-2x6 cable; seat the plug fully",
                    )
                    continue
                yield CONNECTORS.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(GpuPowerConnectorChecker())
