"""PWR001: sustained DC load against the PSU's rating, with 20% headroom (docs/research/rules_facts.md PSU-1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.power import node_power, power_limit_fix
from rigcheck.core.spec.numbers import fmt

PSU_LOAD = Rule(
    code="PWR001",
    name="psu-sustained-load-too-high",
    summary="Sustained DC load is over 80% of the PSU capacity (or over 100%)",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds the GPUs' power limits (the rig's `power_limit_w`, else each card's board power), the CPU's "
        "sustained power (`cpu.tdp_w`: Intel's base power, AMD's TDP) and the platform "
        "({facts:power.sustained.platform_w} W for board, RAM, "
        "drives and fans; an SXM/OAM baseboard adds {facts:power.sustained.baseboard_fraction} x its GPUs' board "
        "power for NVSwitches, NICs and fans), "
        "or takes the node's `max_power_w` (the vendor's maximum input power, x "
        "{facts:power.sustained.vendor_input_efficiency} for DC), and compares the "
        "sum with the PSU capacity (N x rating for N+M redundant units; unit by unit with `feeds_gpus`): warn "
        "above {facts:power.sustained.warn_above_fraction:.0%}, fail above "
        "{facts:power.sustained.fail_above_fraction:.0%}. OEM workstations and redundant servers with a vendor "
        "maximum pass up to "
        "100% (the vendor's budget). Without `cpu.tdp_w` the verdict must hold for a CPU of up to "
        "{facts:power.sustained.cpu_unknown_w_per_socket} W per "
        "socket, else the rule cannot check. Numbers are in `specs/rules/power.yaml`.",
        why="Training holds the GPUs at their power limit for days. A PSU run near its rating runs hot and fails "
        "more often (Lambda: failure rates rise as the load approaches 1,500 W on 1,600 W units); Puget "
        "measured 1,717 W at the wall from four RTX 3090s limited to 300 W on one 1,600 W PSU and called it "
        "'cutting it extremely close'.",
        example="```yaml\ngpus: {model: RTX 3090, count: 4}        # 4 x 350 W\ncpu: {tdp_w: 165}\n"
        "psu: {watts: 1600}                        # PWR001 fail: 1,665 W\n```",
        fix="A larger PSU (the finding gives the rating that leaves 20% headroom), or lower the GPU power limit "
        "with `nvidia-smi -pl` (the finding gives the value and what it costs in speed).",
        references=(
            "https://lambdalabs.com/blog/deep-learning-hardware-deep-dive-rtx-30xx",
            "Puget Systems quad RTX 3090 test, https://www.thefpsreview.com/2020/10/22/"
            "puget-systems-tests-four-blower-style-geforce-rtx-3090-graphics-cards/",
            "https://www.pugetsystems.com/labs/hpc/quad-rtx3090-gpu-wattage-limited-maxq-tensorflow-performance-1974/",
        ),
    ),
)


class PsuSustainedChecker(PerNodeChecker):
    name = "power.psu-sustained"
    rules = (PSU_LOAD,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        facts = ctx.facts("power")
        limits = facts["sustained"]
        warn_above, fail_above = float(limits["warn_above_fraction"]), float(limits["fail_above_fraction"])
        cpu_upper_per_socket = float(limits["cpu_unknown_w_per_socket"])
        subject = ctx.node_subject(node)
        power = node_power(node, facts)
        if not power.psus:
            yield PSU_LOAD.skipped(
                f"{node.label}: no psu given; sustained load {power.formula()}",
                location=ctx.rig_at(node.pointer),
                subject=subject,
                fix="add psu: {watts: ..., count: ...} to check it",
            )
            return
        capacity = power.capacity_w
        load = power.sustained_w
        share = load / capacity
        units = " + ".join(
            f"{p.active} x {p.watts:,.0f} W" + (f" ({p.active}+{p.spares})" if p.spares else "")
            for p in power.psus
        )
        per_unit = power.unit_loads()
        worst = max(per_unit, key=lambda u: u.load_w / u.psu.watts) if per_unit else None
        if worst is not None:
            share = worst.load_w / worst.psu.watts
        workstation = node.spec.chassis is not None and node.spec.chassis.form_factor == "workstation"
        vendor_server = power.max_w is not None and any(p.spares for p in power.psus)
        evidence: dict[str, Any] = {
            "sustained_w": load,
            "capacity_w": capacity,
            "share": round(share, 3),
            "gpu_w": power.gpu_w,
            "cpu_w": power.cpu_w,
            "platform_w": power.platform_w,
            "max_power_w": power.max_w,
            "psus": units,
            "formula": power.formula(),
            "warn_above": warn_above,
            "fail_above": fail_above,
            **limits.cite(),
        }
        if per_unit:
            evidence["units"] = [
                {
                    "psu": u.psu.index,
                    "unit": u.unit,
                    "load_w": round(u.load_w, 1),
                    "watts": u.psu.watts,
                    "carries": u.what,
                }
                for u in per_unit
            ]
        where = ctx.rig_at(f"{(worst.psu if worst else power.psus[0]).pointer}/watts")
        compared = f"{node.label}: {power.formula()} on {units} = {fmt(capacity)} W ({load / capacity:.0%})"
        if worst is not None:
            compared += (
                f"; unit by unit, the most loaded carries {worst.what} = {fmt(worst.load_w, 0)} W of its "
                f"{fmt(worst.psu.watts)} W ({share:.0%})"
            )
        needed = (worst.load_w if worst else load) / warn_above
        limit_fix = power_limit_fix(power, capacity * warn_above, facts)
        fix = (
            f"a PSU of at least {fmt(needed, 0)} W"
            + (" per unit" if worst else "")
            + (f", or {limit_fix}" if limit_fix else "")
        )
        severity = PSU_LOAD.graded(share, warn_at=warn_above, fail_at=fail_above)
        cpu_missing = power.cpu_w is None and power.max_w is None
        if cpu_missing and severity is not Severity.FAIL:
            upper = cpu_upper_per_socket * (node.spec.cpu.sockets if node.spec.cpu else 1)
            with_cpu = (load + upper) / capacity
            if PSU_LOAD.graded(with_cpu, warn_at=warn_above) is not Severity.PASS:
                yield PSU_LOAD.skipped(
                    f"{compared} without the CPU: cpu.tdp_w is not given, and with a CPU of up to "
                    f"{fmt(upper, 0)} W the load would reach {with_cpu:.0%}",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix="add cpu.tdp_w (all sockets) to complete the check",
                )
                return
        if severity is Severity.FAIL:
            yield PSU_LOAD.failed(
                f"{compared}: over the rating", location=where, evidence=evidence, fix=fix, subject=subject
            )
        elif severity is Severity.WARN and (workstation or vendor_server):
            whose = (
                "an OEM workstation's PSU, which its vendor sizes for the configurations it validates"
                if workstation
                else "redundant server PSUs, which the vendor sizes (N of N+M) for its maximum input power"
            )
            yield PSU_LOAD.passed(
                f"{compared}: above {warn_above:.0%}, within the rating of {whose}",
                location=where,
                evidence=evidence,
                subject=subject,
            )
        elif severity is Severity.WARN:
            yield PSU_LOAD.warned(
                f"{compared}: above {warn_above:.0%}",
                location=where,
                evidence=evidence,
                fix=fix,
                subject=subject,
            )
        elif cpu_missing:
            yield PSU_LOAD.passed(
                f"{compared}: within {warn_above:.0%} even with a CPU of up to "
                f"{fmt(cpu_upper_per_socket, 0)} W per socket (cpu.tdp_w not given)",
                location=where,
                evidence=evidence,
                subject=subject,
            )
        else:
            yield PSU_LOAD.passed(
                f"{compared}: within {warn_above:.0%}", location=where, evidence=evidence, subject=subject
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(PsuSustainedChecker())
