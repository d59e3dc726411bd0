"""PLT006: the cards' slot widths and gaps against the case's expansion slots (COOL-2)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.numbers import fmt

SLOTS = Rule(
    code="PLT006",
    name="gpu-slots-exceed-chassis",
    summary="The cards need more expansion slots than the case has",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds each card's slot width (the rig's `slots`, else the reference card's, rounded up: a 3.5-slot "
        "card blocks 4) and the gaps left between cards (`slot_gap`), and compares the sum with the "
        "chassis' `expansion_slots`. A card whose `length_mm` or `cooler` differs from the reference board's "
        "is a partner design and its width unknown until the rig gives `slots` (a 336 mm partner RTX 4090 "
        "takes 3.5 slots where the Founders Edition takes 3).",
        why="Triple-slot consumer cards (RTX 3090/4090 Founders Edition: 3 slots, partner cards 3.5-4) fill a "
        "7-slot case with two cards.",
        example="```yaml\ngpus: {model: RTX 4090, count: 3}       # 3 x 3 slots\nchassis: {expansion_slots: 7}"
        "          # PLT006 fail\n```",
        fix="Dual-slot cards (blower, workstation or datacenter models), a case or board with more slots, or "
        "risers in an open frame.",
        references=(
            "docs/research/rules_facts.md COOL-2 (card slot widths: techpowerup, wepc.com, wccftech, PB-11133)",
        ),
    ),
)


def card_slots(gpu: GpuView, length_tolerance_mm: float) -> tuple[float | None, str]:
    """The slots one card occupies: the rig's ``slots``, else the reference card's, but only when the rig
    does not describe another board (a length more than ``length_tolerance_mm`` off, or another cooler:
    partner cards are often wider)."""
    if gpu.spec.slots is not None:
        return gpu.spec.slots, "rig"
    reference = gpu.facts.slots
    if reference is None:
        return None, "not in the catalog"
    length, ref_length = gpu.spec.length_mm, gpu.facts.length_mm
    if (
        length is not None
        and ref_length is not None
        and abs(float(length) - float(ref_length)) > length_tolerance_mm
    ):
        return None, (
            f"a {fmt(float(length))} mm card is not the {fmt(float(ref_length))} mm reference board, whose "
            f"{fmt(float(reference))} slots it need not match"
        )
    if gpu.spec.cooler is not None and gpu.facts.cooler is not None and gpu.spec.cooler != gpu.facts.cooler:
        return None, f"a {gpu.spec.cooler} card is not the {gpu.facts.cooler} reference board"
    return reference, f"catalog:{gpu.facts.id}"


class SlotBudgetChecker(PerNodeChecker):
    name = "platform.slot-budget"
    rules = (SLOTS,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        tolerance_mm = float(ctx.facts("platform")["gpu_slots"]["reference_length_tolerance_mm"])
        if not node.gpus:
            return
        subject = ctx.node_subject(node)
        chassis = node.spec.chassis
        where = ctx.rig_at(f"{node.pointer}/chassis/expansion_slots")
        if chassis is None or chassis.expansion_slots is None:
            yield SLOTS.skipped(
                f"{node.label}: chassis.expansion_slots not given",
                location=where,
                subject=subject,
                fix="add chassis.expansion_slots to check the slot budget",
            )
            return
        if chassis.form_factor in ("open-frame", "rackmount"):
            yield SLOTS.passed(
                f"{node.label}: {chassis.form_factor}: cards are not limited by case slots",
                location=where,
                subject=subject,
            )
            return
        widths = []
        unknown = []
        for gpu in node.gpus:
            slots, why = card_slots(gpu, tolerance_mm)
            if slots is None:
                unknown.append(f"{gpu.facts.name} ({why})")
                continue
            widths.append((gpu, math.ceil(float(slots)), gpu.spec.slot_gap or 0))
        if unknown:
            yield SLOTS.skipped(
                f"{node.label}: slot width unknown for {', '.join(unknown)}",
                location=where,
                subject=subject,
                fix="add slots to the gpus entry (the card maker's spec sheet: 2, 2.5, 3, 3.5, 4)",
            )
            return
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
        told = (
            f"{node.label}: {cards} card(s) need {fmt(needed)} slots, the case has {chassis.expansion_slots}"
        )
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
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(SlotBudgetChecker())
