"""PWR003: each card's power limit against what its power connectors and slot deliver (PSU-6)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.numbers import fmt

CONNECTORS = Rule(
    code="PWR003",
    name="gpu-power-over-connector-rating",
    summary="A card's power limit exceeds its power connectors plus the slot",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds the ratings of each card's power inputs (12VHPWR/12V-2x6 {facts:power.connectors.12vhpwr} "
        "W, 8-pin PCIe {facts:power.connectors.8pin-pcie} W, 6-pin {facts:power.connectors.6pin-pcie} W, "
        "8-pin EPS {facts:power.connectors.8pin-eps} W) and the x16 slot's {facts:power.connectors.slot} W "
        "(none for a card with a 16-pin plug: it takes its load "
        "through the plug), and compares the sum with the card's power limit: fail above it; a 16-pin card "
        "also warns with less than {facts:power.connectors.warn_margin_16pin_fraction:.0%} margin (its pins "
        "are rated {facts:power.connectors.pin_capacity_16pin_factor:g}x the plug's 600 W, an 8-pin's 1.9x). "
        "Also warns when the PSUs have fewer native 12VHPWR/12V-2x6 cables than the node "
        "has 16-pin cards (each `psu.connectors` entry is one cable per unit; list a connector twice for two "
        "cables): the others need an adapter of 8-pin cables, each carrying 150 W.",
        why="A card set above what its plugs may carry overheats them; partly seated 12VHPWR plugs melted on "
        "RTX 4090s, and an RTX 5090 at 575 W uses 96% of its one 600 W plug. Two 8-pin cables cannot feed a "
        "450 W card.",
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


SIXTEEN_PIN = frozenset({"12vhpwr", "12v-2x6"})


def native_16pin_cables(node: NodeView) -> int | None:
    """Native 12VHPWR/12V-2x6 cables the node's PSUs have (each listed connector is one cable per unit);
    None when no PSU lists its connectors."""
    listed = [psu for psu in node.spec.psu or () if psu.connectors]
    if not listed:
        return None
    return sum(psu.count * sum(plug in SIXTEEN_PIN for plug in psu.connectors or ()) for psu in listed)


class GpuPowerConnectorChecker(PerNodeChecker):
    name = "power.gpu-connectors"
    rules = (CONNECTORS,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        table = ctx.facts("power")["connectors"]
        warn_margin = float(table["warn_margin_16pin_fraction"])
        pin_factor = float(table["pin_capacity_16pin_factor"])
        sixteen_pin_w = float(table["12vhpwr"])
        eight_pin_w = float(table["8pin-pcie"])
        adapter_inputs = int(table["adapter_max_8pin_inputs"])
        formula = (
            f"sum(connector ratings) + slot ({fmt(float(table['slot_with_16pin']))} W for a 16-pin card, "
            f"else {fmt(float(table['slot']))} W)"
        )
        subject = ctx.node_subject(node)
        cables = native_16pin_cables(node)
        cables_left = cables
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
            sixteen = bool(SIXTEEN_PIN & set(plugs))
            slot = float(table["slot_with_16pin"] if sixteen else table["slot"])
            budget = sum(float(table[plug]) for plug in plugs) + slot
            margin = (budget - float(limit)) / budget
            slot_words = f"{fmt(slot)} W slot" + (
                " (a 16-pin card draws its load through the plug)" if sixteen else ""
            )
            evidence = {
                "power_limit_w": limit,
                "connectors": plugs,
                "slot_w": slot,
                "budget_w": budget,
                "margin": round(margin, 3),
                "formula": formula,
                **table.cite(),
            }
            told = (
                f"{gpu.facts.name}: {fmt(limit)} W limit on {' + '.join(plugs)} + {slot_words} = "
                f"{fmt(budget)} W ({margin:.0%} margin)"
            )
            if limit > budget:
                yield CONNECTORS.failed(
                    told,
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"set nvidia-smi -pl {int(budget)} or lower, or connect the card's full set of power cables",
                )
                continue
            problems, fixes = [], []
            if sixteen and margin < warn_margin:
                safe = int(budget * (1 - warn_margin))
                problems.append(
                    f"under {warn_margin:.0%} margin on a 16-pin plug whose pins are rated only {pin_factor:g}x its "
                    f"{fmt(sixteen_pin_w)} W: one not fully seated or worn has no slack"
                )
                fixes.append(
                    f"seat the plug fully and check it after the first hours of load, or set "
                    f"nvidia-smi -pl {safe} for a {warn_margin:.0%} margin"
                )
            if sixteen and cables_left is not None:
                need = gpu.count
                if cables_left < need:
                    adapters = need - max(cables_left, 0)
                    feeds = min(adapter_inputs, -(-int(limit) // int(eight_pin_w)))
                    problems.append(
                        f"the PSUs have {cables} native 16-pin cable(s) for the node's 16-pin cards, so "
                        f"{adapters} of these card(s) run on an adapter fed by {feeds} separate 8-pin "
                        f"PCIe cables each"
                    )
                    fixes.append(
                        f"use {feeds} separate 8-pin cables on each adapter (no daisy-chained pigtails), "
                        f"or PSUs with a native 12V-2x6 cable per card"
                    )
                cables_left -= need
            if problems:
                evidence["native_16pin_cables"] = cables
                yield CONNECTORS.warned(
                    f"{told}; " + "; ".join(problems),
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix="; ".join(fixes),
                )
                continue
            yield CONNECTORS.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(GpuPowerConnectorChecker())
