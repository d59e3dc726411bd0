"""PWR001: sustained DC load against the PSU's rating, with 20% headroom (rules_facts.md PSU-1)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.checker import Checker
from rigcheck.core.context import CheckContext
from rigcheck.core.estimation.power import node_power, power_limit_fix
from rigcheck.core.findings import Finding, Severity
from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.numbers import fmt
from rigcheck.core.rules import Rule, RuleDocs

PSU_LOAD = Rule(
    code="PWR001",
    name="psu-sustained-load-too-high",
    summary="Sustained DC load is over 80% of the PSU capacity (or over 100%)",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Adds the GPUs' power limits (the rig's `power_limit_w`, else each card's board power), the CPU's "
        "TDP and 150 W for board, RAM, drives and fans (or takes the node's `max_power_w`), and compares the "
        "sum with the PSU capacity (N x rating for N+M redundant units): warn above 80%, fail above 100%. "
        "Numbers are in `specs/rules/power.yaml`.",
        why="Training holds the GPUs at their power limit for days. A PSU run near its rating runs hot and fails "
        "more often (Lambda: failure rates rise as the load approaches 1,500 W on 1,600 W units); Puget "
        "measured 1,717 W at the wall from four RTX 3090s limited to 300 W on one 1,600 W PSU and called it "
        "'cutting it extremely close'.",
        example="```yaml\ngpus: {model: RTX 3090, count: 4}        # 4 x 350 W\ncpu: {tdp_w: 165}\n"
        "psu: {watts: 1600}                        # PWR001 fail: 1,715 W\n```",
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


class PsuSustainedChecker(Checker):
    name = "power.psu-sustained"
    rules = (PSU_LOAD,)
    reads_workload = False

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        facts = ctx.facts("power")
        limits = facts["sustained"]
        warn_above, fail_above = float(limits["warn_above_fraction"]), float(limits["fail_above_fraction"])
        for node in ctx.nodes:
            subject = f"{ctx.rig.name} / {node.label}"
            power = node_power(node, facts)
            if not power.psus:
                yield PSU_LOAD.skipped(
                    f"{node.label}: no psu given; sustained load {power.formula()}",
                    location=ctx.rig_at(node.pointer),
                    subject=subject,
                    fix="add psu: {watts: ..., count: ...} to check it",
                )
                continue
            capacity = power.capacity_w
            load = power.sustained_w
            share = load / capacity
            units = " + ".join(
                f"{p.active} x {p.watts:,.0f} W" + (f" ({p.active}+{p.spares})" if p.spares else "")
                for p in power.psus
            )
            evidence = {
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
            where = ctx.rig_at(f"{power.psus[0].pointer}/watts")
            compared = f"{node.label}: {power.formula()} on {units} = {fmt(capacity)} W ({share:.0%})"
            needed = load / warn_above
            limit_fix = power_limit_fix(power, capacity * warn_above, facts)
            fix = f"a PSU of at least {fmt(needed, 0)} W" + (f", or {limit_fix}" if limit_fix else "")
            if share > fail_above:
                yield PSU_LOAD.failed(
                    f"{compared}: over the rating",
                    location=where,
                    evidence=evidence,
                    fix=fix,
                    subject=subject,
                )
            elif share > warn_above:
                yield PSU_LOAD.warned(
                    f"{compared}: above {warn_above:.0%}",
                    location=where,
                    evidence=evidence,
                    fix=fix,
                    subject=subject,
                )
            elif power.cpu_w is None and power.max_w is None:
                yield PSU_LOAD.skipped(
                    f"{compared} without the CPU: cpu.tdp_w is not given",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix="add cpu.tdp_w (all sockets) to complete the check",
                )
            else:
                yield PSU_LOAD.passed(
                    f"{compared}: within {warn_above:.0%}", location=where, evidence=evidence, subject=subject
                )


@hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(PsuSustainedChecker())
