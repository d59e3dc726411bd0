"""RACK001: power per rack against the facility's per-rack limit.

Per node: the vendor's maximum (``max_power_w``) when the rig gives it, else the sum of the GPUs'
power limits (or board power), the CPU's TDP and rigcheck's platform allowance (``platform_w`` of
``specs/rules/power.yaml``, read through ``ctx.facts``). Nodes per rack: the node group's label
``nodes-per-rack``, else as many as fit in 42 U (EIA-310 full-height rack) at the chassis's
``rack_units``, at most the group's count.
"""

from __future__ import annotations

from collections.abc import Iterator

import rigcheck

RACK_UNITS = 42  # EIA-310-E full-height rack
WARN_FRACTION = 0.9  # site policy: leave 10% for switches, PDUs and inrush

RACK_POWER = rigcheck.Rule(
    code="RACK001",
    name="rack-power-over-limit",
    summary="A rack of these nodes draws more than the facility allows per rack",
    severity="fail",
    docs=rigcheck.RuleDocs(
        what="Computes kW per rack (node power x nodes per rack) and compares it with `site.rack_power_limit_kw`: "
        "fail above the limit, warn above 90% of it. Node power is `max_power_w`, else GPUs + CPU + the platform "
        "allowance; nodes per rack come from the label `nodes-per-rack` or from 42 U / `chassis.rack_units`.",
        why="Air-cooled colocation racks are commonly provisioned for 10-20 kW; one DGX H100 draws up to 10.2 kW. "
        "A rack over its budget trips its PDU breakers or is refused by the facility.",
        example="```yaml\nsite: {rack_power_limit_kw: 20}\nnodes:\n  - {count: 4, max_power_w: 10200, labels: "
        "{nodes-per-rack: '4'}}   # 40.8 kW: RACK001\n```",
        fix="Fewer nodes per rack (spread them out), power-cap the GPUs, or a rack with a higher (liquid-cooled) "
        "power budget.",
        references=(
            "https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html (10.2 kW maximum)",
            "EIA-310-E (42 U rack)",
        ),
    ),
)


class RackPowerDensity(rigcheck.Checker):
    name = "site.rack-power"
    rules = (RACK_POWER,)

    def check(self, ctx: rigcheck.CheckContext) -> Iterator[rigcheck.Finding]:
        site = ctx.rig.site
        limit_kw = site.rack_power_limit_kw if site else None
        if limit_kw is None:
            yield RACK_POWER.skipped(
                "site.rack_power_limit_kw is not given",
                location=ctx.rig_at("/site"),
                fix="add site.rack_power_limit_kw (kW per rack)",
            )
            return
        platform_w = float(ctx.facts("power")["sustained"]["platform_w"])
        for node in ctx.nodes:
            node_w, how = _node_power(node, platform_w)
            per_rack, per_rack_how = _nodes_per_rack(node)
            rack_kw = node_w * per_rack / 1000
            evidence = {
                "node_w": node_w,
                "node_power_from": how,
                "nodes_per_rack": per_rack,
                "nodes_per_rack_from": per_rack_how,
                "rack_kw": round(rack_kw, 2),
                "limit_kw": limit_kw,
            }
            told = (
                f"{node.label}: {per_rack} node(s) per rack ({per_rack_how}) x {node_w:,.0f} W ({how}) = "
                f"{rack_kw:,.1f} kW against {limit_kw:g} kW per rack"
            )
            where = ctx.rig_at("/site/rack_power_limit_kw")
            related = [ctx.rig_at(node.pointer)]
            fix = f"at most {int(limit_kw * 1000 // node_w)} node(s) per rack, or power-cap the GPUs"
            if rack_kw > limit_kw:
                yield RACK_POWER.failed(told, location=where, related=related, evidence=evidence, fix=fix)
            elif rack_kw > WARN_FRACTION * limit_kw:
                yield RACK_POWER.warned(
                    told + f" (over {WARN_FRACTION:.0%})",
                    location=where,
                    related=related,
                    evidence=evidence,
                    fix=fix,
                )
            else:
                yield RACK_POWER.passed(told, location=where, related=related, evidence=evidence)


def _node_power(node, platform_w: float) -> tuple[float, str]:  # type: ignore[no-untyped-def]
    if node.spec.max_power_w:
        return float(node.spec.max_power_w), "max_power_w"
    gpus = sum(gpu.count * float(gpu.power_limit_w or gpu.facts.tdp_w or 0) for gpu in node.gpus)
    cpu = float(node.spec.cpu.tdp_w or 0) if node.spec.cpu else 0.0
    return gpus + cpu + platform_w, f"GPUs {gpus:,.0f} W + CPU {cpu:,.0f} W + platform {platform_w:,.0f} W"


def _nodes_per_rack(node) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    label = (node.spec.labels or {}).get("nodes-per-rack")
    if label:
        return int(label), "label nodes-per-rack"
    units = node.spec.chassis.rack_units if node.spec.chassis else None
    if units:
        return min(node.count, RACK_UNITS // units), f"{RACK_UNITS} U / {units} U, at most {node.count}"
    return node.count, "all nodes of the group in one rack"
