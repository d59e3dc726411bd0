"""RACK001: power per rack against the facility's per-rack limit; RACK002: a ``nodes-per-rack`` label
that is not a number of nodes.

Per node: the vendor's maximum (``max_power_w``) when the rig gives it, else the sum of the GPUs'
power limits (or board power), the CPU's TDP and rigcheck's platform allowance (``platform_w`` of
``specs/rules/power.yaml``, read through ``ctx.facts``). Nodes per rack: the node group's label
``nodes-per-rack`` (``nodes_per_rack`` is read too), else as many as fit in a rack (``rack_units`` of
the plugin's settings, 42 U by default: an EIA-310 full-height rack) at the chassis's ``rack_units``,
at most the group's count. RACK001 warns above ``warn_fraction`` of the limit (0.9 by default).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import rigcheck
from rigcheck_site_policy.settings import SitePolicyConfig

LABEL = "nodes-per-rack"

RACK_POWER = rigcheck.Rule(
    code="RACK001",
    name="rack-power-over-limit",
    summary="A rack of these nodes draws more than the facility allows per rack",
    severity="fail",
    docs=rigcheck.RuleDocs(
        what="Computes kW per rack (node power x nodes per rack) and compares it with `site.rack_power_limit_kw`: "
        "fail above the limit, warn above `warn_fraction` of it (90% unless `plugins-config.site_policy` says "
        "otherwise). Node power is `max_power_w`, else GPUs + CPU + the platform allowance; nodes per rack come "
        "from the label `nodes-per-rack` or from the rack's units (`rack_units`, 42 U) / `chassis.rack_units`.",
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


BAD_RACK_LABEL = rigcheck.Rule(
    code="RACK002",
    name="nodes-per-rack-label-invalid",
    summary="A node group's nodes-per-rack label is not a whole number of nodes",
    severity="fail",
    docs=rigcheck.RuleDocs(
        what="Fails a node group whose `nodes-per-rack` label (or `nodes_per_rack`) is not a whole number of at "
        "least 1. RACK001 is then not checked for that group, since its rack's power cannot be computed.",
        why="Labels are free text, so `nodes-per-rack: four` or `'2.5'` is valid YAML; a rack policy that "
        "silently guessed instead would pass a rack that may be over its power budget.",
        example="```yaml\nnodes:\n  - {count: 4, max_power_w: 10200, labels: {nodes-per-rack: four}}   # RACK002\n```",
        fix='Write the number of nodes in one rack as digits: `nodes-per-rack: "4"`; or remove the label to '
        "count nodes by rack units.",
        references=("docs/plugins.md in the rigcheck repository: the labels convention",),
    ),
)

_WHOLE = re.compile(r"^\s*\d+\s*$")


class RackPowerDensity(rigcheck.Checker):
    name = "site.rack-power"
    rules = (RACK_POWER, BAD_RACK_LABEL)

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
        settings: SitePolicyConfig = ctx.plugin_config
        platform_w = float(ctx.facts("power")["sustained"]["platform_w"])
        for node in ctx.nodes:
            label = rigcheck.find_label(node.spec.labels, LABEL)
            if label is not None and not (_WHOLE.match(label[1]) and int(label[1]) >= 1):
                key, value = label
                where = ctx.rig_at(f"{node.pointer}/labels/{key}")
                yield BAD_RACK_LABEL.failed(
                    f"{node.label}: label {key}: {value!r} is not a whole number of nodes",
                    location=where,
                    subject=ctx.node_subject(node),
                    evidence={"label": key, "value": value},
                    fix=f'write the number of nodes in one rack as digits ({key}: "2"), or remove the label to '
                    f"count nodes by rack units",
                )
                yield RACK_POWER.skipped(
                    f"{node.label}: nodes per rack unknown (label {key} is {value!r}: RACK002)",
                    location=where,
                )
                continue
            node_w, how = _node_power(node, platform_w)
            per_rack, per_rack_how = _nodes_per_rack(node, label, settings.rack_units)
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
            elif rack_kw > settings.warn_fraction * limit_kw:
                yield RACK_POWER.warned(
                    told + f" (over {settings.warn_fraction:.0%})",
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


def _nodes_per_rack(node, label: tuple[str, str] | None, rack_units: int) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    if label is not None:
        return int(label[1]), f"label {label[0]}"
    units = node.spec.chassis.rack_units if node.spec.chassis else None
    if units:
        return max(
            1, min(node.count, rack_units // units)
        ), f"{rack_units} U / {units} U, at most {node.count}"
    return node.count, "all nodes of the group in one rack"
