"""NET007: node groups whose compute links sit on different subnets (docs/research/rules_facts.md NET-2).

NCCL and the rendezvous connect every node to every other; nodes in different subnets (or cloud
VPCs and placement groups) need routes and open security groups between them, and cross-subnet
traffic often leaves the low-latency fabric altogether.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.network import carries_gpu_traffic

SUBNETS = Rule(
    code="NET007",
    name="nodes-on-different-subnets",
    summary="GPU node groups declare compute links on subnets that do not overlap",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Collects the `subnet` of each GPU node group's compute links (role `compute`, `any` or none) and "
        "warns when two groups share none. Groups without declared subnets are not compared.",
        why="A job spread over nodes that cannot reach each other directly hangs at rendezvous or at NCCL's "
        "first collective; routed traffic between subnets skips RDMA and crosses slower switches.",
        example="```yaml\nnodes:\n  - {name: a, network: [{kind: roce, subnet: 10.0.1.0/24}]}\n  - {name: b, network: "
        "[{kind: roce, subnet: 10.0.2.0/24}]}   # NET007\n```",
        fix="Put the nodes in one subnet (one cloud placement group or VPC subnet), or route the subnets and open "
        "the security groups between them.",
        references=(
            "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/networking_troubleshooting.html",
        ),
    ),
)


def _subnets(node: NodeView) -> set[str]:
    return {
        link.subnet.strip() for link in node.spec.network or () if link.subnet and carries_gpu_traffic(link)
    }


class NodeSubnetsChecker(Checker):
    """A plain checker: it compares the node groups with each other, after walking them all."""

    name = "network.subnets"
    rules = (SUBNETS,)

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        groups = [(node, _subnets(node)) for node in ctx.nodes if node.gpus]
        declared = [(node, subnets) for node, subnets in groups if subnets]
        where = ctx.rig_at("/nodes")
        if len(declared) < 2:
            told = "one GPU node group" if len(groups) < 2 else "fewer than two node groups declare subnets"
            yield SUBNETS.passed(f"{told}: nothing to compare", location=where, subject=f"rig {ctx.rig.name}")
            return
        components = _components(declared)
        if len(components) == 1:
            yield SUBNETS.passed(
                f"{len(declared)} node groups share a subnet", location=where, subject=f"rig {ctx.rig.name}"
            )
            return
        main = max(components, key=len)
        for component in components:
            if component is main:
                continue
            first = component[0]
            names = ", ".join(node.label for node, _ in component[:3]) + (
                f" and {len(component) - 3} more" if len(component) > 3 else ""
            )
            subnets = sorted(set().union(*(subnet for _, subnet in component)))
            yield SUBNETS.warned(
                f"{names} ({', '.join(subnets[:4])}) share no subnet with {main[0][0].label} and the "
                f"{len(main) - 1} other group(s) joined to it ({', '.join(sorted(main[0][1])[:2])})",
                location=ctx.rig_at(f"{first[0].pointer}/network"),
                related=[ctx.rig_at(f"{main[0][0].pointer}/network")],
                subject=f"rig {ctx.rig.name}",
                fix="one subnet (or placement group) for all GPU nodes, or routes and open security groups "
                "between them",
            )


def _components(declared: list[tuple[NodeView, set[str]]]) -> list[list[tuple[NodeView, set[str]]]]:
    """Groups of node groups connected through shared subnets (union-find, linear in the groups)."""
    parent: dict[str, str] = {}

    def find(item: str) -> str:
        while parent.setdefault(item, item) != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for _, subnets in declared:
        first, *rest = sorted(subnets)
        for other in rest:
            parent[find(other)] = find(first)
    by_root: dict[str, list[tuple[NodeView, set[str]]]] = {}
    for node, subnets in declared:
        by_root.setdefault(find(next(iter(subnets))), []).append((node, subnets))
    return list(by_root.values())


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(NodeSubnetsChecker())
