"""NET003: NCCL_SOCKET_IFNAME and NCCL_IB_HCA name interfaces the node has (docs/research/rules_facts.md NET-1).

Syntax (NCCL environment-variable docs): a comma-separated list of prefixes; ``=`` before the list
makes the entries exact names; ``^`` excludes them instead; HCA entries may carry ``:port``.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import link_gbit_per_s
from rigcheck.core.estimate.network import (
    RDMA_KINDS,
    InterfaceList,
    carries_gpu_traffic,
    declared_interfaces,
    link_names,
    nccl_choice,
)

_ENV_DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"

INTERFACES = Rule(
    code="NET003",
    name="nccl-interface-not-declared",
    summary="NCCL_SOCKET_IFNAME or NCCL_IB_HCA selects interfaces the node does not have",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reads `NCCL_SOCKET_IFNAME` and `NCCL_IB_HCA` from the node's `software.env` and matches them, with "
        "NCCL's syntax (prefix; `=` exact; `^` exclude; `:port` on HCAs), against the interface names the "
        "node's `network` links declare. Fails when the variable selects none of them; warns when some entries "
        "of an include list select nothing on any of the rig's nodes (a typo NCCL ignores silently; an entry "
        "for another node's interface, as in `eno1,eth0` for nodes named differently, is not one). Also fails "
        "when, with no RDMA transport in use, `NCCL_SOCKET_IFNAME` puts NCCL's traffic on a management (storage, "
        "frontend) port or on ports slower than the node's ports for GPU traffic: the step-time model times "
        "the collectives over the ports NCCL uses.",
        why="With no matching socket interface NCCL stops with 'Bootstrap : no socket interface found'; with no "
        "matching HCA it falls back to TCP sockets and runs at a fraction of the fabric's speed. A prefix such "
        "as `eth` does not match `enp170s0f0`. NCCL's socket transport uses only the interfaces the variable "
        "selects: naming the 1 GbE management port puts a job planned for 100 GbE on 1 Gb/s (NVIDIA/nccl "
        "#1581: a 1 GbE and a 10 GbE port, traffic on the slower).",
        example="```yaml\nnetwork: [{kind: ethernet, interface: enp170s0f0}]\nsoftware: {env: {NCCL_SOCKET_IFNAME: "
        "eth0}}   # NET003\n```",
        fix="Set the variable to the names `ip -br link` (sockets) and `ibv_devices` (HCAs) print, or declare the "
        "interfaces on the node's network links.",
        references=(
            _ENV_DOCS,
            "docs/research/rules_facts.md NET-1",
            "https://github.com/NVIDIA/nccl/issues/1581",
        ),
    ),
)


def _hca_names(node: NodeView) -> list[str]:
    """HCA names the node's RDMA links declare."""
    return [name for link in node.spec.network or () if link.kind in RDMA_KINDS for name in link_names(link)]


def _data_port_names(node: NodeView) -> str:
    return ", ".join(
        name for link in node.spec.network or () if carries_gpu_traffic(link) for name in link_names(link)
    )


def _slower_than_the_data_ports(node: NodeView) -> str:
    """Why NCCL's socket traffic takes a slower road than the node's ports for GPU traffic, or "": a
    management (storage, frontend) port chosen, or chosen ports slower than the data ports."""
    choice = nccl_choice(node)
    if choice.transport != "socket" or not choice.links:
        return ""
    data = [link for link in node.spec.network or () if carries_gpu_traffic(link)]
    fastest = max((link_gbit_per_s(link) or 0.0 for link in data), default=0.0)
    chosen = max(link_gbit_per_s(link) or 0.0 for link in choice.links)
    if not choice.management and chosen >= fastest:
        return ""
    what = (
        f"the {choice.management[0].role} port ({chosen:g} Gb/s)"
        if choice.management
        else f"ports of {chosen:g} Gb/s"
    )
    return (
        f"NCCL's traffic between nodes takes {what} where the node's ports for GPU traffic run at "
        f"{fastest:g} Gb/s each ({fastest / max(chosen, 1e-9):,.0f}x faster)"
    )


class NcclInterfacesChecker(PerNodeChecker):
    name = "network.nccl-interfaces"
    rules = (INTERFACES,)
    gpu_nodes_only = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        env = node.env
        subject = ctx.node_subject(node)
        chosen = [name for name in ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA") if env.get(name)]
        if not chosen:
            yield INTERFACES.passed(
                f"{node.label}: NCCL picks interfaces itself (InfiniBand/RoCE first, then any interface but "
                f"lo and docker*)",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
            )
            return
        for variable in chosen:
            yield self._one(ctx, node, variable, str(env[variable]), subject)

    @staticmethod
    def _one(ctx: CheckContext, node: NodeView, variable: str, value: str, subject: str) -> Finding:
        where = ctx.rig_at(f"{node.pointer}/software/env/{variable}")
        related = [ctx.rig_at(f"{node.pointer}/network")]
        if variable == "NCCL_IB_HCA":
            links = [link for link in node.spec.network or () if link.kind in RDMA_KINDS]
            names = _hca_names(node)
            if not links:
                return INTERFACES.warned(
                    f"{variable}='{value}' but {node.label} declares no InfiniBand/RoCE/EFA link: NCCL will use "
                    f"TCP sockets",
                    location=where,
                    related=related,
                    subject=subject,
                    fix="declare the RDMA links (kind: infiniband or roce, interface: mlx5_0,...) or drop the "
                    "variable",
                )
        else:
            names = declared_interfaces(node)
        if not names:
            return INTERFACES.skipped(
                f"{variable}='{value}': {node.label} declares no interface names to check it against",
                location=where,
                subject=subject,
                fix="add interface: names to the node's network links",
            )
        parsed = InterfaceList.parse(value)
        selected = [name for name in names if parsed.matches(name)]
        declared = ", ".join(names)
        syntax = ("excluding " if parsed.exclude else "") + (
            "exact names" if parsed.exact else "name prefixes"
        )
        evidence = {
            "variable": variable,
            "value": value,
            "syntax": syntax,
            "declared": names,
            "selected": selected,
        }
        if not selected:
            error = (
                "Bootstrap : no socket interface found"
                if variable == "NCCL_SOCKET_IFNAME"
                else ("no matching HCA: NCCL falls back to TCP sockets")
            )
            return INTERFACES.failed(
                f"{variable}='{value}' ({syntax}) selects none of the declared interfaces ({declared}): {error}",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=f"set {variable} to one of: {declared}",
            )
        if variable == "NCCL_SOCKET_IFNAME":
            slow = _slower_than_the_data_ports(node)
            if slow:
                return INTERFACES.failed(
                    f"{variable}='{value}' selects {', '.join(selected)}: {slow}",
                    location=where,
                    related=related,
                    evidence=evidence,
                    subject=subject,
                    fix=f"set {variable} to the data ports ({_data_port_names(node) or 'name them in network'}), "
                    "or unset it",
                )
        unmatched = parsed.unmatched_entries(names)
        # one environment shared by nodes with different names (NCCL's advice: "eno1,eth0"): an entry that
        # selects another node's interface is not a typo
        elsewhere = [
            name
            for other in ctx.nodes
            if other is not node
            for name in (_hca_names(other) if variable == "NCCL_IB_HCA" else declared_interfaces(other))
        ]
        for_others = [entry for entry in unmatched if entry not in parsed.unmatched_entries(elsewhere)]
        unmatched = [entry for entry in unmatched if entry not in for_others]
        if for_others:
            evidence["for_other_nodes"] = for_others
        if unmatched:
            return INTERFACES.warned(
                f"{variable}='{value}': {', '.join(unmatched)} match(es) no declared interface ({declared}); "
                f"selected: {', '.join(selected)}",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=f"remove or correct {', '.join(unmatched)}",
            )
        others = f" ({', '.join(for_others)} for the rig's other nodes)" if for_others else ""
        return INTERFACES.passed(
            f"{variable}='{value}' ({syntax}) selects {', '.join(selected)}{others}",
            location=where,
            evidence=evidence,
            subject=subject,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(NcclInterfacesChecker())
