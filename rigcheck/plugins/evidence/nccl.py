"""EVD006: NCCL all-reduce bus bandwidth against the links it ran over (docs/research/rules_facts.md NET-4, NET-5).

Judged at the largest message size (the footer's average is dominated by small sizes: 66 GB/s on
a box that reaches 232), against the per-direction rate of the link the ranks share: NVLink or
PCIe inside a node (as the ICX rules compute it), the node's network across nodes. A table whose
busbw/algbw ratio is not 2(n-1)/n is not an all-reduce, whatever the command said.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import intra_node_link, node_network_gbps
from rigcheck.core.spec.numbers import fmt
from rigcheck.evidence.match import where
from rigcheck.evidence.model import Evidence

BUSBW = Rule(
    code="EVD006",
    name="nccl-bus-bandwidth-low",
    summary="Measured all-reduce bus bandwidth is far below what the GPUs' links should give",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Takes nccl-tests all_reduce_perf results (and `rigcheck measure`'s all-reduce): the bus bandwidth at "
        "the largest size, against the per-direction rate of the link the ranks share (NVLink/NVSwitch total / 2, "
        "or PCIe, within a node; the node's network bandwidth across nodes). Warn below "
        "{facts:evidence.nccl_busbw.warn_below_fraction:.0%}, fail below "
        "{facts:evidence.nccl_busbw.fail_below_fraction:.0%}; warn "
        "when the largest size is under 1 GiB (too small to reach peak) or when the table is not an all-reduce.",
        why="NCCL reaches 78-88% of a link's rate when everything works (8xA100: 235 of 300 GB/s). Half of it means "
        "a link down, P2P disabled, traffic on the wrong NIC, or a PCIe switch shared by two GPUs.",
        example="```\n8xH100 NVSwitch all_reduce_perf -e 8G: busbw 190 GB/s (450 per direction): EVD006\n```",
        fix="Check NVLink (EVD005), P2P (EVD012), NCCL_SOCKET_IFNAME/NCCL_IB_HCA (NET003), debugging switches "
        "(NET004); run with NCCL_DEBUG=INFO to see the transport NCCL chose.",
        references=(
            "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md",
            "docs/research/rules_facts.md NET-5",
        ),
    ),
)


class EvidenceNcclChecker(EvidenceChecker):
    name = "evidence.nccl"
    rules = (BUSBW,)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        if node is None:
            return
        facts = ctx.facts("evidence")["nccl_busbw"]
        results: list[tuple[float, int | None, int | None, list[str], str | None]] = [
            (r.busbw_at_largest_gbps, r.ranks, r.largest_size_bytes, r.anomalies, r.operation)
            for r in evidence.nccl
            if r.busbw_at_largest_gbps is not None
        ]
        results += [
            (b.gbps, None, b.size_bytes, [], "all_reduce")
            for b in evidence.bandwidth
            if b.kind == "all_reduce"
        ]
        for busbw, ranks, size, anomalies, operation in results:
            yield self._one(ctx, evidence, node, busbw, ranks, size, anomalies, operation, facts)

    @staticmethod
    def _one(
        ctx: CheckContext,
        evidence: Evidence,
        node: NodeView,
        busbw: float,
        ranks: int | None,
        size: int | None,
        anomalies: list[str],
        operation: str | None,
        facts: FactSection,
    ) -> Finding:
        """The verdict on one all-reduce: its bus bandwidth at the largest size against the shared link."""
        location = ctx.rig_at(
            f"{node.pointer}/gpu_interconnect" if node.spec.gpu_interconnect else f"{node.pointer}/gpus"
        )
        ranks = ranks or node.gpus_per_node
        if ranks > node.gpus_per_node:
            link = node_network_gbps(node)
            through = f"the node's network, {fmt(link, 1)} GB/s"
            location = ctx.rig_at(f"{node.pointer}/network")
        else:
            spec = intra_node_link(node, node.gpus[0], ctx.facts("interconnect"))
            link = spec.unidirectional_gbps
            through = f"{spec.kind}, {fmt(link, 1)} GB/s each way"
        detail = {
            "evidence": evidence.source,
            "busbw_gbps": busbw,
            "ranks": ranks,
            "largest_size_bytes": size,
            "link_gbps": link,
            "operation": operation,
            "anomalies": anomalies,
            **facts.cite(),
        }
        label = f"{node.label}: {operation or 'all_reduce'} over {ranks} ranks in {where(evidence)}"
        if anomalies:
            return BUSBW.warned(
                f"{label}: {anomalies[0]}",
                location=location,
                evidence=detail,
                fix="re-run all_reduce_perf and check the command and header match",
            )
        if not link:
            return BUSBW.skipped(
                f"{label}: busbw {fmt(busbw, 1)} GB/s; the link's rate is unknown",
                location=location,
                evidence=detail,
            )
        share = busbw / link
        detail["share"] = round(share, 3)
        told = f"{label}: busbw {fmt(busbw, 1)} GB/s at the largest size against {through} ({share:.0%})"
        fix = "check NVLink (EVD005), P2P (EVD012), NCCL interface variables (NET003/NET004); NCCL_DEBUG=INFO"
        if (
            size is not None
            and size < int(facts["min_size_bytes"])
            and share < float(facts["warn_below_fraction"])
        ):
            return BUSBW.warned(
                f"{told}; the largest size, {fmt(size / 2**20, 0)} MiB, is too small to reach peak, so this is "
                f"not conclusive",
                location=location,
                evidence=detail,
                fix="run all_reduce_perf -b 8 -e 8G -f 2 and check again",
            )
        severity = BUSBW.graded(
            share,
            warn_at=float(facts["warn_below_fraction"]),
            fail_at=float(facts["fail_below_fraction"]),
            higher_is_worse=False,
        )
        return BUSBW.judged(severity, told, location=location, evidence=detail, fix=fix)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceNcclChecker())
