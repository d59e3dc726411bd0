"""PLT003: GPU card length against the chassis clearance, with a margin (docs/research/rules_facts.md COOL-3)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext, Fact, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.numbers import fmt

GPU_LENGTH = Rule(
    code="PLT003",
    name="gpu-longer-than-chassis-clearance",
    summary="A GPU card is longer than the chassis clearance, or leaves less than the margin",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares each card's length (the rig's `length_mm`, else the reference card's length from the "
        "catalog) with the chassis' `gpu_clearance_mm`: fail when the card is longer, warn when it leaves "
        "less than {facts:platform.gpu_length.margin_mm} mm, pass otherwise. When the case maker publishes a "
        "recommended maximum card length "
        "(`gpu_max_length_mm`), that already holds its margin and the card is compared with it alone. The "
        "margin is in `specs/rules/platform.yaml` (`gpu_length`).",
        why="Partner cards are often 30-50 mm longer than the reference design (RTX 4090: 304 mm Founders "
        "Edition, up to 357.6 mm for partner cards). A front fan or radiator takes 25 mm or more of the "
        "clearance a case maker quotes, and power cables need room to bend.",
        example="```yaml\ngpus: {model: RTX 4090, length_mm: 336}\nchassis: {gpu_clearance_mm: 360}   # PLT003 warn: "
        "24 mm left, under 30 mm\n```",
        fix="Choose a shorter card or a case with more clearance; remove or move the front fan or radiator.",
        references=(
            "RTX 4090 card sizes, https://www.wepc.com/tips/rtx-4090-size/",
            "docs/research/rules_facts.md COOL-2/COOL-3 (card dimensions; length and height clearance)",
        ),
    ),
)


GPU_HEIGHT = Rule(
    code="PLT007",
    name="gpu-taller-than-chassis-clearance",
    summary="A card with its power plug is taller than the case's side clearance",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares each card's height (the rig's `height_mm`, else the reference card's) with the chassis' "
        "`gpu_height_clearance_mm`: fail when the card alone is taller, warn when it leaves less than "
        "{facts:platform.gpu_height.plug_margin_mm} mm "
        "for a top-mounted power plug and its cable (rigcheck policy; `specs/rules/platform.yaml`).",
        why="Large cards are 137-150 mm tall before the plug; a side panel that presses on a 12VHPWR plug bends "
        "it out of its socket, and partly seated plugs have melted.",
        example="```yaml\ngpus: {model: RTX 4090, height_mm: 150}\nchassis: {gpu_height_clearance_mm: 165}"
        "   # PLT007 warn: 15 mm for the plug\n```",
        fix="A case with more side clearance, a card with an end-mounted or angled power connector, or a 90-degree "
        "adapter rated for the card's power.",
        references=(
            "https://www.wepc.com/tips/rtx-4090-size/",
            "docs/research/rules_facts.md COOL-3 (telepolis.pl on melted plugs)",
        ),
    ),
)


class GpuClearanceChecker(Checker):
    """A plain Checker: every card's length (PLT003) comes before every card's height (PLT007)."""

    name = "platform.gpu-clearance"
    rules = (GPU_LENGTH, GPU_HEIGHT)
    physical_build = True

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        yield from self._lengths(ctx)
        yield from self._heights(ctx)

    def _heights(self, ctx: CheckContext) -> Iterator[Finding]:
        facts = ctx.facts("platform")["gpu_height"]
        margin = float(facts["plug_margin_mm"])
        for node in self.walked_nodes(ctx):
            chassis = node.spec.chassis
            clearance = chassis.gpu_height_clearance_mm if chassis else None
            if clearance is None:
                continue  # rarely published; checked only when the rig gives it
            subject = ctx.node_subject(node)
            for gpu in node.gpus:
                height = gpu.fact("height_mm")
                where = ctx.rig_at(f"{gpu.pointer}/height_mm")
                if height.value is None:
                    yield GPU_HEIGHT.skipped(
                        f"{gpu.facts.name}: height unknown",
                        location=where,
                        subject=subject,
                        fix="add height_mm to the gpus entry",
                    )
                    continue
                left = clearance - height.value
                evidence = {
                    "card_height_mm": height.value,
                    "height_from": height.origin,
                    "clearance_mm": clearance,
                    "left_mm": left,
                    "plug_margin_mm": margin,
                    **facts.cite(),
                }
                told = (
                    f"{fmt(height.value)} mm tall {gpu.facts.name} in {fmt(clearance)} mm of side clearance"
                )
                severity = GPU_HEIGHT.graded(left, warn_at=margin, fail_at=0, higher_is_worse=False)
                if severity is Severity.FAIL:
                    yield GPU_HEIGHT.failed(
                        f"{told}: {fmt(-left)} mm too tall",
                        location=where,
                        evidence=evidence,
                        subject=subject,
                        fix="a case with more side clearance or a lower card",
                    )
                elif severity is Severity.WARN:
                    yield GPU_HEIGHT.warned(
                        f"{told}: {fmt(left)} mm left for the power plug and cable",
                        location=where,
                        evidence=evidence,
                        subject=subject,
                        fix="check the plug can be fully seated with the side panel on; consider "
                        "an angled adapter rated for the card's power",
                    )
                else:
                    yield GPU_HEIGHT.passed(
                        f"{told}: {fmt(left)} mm left", location=where, evidence=evidence, subject=subject
                    )

    def _lengths(self, ctx: CheckContext) -> Iterator[Finding]:
        facts = ctx.facts("platform")["gpu_length"]
        margin = float(facts["margin_mm"])
        for node in self.walked_nodes(ctx):
            subject = ctx.node_subject(node)
            chassis = node.spec.chassis
            clearance = chassis.gpu_clearance_mm if chassis else None
            recommended = chassis.gpu_max_length_mm if chassis else None
            for gpu in node.gpus:
                length = gpu.fact("length_mm")
                where = ctx.rig_at(f"{gpu.pointer}/length_mm")
                if length.value is None:
                    form = gpu.facts.form_factor
                    if form in ("SXM", "OAM", "SoC", "laptop"):
                        message = (
                            f"{gpu.facts.name} is a {form} part, not a card in a slot: no length to check"
                        )
                        fix = None
                    else:
                        message = f"{gpu.facts.name}: no card length in the catalog and none is given"
                        fix = "add length_mm to the gpus entry (the card maker's specification)"
                    yield GPU_LENGTH.skipped(message, location=where, subject=subject, fix=fix)
                    continue
                if recommended is not None:
                    yield self._recommended(ctx, node, gpu, length, float(recommended), where, subject)
                    continue
                if clearance is None:
                    yield GPU_LENGTH.skipped(
                        f"{node.label}: chassis.gpu_clearance_mm is not given, so the {fmt(length.value)} mm "
                        f"{gpu.facts.name} cannot be checked",
                        location=where,
                        subject=subject,
                        fix="add chassis.gpu_clearance_mm from the case maker's specification",
                    )
                    continue
                left = clearance - length.value
                evidence = {
                    "card_length_mm": length.value,
                    "length_from": length.origin,
                    "clearance_mm": clearance,
                    "left_mm": left,
                    "margin_mm": margin,
                    "formula": "left = clearance - card length",
                    **facts.cite(),
                }
                related = [ctx.rig_at(f"{node.pointer}/chassis/gpu_clearance_mm")]
                compared = f"{fmt(length.value)} mm {gpu.facts.name} in {fmt(clearance)} mm of clearance"
                severity = GPU_LENGTH.graded(left, warn_at=margin, fail_at=0, higher_is_worse=False)
                if severity is Severity.FAIL:
                    yield GPU_LENGTH.failed(
                        f"{compared}: {fmt(-left)} mm too long",
                        location=where,
                        related=related,
                        evidence=evidence,
                        subject=subject,
                        fix=f"choose a card of at most {fmt(clearance - margin)} mm, or a case with at least "
                        f"{fmt(length.value + margin)} mm of GPU clearance",
                    )
                elif severity is Severity.WARN:
                    yield GPU_LENGTH.warned(
                        f"{compared}: only {fmt(left)} mm left, under the {fmt(margin)} mm margin for front fans "
                        f"and cables",
                        location=where,
                        related=related,
                        evidence=evidence,
                        subject=subject,
                        fix=f"make sure no front fan or radiator sits in the card's path, or choose a case with "
                        f"at least {fmt(length.value + margin)} mm of clearance",
                    )
                else:
                    yield GPU_LENGTH.passed(
                        f"{compared}: {fmt(left)} mm left",
                        location=where,
                        related=related,
                        evidence=evidence,
                        subject=subject,
                    )

    @staticmethod
    def _recommended(
        ctx: CheckContext,
        node: NodeView,
        gpu: GpuView,
        length: Fact,
        recommended: float,
        where: Location,
        subject: str,
    ) -> Finding:
        """The case maker's recommended maximum length already holds its margin: compare without ours."""
        left = recommended - float(length.value)
        evidence = {
            "card_length_mm": length.value,
            "length_from": length.origin,
            "max_length_mm": recommended,
            "left_mm": left,
            "formula": "card length <= the case maker's recommended maximum",
        }
        related = [ctx.rig_at(f"{node.pointer}/chassis/gpu_max_length_mm")]
        compared = (
            f"{fmt(length.value)} mm {gpu.facts.name} against the case maker's recommended maximum of "
            f"{fmt(recommended)} mm"
        )
        if left < 0:
            return GPU_LENGTH.failed(
                f"{compared}: {fmt(-left)} mm too long",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=f"choose a card of at most {fmt(recommended)} mm, or a case recommended for longer cards",
            )
        return GPU_LENGTH.passed(
            f"{compared}: within it ({fmt(left)} mm to spare)",
            location=where,
            related=related,
            evidence=evidence,
            subject=subject,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(GpuClearanceChecker())
