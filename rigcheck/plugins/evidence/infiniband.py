"""EVD008: InfiniBand/RoCE ports as ``ibstat``/``ibv_devinfo`` report them, against the rig's fabric."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import link_gbit_per_s
from rigcheck.core.spec.numbers import fmt
from rigcheck.evidence.match import where
from rigcheck.evidence.model import Evidence

PORTS = Rule(
    code="EVD008",
    name="infiniband-ports-down-or-slow",
    summary="InfiniBand ports are down, or fewer or slower than the rig declares",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Counts the InfiniBand-layer ports in ibstat/ibv_devinfo output that are Active, and their rates, "
        "against the node's declared `infiniband` links (count x rate): fail when a port is down or fewer are "
        "active than declared, warn when an active port runs below the declared rate.",
        why="A port down, or trained at HDR on an NDR fabric, silently removes a rail: NCCL keeps running on the "
        "others at a fraction of the bandwidth the job was sized for.",
        example="```yaml\nnetwork: [{kind: infiniband, rate: ndr, count: 8}]\n"
        "# ibstat: mlx5_3 State: Down: EVD008\n```",
        fix="Check cables and transceivers (`ibstat`, `mlxlink -d mlx5_N`), the subnet manager (`sminfo`), and the "
        "switch port; correct the rig if the node has fewer ports.",
        references=(
            "https://docs.nvidia.com/networking/display/ofedv512580/infiniband+fabric+utilities",
            "NET-3",
        ),
    ),
)


class EvidenceInfinibandChecker(EvidenceChecker):
    name = "evidence.infiniband"
    rules = (PORTS,)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        ib = [port for port in evidence.ib_ports if (port.link_layer or "InfiniBand").lower() == "infiniband"]
        if node is None or not ib:
            return
        declared = [link for link in node.spec.network or () if link.kind == "infiniband"]
        count = sum(link.count for link in declared)
        rate = max((link_gbit_per_s(link) or 0 for link in declared), default=0)
        active = [port for port in ib if port.active]
        down = [f"{port.ca}/{port.port} {port.state}" for port in ib if not port.active]
        slow = [
            f"{port.ca} {fmt(port.rate_gbps)} Gb/s"
            for port in active
            if rate and port.rate_gbps and port.rate_gbps < rate
        ]
        location = ctx.rig_at(f"{node.pointer}/network")
        detail = {
            "evidence": evidence.source,
            "ports": len(ib),
            "active": len(active),
            "down": down,
            "declared_ports": count,
            "declared_rate_gbps": rate,
            "slow": slow,
        }
        told = (
            f"{node.label}: {len(active)} of {len(ib)} InfiniBand ports active in {where(evidence)}"
            f" ({count} x {fmt(rate)} Gb/s declared)"
        )
        if down or (count and len(active) < count):
            what = f"; down: {', '.join(down)}" if down else ""
            yield PORTS.failed(
                told + what,
                location=location,
                evidence=detail,
                fix="check cables/transceivers (mlxlink), the subnet manager and switch ports",
            )
        elif slow:
            yield PORTS.warned(
                f"{told}; below the declared rate: {', '.join(slow)}",
                location=location,
                evidence=detail,
                fix="check the cable and switch port speed (mlxlink -d mlx5_N)",
            )
        else:
            yield PORTS.passed(told, location=location, evidence=detail)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceInfinibandChecker())
