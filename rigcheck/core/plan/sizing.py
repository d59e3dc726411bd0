"""Rigs built from a GPU, a count and a platform template, each part sized by rigcheck's own rules: RAM
at ``platform.system_ram.recommended_ratio`` x VRAM, the cheapest CPU that PLT002 passes, the cheapest PSU
that PWR001 and PWR002 pass, blower cards where PLT005 would warn about stacked open-air cards, a case
with the card's length plus ``platform.gpu_length.margin_mm`` of clearance, the cheapest NVMe that STO003
passes; where no part passes, the cheapest with which the rules only warn. A part the template has no
sourced price for is listed as such; nothing is guessed."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rigcheck.core.catalog.catalog import Catalog, GpuSpec
from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.engine.severity import Severity
from rigcheck.core.plan.candidates import BUILD_COUNTS, Candidate, slug
from rigcheck.core.plan.prices import Part, Price, PriceBook, Template

#: ``judge(rig, codes)``: the worst the rules ``codes`` say of ``rig`` (with the workload): pass, warn or fail.
Judge = Callable[[dict[str, Any], tuple[str, ...]], Severity]


def built_candidates(
    book: PriceBook,
    catalog: Catalog,
    judge: Judge,
    gpu_ids: Sequence[str],
    max_gpus: int,
) -> Iterator[Candidate]:
    """A candidate per GPU x count x template that can hold that many of that GPU."""
    for gpu_id in gpu_ids:
        gpu = catalog.get(gpu_id)
        form = "sxm" if gpu.form_factor in ("SXM", "OAM") else "pcie"
        for count in BUILD_COUNTS:
            if count > max_gpus:
                continue
            for template in book.templates:
                if template.gpu_form_factor != form or count > template.max_gpus:
                    continue
                if form == "sxm" and count != template.max_gpus:
                    continue  # SXM parts come on a full baseboard
                if template.name == "desktop" or count > _smaller_template_max(book, template, form):
                    yield build(book, template, gpu, count, judge)


def _smaller_template_max(book: PriceBook, template: Template, form: str) -> int:
    """The most GPUs a smaller template of the same kind holds (a 1-GPU rig is built on a desktop only)."""
    smaller = [
        t.max_gpus for t in book.templates if t.gpu_form_factor == form and t.max_gpus < template.max_gpus
    ]
    return max(smaller, default=0)


def build(book: PriceBook, template: Template, gpu: GpuSpec, count: int, judge: Judge) -> Candidate:
    platform = load_rule_facts("platform")
    name = f"build {count}x {gpu.name} ({template.name})"
    node: dict[str, Any] = {"name": slug(template.name), "gpus": {"model": gpu.id, "count": count}}
    notes: list[str] = []
    parts: list[tuple[str, Price | None]] = [
        (f"{count} x {gpu.name}", _times(book.gpu_prices.get(gpu.id), count))
    ]
    if book.gpu_prices.get(gpu.id) is None:
        notes.append(f"no sourced price for the {gpu.name}")
    if count >= int(platform["open_air_stacking"]["warn_at_cards"]) and gpu.cooler == "open-air":
        node["gpus"]["cooler"] = "blower"
        if book.blower_edition_slots:
            node["gpus"]["slots"] = book.blower_edition_slots
        notes.append("blower editions of the card, as PLT005 asks for this many cards")
    if count > 1:
        node["gpu_interconnect"] = {"kind": "nvswitch" if template.gpu_form_factor == "sxm" else "pcie"}
    lanes = template.lanes_one_gpu if count == 1 else template.lanes_per_gpu_several
    if template.pcie_gen and lanes:
        node["pcie"] = {"gen": int(template.pcie_gen), "lanes_per_gpu": int(lanes)}
    vram = gpu.memory_gib * count
    ram_gb = _ram(template, vram * float(platform["system_ram"]["recommended_ratio"]), parts, notes)
    if ram_gb:
        node["memory_gib"] = ram_gb
    if template.gpu_form_factor == "pcie":
        margin = float(platform["gpu_length"]["margin_mm"])
        node["chassis"] = (
            {"form_factor": template.chassis_form_factor} if template.chassis_form_factor else {}
        )
        if gpu.length_mm:
            node["chassis"]["gpu_clearance_mm"] = math.ceil(gpu.length_mm + margin)
            notes.append(f"a case with at least {math.ceil(gpu.length_mm + margin)} mm of GPU clearance")
    rig = {"apiVersion": "rigcheck/v1", "kind": "Rig", "name": slug(name), "nodes": [node]}
    _choose(template, "motherboard", parts, rig, judge, (), lambda part: _board_fits(part, count))
    _choose(template, "cpu", parts, rig, judge, ("PLT002",), None, apply=_apply_cpu)
    _choose(template, "psu", parts, rig, judge, ("PWR001", "PWR002"), None, apply=_apply_psu)
    _choose(template, "case", parts, rig, judge, (), None)
    _choose(template, "nvme", parts, rig, judge, ("STO003",), None, apply=_apply_nvme)
    for unpriced in template.unpriced:
        parts.append((f"{unpriced} ({template.name})", None))
    if template.unpriced:
        notes.append(f"no sourced price for the {template.name}'s {', '.join(template.unpriced)}")
    return Candidate(name=name, kind="buy", rig=rig, gpu_name=gpu.name, gpus=count, parts=parts, notes=notes)


def _times(price: Price | None, count: int) -> Price | None:
    return price.times(count) if price is not None else None


def _ram(
    template: Template, want_gb: float, parts: list[tuple[str, Price | None]], notes: list[str]
) -> float:
    """Kits of the template's cheapest RAM part, enough for ``want_gb`` (capped by the template, and by
    its memory slots: as many kits as the slots hold)."""
    kits = template.parts.get("ram") or ()
    if not kits:
        return 0.0
    kit = kits[0]
    capacity = float(kit.attributes.get("capacity_gb", 0)) or 1.0
    cap = float(template.max_ram_gb) if template.max_ram_gb else math.inf
    if template.memory_slots:
        cap = min(cap, template.memory_slots // int(kit.attributes.get("modules", 1)) * capacity)
    count = max(1, math.ceil(min(want_gb, cap) / capacity))
    total = count * capacity  # memory sold as "64 GB" is 64 GiB
    parts.append((f"{count} x {kit.model}", _times(kit.price, count)))
    if want_gb > cap:
        notes.append(f"RAM capped at the {template.name}'s {cap:g} GB")
    return total


def _board_fits(part: Part, count: int) -> bool:
    return int(part.attributes.get("cpu_gpu_slots", 1)) >= count


def _apply_cpu(node: dict[str, Any], part: Part) -> None:
    node["cpu"] = {"model": part.model, "cores": int(part.attributes["cores"])}
    if part.attributes.get("tdp_w"):
        node["cpu"]["tdp_w"] = float(part.attributes["tdp_w"])


def _apply_psu(node: dict[str, Any], part: Part) -> None:
    psu: dict[str, Any] = {"watts": float(part.attributes["watts"])}
    version = re.search(r"(\d)\.(\d|x)", str(part.attributes.get("standard", "")))
    if version:  # "ATX 3.x": the lowest 3.x, the conservative reading
        psu["atx_version"] = f"{version.group(1)}.{0 if version.group(2) == 'x' else version.group(2)}"
    rating = str(part.attributes.get("efficiency", "")).lower().replace("80+", "80plus").replace(" ", "-")
    if rating.startswith("80plus"):
        psu["efficiency"] = rating
    node["psu"] = psu


def _apply_nvme(node: dict[str, Any], part: Part) -> None:
    node["storage"] = [
        {
            "name": "nvme",
            "kind": "nvme",
            "capacity_gb": float(part.attributes["capacity_tb"]) * 1000,
            "roles": ["data", "scratch", "checkpoints"],
        }
    ]


def _choose(
    template: Template,
    category: str,
    parts: list[tuple[str, Price | None]],
    rig: dict[str, Any],
    judge: Judge,
    codes: tuple[str, ...],
    fits: Callable[[Part], bool] | None,
    apply: Callable[[dict[str, Any], Part], None] | None = None,
) -> None:
    """The cheapest part of ``category`` (priced first) that ``fits`` and with which the rules ``codes``
    neither warn nor fail; else the cheapest with which they only warn; else the last one tried (its
    findings then show in the plan)."""
    options = [part for part in template.parts.get(category) or () if fits is None or fits(part)]
    if not options:
        return
    node = rig["nodes"][0]
    chosen, chosen_verdict = options[-1], Severity.FAIL
    for part in options:
        if apply is not None:
            apply(node, part)
        verdict = judge(rig, codes) if codes else Severity.PASS
        if verdict.rank < chosen_verdict.rank:
            chosen, chosen_verdict = part, verdict
        if verdict is Severity.PASS:
            break
    if apply is not None:
        apply(node, chosen)
    parts.append((chosen.model, chosen.price))
