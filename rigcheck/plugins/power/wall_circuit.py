"""PWR005: wall power of every PSU on a circuit against 80% of the breaker (PSU-8, PSU-9, PSU-10)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.power import node_power, power_limit_fix, wall_watts
from rigcheck.core.spec.models.rig import Circuit
from rigcheck.core.spec.numbers import fmt

CIRCUIT = Rule(
    code="PWR005",
    name="wall-circuit-overloaded",
    summary="The PSUs on a circuit draw more than 80% of its breaker rating",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Converts each node's DC load to wall power (DC / PSU efficiency at that load, from the 80 PLUS "
        "curve or the rig's `efficiency_pct`), adds every PSU on the same circuit (x the node group's "
        "count), and compares with the circuit's continuous limit: volts x amps (x sqrt 3 for three phases) "
        "x {facts:power.circuit.continuous_fraction}: fail above it, warn above "
        "{facts:power.circuit.warn_above_fraction:.0%} of it. PSUs name their circuit with `psu.circuit`; with one "
        "circuit, all PSUs are on it.",
        why="A training run is a continuous load. The US National Electrical Code sizes breakers at 125% of "
        "continuous loads, so a 15 A / 120 V outlet carries 1,440 W, not 1,800 W; a second PSU on the same "
        "circuit does not help. Puget's four RTX 3090s drew 1,717 W at the wall.",
        example="```yaml\nsite: {circuit: {volts: 120, amps: 15}}   # 1,440 W continuous\nnodes:\n  - gpus: "
        "{model: RTX 3090, count: 4}   # PWR005: about 1,860 W at the wall\n```",
        fix="A 20 A or 230 V circuit, split the PSUs across circuits (`psu.circuit`), or lower the GPU power "
        "limits (the finding gives the `nvidia-smi -pl` value).",
        references=(
            "NEC 210.19(A)(1) and 210.20(A) (continuous loads at 80%)",
            "https://en.wikipedia.org/wiki/80_Plus",
            "https://www.thefpsreview.com/2020/10/22/puget-systems-tests-four-blower-style-geforce-rtx-3090-graphics-cards/",
        ),
    ),
)


class WallCircuitChecker(Checker):
    """A plain Checker: it walks the site's circuits, each summing the PSUs of every node group on it."""

    name = "power.wall-circuit"
    rules = (CIRCUIT,)
    physical_build = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        facts = ctx.facts("power")
        site = ctx.rig.site
        circuits = []
        if site and site.circuit:
            circuits = [site.circuit]
        elif site and site.circuits:
            circuits = list(site.circuits)
        if not circuits:
            yield CIRCUIT.skipped(
                "site.circuit is not given, so the wall circuit cannot be checked",
                location=ctx.rig_at("/site"),
                subject=ctx.subject,
                fix="add site: {circuit: {volts: 120, amps: 15}} (or circuits: [...])",
            )
            return
        names = [c.name or "the circuit" for c in circuits]
        loads: dict[str, list[tuple[str, float, str]]] = {name: [] for name in names}
        for node in self.walked_nodes(ctx):
            power = node_power(node, facts)
            for psu, wall, why in wall_watts(power, facts):
                target = psu.circuit or (names[0] if len(names) == 1 else None)
                if target not in loads:
                    yield CIRCUIT.skipped(
                        f"{node.label}: its PSU is on no known circuit ({psu.circuit or 'none given'}; circuits: "
                        f"{', '.join(names)})",
                        location=ctx.rig_at(psu.pointer),
                        subject=ctx.subject,
                        fix="set psu.circuit to one of the site's circuit names",
                    )
                    continue
                loads[target].append(
                    (f"{node.count} x {node.label} at {why}", wall * node.count, psu.pointer)
                )
        continuous = facts["circuit"]
        warn_fraction = float(continuous["warn_above_fraction"])
        for index, circuit in enumerate(circuits):
            name = names[index]
            pointer = "/site/circuit" if site and site.circuit else f"/site/circuits/{index}"
            fraction = circuit.continuous_load_fraction or float(continuous["continuous_fraction"])
            nominal = circuit.volts * circuit.amps * (math.sqrt(3) if circuit.phases == 3 else 1)
            limit = nominal * fraction
            parts = loads[name]
            total = sum(watts for _, watts, _ in parts)
            evidence = {
                "circuit": name,
                "volts": circuit.volts,
                "amps": circuit.amps,
                "phases": circuit.phases,
                "nominal_w": round(nominal),
                "continuous_limit_w": round(limit),
                "wall_w": round(total),
                "loads": [f"{label}: {watts:,.0f} W" for label, watts, _ in parts],
                "formula": "sum(DC load / efficiency) <= volts x amps"
                + (" x sqrt(3)" if circuit.phases == 3 else "")
                + f" x {fraction:g}",
                **continuous.cite(),
            }
            where = ctx.rig_at(pointer)
            label = name if name == "the circuit" else f"circuit {name}"
            told = (
                f"{label}: {fmt(total, 0)} W at the wall against {fmt(limit, 0)} W continuous "
                f"({fmt(circuit.volts)} V x {fmt(circuit.amps)} A{' x 3 phases' if circuit.phases == 3 else ''} "
                f"x {fraction:.0%})"
            )
            if not parts:
                yield CIRCUIT.passed(
                    f"{label}: no PSUs on it", location=where, evidence=evidence, subject=ctx.subject
                )
                continue
            severity = CIRCUIT.graded(total, warn_at=warn_fraction * limit, fail_at=limit)
            if severity is Severity.PASS:
                yield CIRCUIT.passed(told, location=where, evidence=evidence, subject=ctx.subject)
                continue
            fix = self._fix(ctx, facts, limit / total if total else 1, circuit)
            if severity is Severity.FAIL:
                yield CIRCUIT.failed(told, location=where, evidence=evidence, fix=fix, subject=ctx.subject)
            else:
                yield CIRCUIT.warned(
                    f"{told}: above {warn_fraction:.0%} of it",
                    location=where,
                    evidence=evidence,
                    fix=fix,
                    subject=ctx.subject,
                )

    @staticmethod
    def _fix(ctx: CheckContext, facts: dict[str, FactSection], scale: float, circuit: Circuit) -> str:
        """Other circuits, a larger breaker or a higher voltage, and (for one node) a lower GPU power limit."""
        section = facts["circuit"]
        low_voltage_below = float(section["low_voltage_below_v"])
        larger_breaker = float(section["small_breaker_below_a"])
        options = ["move PSUs to another circuit (psu.circuit)"]
        if circuit.volts < low_voltage_below and circuit.amps < larger_breaker:
            options.append(f"a {fmt(larger_breaker)} A circuit")
        if circuit.volts < low_voltage_below:
            options.append("a 208-240 V circuit")
        advice = ", or ".join(options)
        if len(ctx.nodes) == 1:
            power = node_power(ctx.nodes[0], facts)
            limit = power_limit_fix(
                power, power.sustained_w * scale * float(section["power_limit_fix_fraction"]), facts
            )
            if limit:
                advice += f", or {limit}"
        return advice


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(WallCircuitChecker())
