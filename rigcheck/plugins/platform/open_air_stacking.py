"""PLT005: open-air cards packed side by side without slot gaps (docs/research/rules_facts.md COOL-1)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

STACKING = Rule(
    code="PLT005",
    name="open-air-cards-stacked",
    summary="Three or more open-air GPUs sit next to each other without slot gaps",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Counts the open-air (axial-fan) cards in each node (the rig's `cooler`, else the reference card's) "
        "that sit without an empty slot between them (`slot_gap: 0` or not given) in a case: warn at "
        "{facts:platform.open_air_stacking.warn_at_cards}, fail at {facts:platform.open_air_stacking.fail_at_cards}. "
        "Blower, liquid and passive server cards, and open frames with risers, pass.",
        why="Open-air coolers blow hot air into the case and into the next card's intake; the top card of a "
        "tight stack throttles. Lambda recommends at most two open-air RTX 3090s, and quad-GPU workstations "
        "use blower cards.",
        example="```yaml\ngpus: {model: RTX 4090, count: 4, cooler: open-air}\nchassis: {form_factor: full-tower}"
        "   # PLT005 fail\n```",
        fix="Blower-style or liquid-cooled cards, risers in an open frame, or fewer cards per case; leave a slot "
        "between cards.",
        references=(
            "https://lambdalabs.com/blog/deep-learning-hardware-deep-dive-rtx-30xx",
            "https://michaelriedl.com/2021/12/12/dual-gpu-fan.html",
        ),
    ),
)


class OpenAirStackingChecker(PerNodeChecker):
    name = "platform.open-air-stacking"
    rules = (STACKING,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        section = ctx.facts("platform")["open_air_stacking"]
        warn_at, fail_at = int(section["warn_at_cards"]), int(section["fail_at_cards"])
        if not node.gpus:
            return
        subject = ctx.node_subject(node)
        chassis = node.spec.chassis
        where = ctx.rig_at(f"{node.gpus[0].pointer}/cooler")
        if chassis and chassis.form_factor in ("open-frame", "rackmount"):
            yield STACKING.passed(
                f"{node.label}: {chassis.form_factor} chassis, cards are not stacked in a case",
                location=where,
                subject=subject,
            )
            return
        stacked = sum(
            gpu.count
            for gpu in node.gpus
            if gpu.fact("cooler").value == "open-air" and not (gpu.spec.slot_gap or 0)
        )
        evidence = {
            "open_air_cards_without_gaps": stacked,
            "warn_at": warn_at,
            "fail_at": fail_at,
            **section.cite(),
        }
        told = f"{node.label}: {stacked} open-air card(s) without slot gaps"
        severity = STACKING.graded(stacked, warn_at=warn_at, fail_at=fail_at, inclusive=True)
        fix = (
            None
            if severity is Severity.PASS
            else "use blower or liquid-cooled cards, an open frame with risers, or leave a slot between cards"
        )
        yield STACKING.finding(severity, told, location=where, evidence=evidence, fix=fix, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(OpenAirStackingChecker())
