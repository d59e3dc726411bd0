"""REL004: spare nodes for long runs on many nodes (docs/research/rules_facts.md REL-3).

BLOOM trained on 48 nodes with 4 spares; OPT-175B kept 12 buffer nodes for 128. A failed node
otherwise stops the job until it is repaired, since a data-parallel job cannot lose a rank.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.workload_on_rig import job_nodes, run_hours
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.numbers import fmt

SPARES = Rule(
    code="REL004",
    name="too-few-spare-nodes",
    summary="A run of more than a week on 16 or more nodes keeps fewer than 5% spare nodes",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="For runs longer than {facts:reliability.spares.min_hours} hours on {facts:reliability.spares.min_nodes} "
        "or more nodes: the spare nodes are the group's nodes the job does not use plus `spares:`; warns when they "
        "are fewer than `ceil({facts:reliability.spares.fraction} x nodes used)`.",
        why="Over a week on many nodes, several will fail (OPT-175B: about two a day on 128). Without a spare the "
        "job waits for a repair; with one it restarts from the last checkpoint in minutes.",
        example="```yaml\nnodes: [{count: 32, gpus: {model: H100 SXM, count: 8}}]\n# dp 256 for 336 h: all 32 used, "
        "0 spares < 2: REL004\n```",
        fix="Reserve spares (`spares: N` on the node group) or run on fewer nodes than the group has.",
        references=(
            "BLOOM, arXiv:2211.05100 (48 nodes + 4 spares)",
            "https://github.com/facebookresearch/metaseq/blob/main/projects/OPT/chronicles/final_update.md",
        ),
    ),
)


class SpareNodesChecker(WorkloadOnRigChecker):
    """Looks at the node group the job runs on (:func:`rigcheck.core.estimate.network.job_nodes`)."""

    name = "reliability.spare-nodes"
    rules = (SPARES,)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        found = job_nodes(ctx)
        where = ctx.workload_at("/parallelism")
        if found is None or workload.task == "inference":
            yield SPARES.passed("no multi-node training job", location=where, subject=ctx.subject)
            return
        group, used = found
        facts = ctx.facts("reliability")["spares"]
        fraction = float(facts["fraction"])
        min_nodes, min_hours = int(facts["min_nodes"]), float(facts["min_hours"])
        hours, hours_how = run_hours(ctx)
        spare = max(0, group.count - used) + (group.spec.spares or 0)
        needed = math.ceil(fraction * used)
        evidence = {
            "nodes_used": used,
            "spare_nodes": spare,
            "needed": needed,
            "run_hours": hours,
            "run_hours_from": hours_how,
            "min_nodes": min_nodes,
            "min_hours": min_hours,
            **facts.cite(),
        }
        if used < min_nodes or hours is None or hours <= min_hours:
            length = f"{fmt(hours, 0)} h" if hours is not None else "unknown length"
            yield SPARES.passed(
                f"{used} node(s), {length}: spares are advised from {min_nodes} nodes and {fmt(min_hours)} h",
                location=where,
                evidence=evidence,
                subject=ctx.subject,
            )
            return
        told = (
            f"{used} nodes for {fmt(hours, 0)} h ({hours_how}) with {spare} spare(s); "
            f"ceil({fraction:.0%} x {used}) = {needed}"
        )
        at = ctx.rig_at(
            f"{group.pointer}/spares" if group.spec.spares is not None else f"{group.pointer}/count"
        )
        if spare < needed:
            yield SPARES.warned(
                told,
                location=at,
                related=[where],
                evidence=evidence,
                subject=ctx.subject,
                fix=f"keep {needed} spare node(s) (spares: {needed}) or run on {group.count - needed} nodes",
            )
        else:
            yield SPARES.passed(told, location=at, evidence=evidence, subject=ctx.subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(SpareNodesChecker())
