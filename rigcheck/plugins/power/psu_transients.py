"""PWR002: GPU power transients against what the PSU rides out (docs/research/rules_facts.md PSU-3, PSU-4)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.power import NodePower, node_power
from rigcheck.core.spec.numbers import fmt

TRANSIENTS = Rule(
    code="PWR002",
    name="psu-transient-headroom-too-low",
    summary="GPU power spikes can exceed what the PSU is specified to ride out",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="GPUs draw 2-3x their board power for tens to hundreds of microseconds. An ATX 3.x PSU with a "
        "native 12VHPWR/12V-2x6 connector is tested to carry {facts:power.transients.atx3_excursion_factor:.0%} of "
        "its rating for {facts:power.transients.atx3_excursion_us} us, so rigcheck checks `sum(GPU limit x "
        "{facts:power.transients.gpu_transient_factor}) + CPU boost power (cpu.boost_w, else tdp_w) <= "
        "{facts:power.transients.atx3_excursion_factor:g} x PSU`. Any other PSU has no excursion rating, so it must "
        "have `PSU >= {facts:power.transients.legacy_headroom_factor} x sustained load`: below that an ATX 2.x unit "
        "fails (a stricter test than the ATX 3.x one, never a milder verdict), and a PSU whose ATX version is "
        "not given warns until it is. Redundant server PSUs, a node with the vendor's `max_power_w` and OEM "
        "workstations (`chassis.form_factor: workstation`) are left to the vendor's power budget; a rackmount "
        "case fed by retail ATX units is checked like any other. Numbers are in `specs/rules/power.yaml` "
        "(section `transients`).",
        why="A spike the PSU's over-current protection sees as a fault shuts the machine down mid-run; RTX 3090 "
        "and 4090 builds that pass the sustained check were known to trip such PSUs. Intel's own example sizes "
        "a 300 W GPU + 300 W CPU system at 750 W with an ATX 3.0 PSU but about 1,100 W with an ATX 2.x one.",
        example='```yaml\ngpus: {model: RTX 4090, count: 2}\ncpu: {tdp_w: 125}\npsu: {watts: 1200, atx_version: "2.52"}'
        "   # PWR002 fail: 1.5 x 1,125 W = 1,688 W\n```",
        fix="An ATX 3.x PSU with a native 12VHPWR/12V-2x6 cable, a larger PSU, or a lower GPU power limit.",
        references=(
            "https://hothardware.com/news/psu-manufs-can-skirt-atx-30-tolerance-testing",
            "Lenovo ST650 V2 GPU power table (2.18x for 200 us), "
            "https://easymanua.ls/lenovo/thinksystem-st650-v2/manual/379474?p=69",
            "https://www.tweaktown.com/news/85717",
        ),
    ),
)


def _psu_kind(power: NodePower) -> tuple[str, bool]:
    """What the PSUs are rated for: (words, whether that is known for every unit). An ATX 3.x unit
    whose connectors are not given may have the native cable that makes it excursion-tested."""
    majors = {str(p.atx_version).split(".")[0] for p in power.psus if p.atx_version}
    if not all(p.atx_version for p in power.psus):
        return "ATX version unknown", False
    if majors == {"2"}:
        return "ATX 2.x, no excursion rating", True
    if all(p.connectors for p in power.psus if not str(p.atx_version).startswith("2")):
        return "ATX 3.x without a native 12VHPWR/12V-2x6 cable, so not excursion-tested", True
    return "ATX 3.x, connectors not given", False


class PsuTransientChecker(PerNodeChecker):
    name = "power.psu-transients"
    rules = (TRANSIENTS,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        facts = ctx.facts("power")
        table = facts["transients"]
        spike, excursion, legacy = (
            float(table["gpu_transient_factor"]),
            float(table["atx3_excursion_factor"]),
            float(table["legacy_headroom_factor"]),
        )
        excursion_us = float(table["atx3_excursion_us"])
        subject = ctx.node_subject(node)
        power = node_power(node, facts)
        if not power.psus or not power.gpus:
            return
        where = ctx.rig_at(f"{power.psus[0].pointer}/watts")
        chassis = node.spec.chassis
        workstation = chassis is not None and chassis.form_factor == "workstation"
        redundant = any(p.spares for p in power.psus)
        if redundant or workstation or power.max_w is not None:
            why = (
                "redundant server PSUs"
                if redundant
                else "an OEM workstation's PSU"
                if workstation
                else "PSUs behind a vendor's maximum power figure (max_power_w)"
            )
            yield TRANSIENTS.skipped(
                f"{node.label}: left to the system vendor's power budget ({why}), not the ATX excursion rules",
                location=where,
                subject=subject,
            )
            return
        capacity = power.capacity_w
        cpu = power.cpu_boost_w or 0.0
        if all(p.native_12v for p in power.psus):
            peak = round(sum(g.count * g.watts * spike for g in power.gpus) + cpu, 6)
            limit = excursion * capacity
            evidence = {
                "peak_w": peak,
                "limit_w": limit,
                "gpu_transient_factor": spike,
                "atx3_excursion_factor": excursion,
                "cpu_boost_w": power.cpu_boost_w,
                "capacity_w": capacity,
                "formula": f"sum(GPU limit x {spike:g}) + CPU boost power <= {excursion:g} x PSU "
                "(ATX 3.x, native 12VHPWR)",
                **table.cite(),
            }
            told = (
                f"{node.label}: spikes up to {fmt(peak, 0)} W ({spike:g} x GPU limits + "
                f"{fmt(cpu, 0)} W CPU boost) against {fmt(limit)} W the ATX 3.x PSU rides out for "
                f"{fmt(excursion_us)} us"
            )
            if peak > limit:
                yield TRANSIENTS.failed(
                    told,
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"a PSU of at least {fmt(peak / excursion, 0)} W, or lower the GPU power limits",
                )
            else:
                yield TRANSIENTS.passed(told, location=where, evidence=evidence, subject=subject)
            return
        need = legacy * power.sustained_w
        kind, known = _psu_kind(power)
        evidence = {
            "sustained_w": power.sustained_w,
            "needed_w": need,
            "capacity_w": capacity,
            "legacy_headroom_factor": legacy,
            "psu_kind": kind,
            "formula": f"PSU >= {legacy:g} x sustained load (no ATX 3.x excursion rating)",
            **table.cite(),
        }
        told = (
            f"{node.label}: {fmt(capacity)} W PSU ({kind}) against {legacy:g} x "
            f"{fmt(power.sustained_w, 0)} W = {fmt(need, 0)} W for transient headroom"
        )
        if capacity >= need:
            yield TRANSIENTS.passed(told, location=where, evidence=evidence, subject=subject)
            return
        fix = f"an ATX 3.x PSU with a native 12V-2x6 cable, or at least {fmt(need, 0)} W"
        if known:
            yield TRANSIENTS.failed(told, location=where, evidence=evidence, subject=subject, fix=fix)
        else:
            yield TRANSIENTS.warned(
                told,
                location=where,
                evidence=evidence,
                subject=subject,
                fix=f"give psu.atx_version and connectors (an ATX 3.x unit with a native 12V-2x6 cable "
                f"is checked against its {excursion:.0%} excursion rating); else {fix}",
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(PsuTransientChecker())
