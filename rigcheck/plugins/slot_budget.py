"""PLT006: the cards' slot widths and gaps against the case's expansion slots (COOL-2)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

SLOTS = Rule(
    code="PLT006",
    name="gpu-slots-exceed-chassis",
    summary="The cards need more expansion slots than the case has",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds each card's slot width (the rig's `slots`, else the reference card's, rounded up: a 3.5-slot "
        "card blocks 4) and the gaps left between cards (`slot_gap`), and compares the sum with the "
        "chassis' `expansion_slots`.",
        why="Triple-slot consumer cards (RTX 3090/4090 Founders Edition: 3 slots, partner cards 3.5-4) fill a "
        "7-slot case with two cards.",
        example="```yaml\ngpus: {model: RTX 4090, count: 3}       # 3 x 3 slots\nchassis: {expansion_slots: 7}"
        "          # PLT006 fail\n```",
        fix="Dual-slot cards (blower, workstation or datacenter models), a case or board with more slots, or "
        "risers in an open frame.",
        references=("rules_facts.md COOL-2 (card slot widths: techpowerup, wepc.com, wccftech, PB-11133)",),
    ),
)


class SlotBudgetChecker(Checker):
    name = "platform.slot-budget"
    rules = (SLOTS,)
    reads_workload = False

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        for node in ctx.nodes:
            if not node.gpus:
                continue
            subject = f"{ctx.rig.name} / {node.label}"
            chassis = node.spec.chassis
            where = ctx.rig_at(f"{node.pointer}/chassis/expansion_slots")
            if chassis is None or chassis.expansion_slots is None:
                yield SLOTS.skipped(
                    f"{node.label}: chassis.expansion_slots not given",
                    location=where,
                    subject=subject,
                    fix="add chassis.expansion_slots to check the slot budget",
                )
                continue
            if chassis.form_factor in ("open-frame", "rackmount"):
                yield SLOTS.passed(
                    f"{node.label}: {chassis.form_factor}: cards are not limited by case slots",
                    location=where,
                    subject=subject,
                )
                continue
            widths = []
            unknown = []
            for gpu in node.gpus:
                slots = gpu.fact("slots").value
                if slots is None:
                    unknown.append(gpu.facts.name)
                    continue
                widths.append((gpu, math.ceil(float(slots)), gpu.spec.slot_gap or 0))
            if unknown:
                yield SLOTS.skipped(
                    f"{node.label}: slot width unknown for {', '.join(unknown)}",
                    location=where,
                    subject=subject,
                    fix="add slots to the gpus entry",
                )
                continue
            cards = sum(gpu.count for gpu, _, _ in widths)
            needed = sum(gpu.count * width for gpu, width, _ in widths)
            needed += sum(gpu.count * gap for gpu, _, gap in widths) - (widths[-1][2] if widths else 0)
            evidence = {
                "slots_needed": needed,
                "expansion_slots": chassis.expansion_slots,
                "cards": cards,
                "widths": {gpu.facts.name: width for gpu, width, _ in widths},
                "formula": "sum(card slots) + gaps <= expansion slots",
            }
            told = f"{node.label}: {cards} card(s) need {fmt(needed)} slots, the case has {chassis.expansion_slots}"
            if needed > chassis.expansion_slots:
                yield SLOTS.failed(
                    told,
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix="dual-slot (blower or workstation) cards, a case with more slots, or risers",
                )
            else:
                yield SLOTS.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(SlotBudgetChecker())
