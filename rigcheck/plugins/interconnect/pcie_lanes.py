"""ICX006: GPUs in x8/x4 or chipset slots in multi-GPU nodes (docs/research/rules_facts.md PLT-2, PLT-3)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import intra_node_link, pcie_link, pcie_x16_gbps

LANES = Rule(
    code="ICX006",
    name="gpu-on-narrow-or-chipset-pcie",
    summary="Multi-GPU node with GPUs on x8/x4 lanes or chipset slots, and GPU traffic over PCIe",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="For nodes with several GPUs: warns when some GPUs sit in chipset-attached slots "
        "(`pcie.chipset_gpus`), when slots are x4 or narrower, or when they are x8 and the GPUs talk over "
        "PCIe (no NVLink or NVSwitch between them); x8 with NVLink passes with a note.",
        why="Consumer CPUs have 16-24 GPU lanes: two cards run x8/x8, a third sits behind the chipset at x4 "
        "sharing the DMI link. PCIe all-reduce bandwidth halves at x8 and collapses behind the chipset.",
        example="```yaml\npcie: {gen: 4, lanes_per_gpu: 8, chipset_gpus: 1}   # ICX006\n```",
        fix="A workstation or server platform with x16 per GPU (Threadripper PRO, Xeon W, EPYC), NVLink between "
        "the GPUs, or fewer GPUs per consumer board.",
        references=(
            "https://www.computerbase.de/2023-01/b760-vs-h770-vs-z790-vergleich/",
            "docs/research/rules_facts.md PLT-2, PLT-3",
        ),
    ),
)


class PcieLanesChecker(PerNodeChecker):
    name = "interconnect.pcie-lanes"
    rules = (LANES,)

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        section = ctx.facts("platform")["pcie_lanes"]
        full_lanes, narrow_lanes = int(section["full_lanes"]), int(section["narrow_lanes"])
        if node.gpus_per_node < 2:
            return
        subject = ctx.node_subject(node)
        pcie = node.spec.pcie
        where = ctx.rig_at(f"{node.pointer}/pcie")
        if pcie is None:
            yield LANES.skipped(
                f"{node.label}: pcie lanes per GPU not given",
                location=where,
                subject=subject,
                fix="add pcie: {gen: 4, lanes_per_gpu: 16}",
            )
            return
        gpu = node.gpus[0]
        link = intra_node_link(node, gpu, ctx.facts("interconnect"))
        gen, lanes = pcie_link(node, gpu)
        rate = pcie_x16_gbps(gen) * lanes / 16  # the x16 rate, per lane
        evidence = {
            "gen": pcie.gen,
            "lanes_per_gpu": pcie.lanes_per_gpu,
            "link_gen": gen,
            "link_lanes": lanes,
            "chipset_gpus": pcie.chipset_gpus,
            "pcie_gbps_each_way": rate,
            "gpu_link": link.description,
            **section.cite(),
        }
        told = f"{node.label}: PCIe {pcie.gen}.0 x{pcie.lanes_per_gpu} per GPU ({rate:g} GB/s each way)"
        if (gen, lanes) != (pcie.gen, pcie.lanes_per_gpu):
            told = (
                f"{node.label}: PCIe {pcie.gen}.0 x{pcie.lanes_per_gpu} slots; the {gpu.facts.name} links at "
                f"PCIe {gen}.0 x{lanes} ({rate:g} GB/s each way)"
            )
        fix = f"x{full_lanes} per GPU on a workstation/server platform, or NVLink between the GPUs"
        if pcie.chipset_gpus:
            yield LANES.warned(
                f"{told}; {pcie.chipset_gpus} GPU(s) behind the chipset",
                location=where,
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        elif pcie.lanes_per_gpu <= narrow_lanes or (pcie.lanes_per_gpu < full_lanes and link.kind == "pcie"):
            yield LANES.warned(
                f"{told}, and GPU traffic goes over PCIe",
                location=where,
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        elif pcie.lanes_per_gpu < full_lanes:
            yield LANES.passed(
                f"{told}; GPU-to-GPU traffic uses {link.kind}",
                location=where,
                evidence=evidence,
                subject=subject,
            )
        else:
            yield LANES.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(PcieLanesChecker())
