"""PWR004: redundant PSUs (N+M) must carry the node with M units failed (docs/research/rules_facts.md PSU-12)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.power import node_power
from rigcheck.core.spec.numbers import fmt

REDUNDANCY = Rule(
    code="PWR004",
    name="psu-redundancy-insufficient",
    summary="With the redundant PSUs failed, the remaining ones cannot carry the node",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what='For PSUs declared `redundancy: "N+M"`, compares N x rating (the capacity left with M units '
        "failed) with the node's maximum input power (`max_power_w`, as vendors budget it: NVIDIA's DGX H100 "
        "needs 4 of its 6 x 3.3 kW units for 10.2 kW and runs at reduced performance on three), else the "
        "sustained DC load; also checks that `count` equals N + M.",
        why="Redundancy exists to survive a PSU or feed failure. If the survivors cannot carry the load, the "
        "first failure stops the node (DGX H100: 6 x 3.3 kW in a 4+2 design for a 10.2 kW maximum).",
        example='```yaml\nmax_power_w: 10200\npsu: {watts: 3300, count: 6, redundancy: "5+1"}   # passes: 16.5 kW\n'
        'psu: {watts: 2000, count: 6, redundancy: "3+3"}   # PWR004: 6 kW\n```',
        fix="More or larger PSUs, or a redundancy scheme whose N units cover the maximum power.",
        references=("DGX H100/H200 User Guide, Power Specifications (6 x 3.3 kW, 4+2, 10.2 kW max)",),
    ),
)


class PsuRedundancyChecker(PerNodeChecker):
    name = "power.psu-redundancy"
    rules = (REDUNDANCY,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        subject = ctx.node_subject(node)
        power = node_power(node, ctx.facts("power"))
        for psu in power.psus:
            if not psu.spares:
                continue
            where = ctx.rig_at(f"{psu.pointer}/redundancy")
            # Vendors budget N+M as N x rating >= the maximum input power (DGX H100: 4 x 3.3 kW for
            # 10.2 kW, "reduced performance if three PSUs lose power"; DGX B200: 5 x 3.3 kW for 14.3 kW)
            need = power.max_w if power.max_w is not None else power.sustained_w
            evidence = {
                "active": psu.active,
                "spares": psu.spares,
                "count": psu.count,
                "watts": psu.watts,
                "capacity_with_spares_failed_w": psu.capacity_w,
                "node_max_w": need,
                "max_from": "max_power_w (input)" if power.max_w is not None else "sustained load",
            }
            if psu.active + psu.spares != psu.count:
                yield REDUNDANCY.warned(
                    f"{node.label}: redundancy {psu.active}+{psu.spares} does not add up to count {psu.count}",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"set count: {psu.active + psu.spares} or correct the redundancy",
                )
                continue
            told = (
                f"{node.label}: with {psu.spares} of {psu.count} PSUs failed, {psu.active} x {fmt(psu.watts)} W "
                f"= {fmt(psu.capacity_w)} W against {fmt(need)} W ({evidence['max_from']})"
            )
            if psu.capacity_w < need:
                yield REDUNDANCY.failed(
                    told,
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"PSUs of at least {fmt(need / psu.active, 0)} W, or "
                    f"{-(-int(need) // int(psu.watts))}+{psu.spares} units",
                )
            else:
                yield REDUNDANCY.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(PsuRedundancyChecker())
