"""ICX003-ICX004: peer-to-peer between GPUs and NVLink bridges (docs/research/rules_facts.md NET-7, NET-9)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import bridge_gbps, peer_to_peer

NO_P2P = Rule(
    code="ICX003",
    name="gpus-without-peer-to-peer",
    summary="The node's GPUs cannot use peer-to-peer over PCIe with the stock driver",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Warns for nodes with several GPUs that lack PCIe peer-to-peer on NVIDIA's stock driver (GeForce "
        "RTX 4090 and 5090 in the catalog: `p2p_stock_driver: false`), unless the rig declares "
        "`gpu_interconnect.p2p: true` (then notes that this needs a patched kernel module).",
        why="Without P2P, NCCL moves GPU-to-GPU traffic through host memory at about half the PCIe rate; early "
        "drivers even reported P2P that was not there, corrupting copies or hanging NCCL, which is why "
        "`NCCL_P2P_DISABLE=1` is common on these cards.",
        example="```yaml\ngpus: {model: RTX 4090, count: 4}   # ICX003\n```",
        fix="Expect host-memory bandwidth for all-reduce (prefer data parallelism with large accumulation, or "
        "pipeline parallelism); set NCCL_P2P_DISABLE=1 if NCCL hangs; the tinygrad patched open kernel "
        "module enables BAR1 P2P (large BAR, IOMMU off); or choose GPUs with NVLink.",
        references=(
            "https://github.com/tinygrad/open-gpu-kernel-modules",
            "NVIDIA/nccl-tests issue #117 ; NVIDIA/nccl issue #1127 ; huggingface/accelerate issue #2328",
        ),
    ),
)

BRIDGE = Rule(
    code="ICX004",
    name="nvlink-bridge-mismatch",
    summary="An NVLink bridge on cards without one, or on more than the two cards a bridge joins",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For `gpu_interconnect.kind: nvlink-bridge`: fails when the card has no NVLink connector (RTX "
        "4090/5090), warns when the node has more GPUs than a bridge joins (two: the other pairs talk over "
        "PCIe), and passes with the bridge's rate otherwise (RTX 3090/A6000: 112.5 GB/s bidirectional, not "
        "the 600 GB/s of A100 NVLink).",
        why="Bridges are 2-way on consumer and workstation cards; a 4-GPU box with two bridges is two fast pairs "
        "joined by PCIe, and its all-reduce runs at PCIe speed.",
        example="```yaml\ngpus: {model: RTX 3090, count: 4}\ngpu_interconnect: {kind: nvlink-bridge}"
        "   # ICX004 warn\n```",
        fix="Plan for PCIe bandwidth between bridged pairs (or keep TP within a pair), or use NVSwitch systems.",
        references=("docs/research/rules_facts.md section 0.2 and NET-7 (112.5 GB/s RTX 3090/A6000 bridge)",),
    ),
)


class PeerToPeerChecker(PerNodeChecker):
    name = "interconnect.peer-to-peer"
    rules = (NO_P2P, BRIDGE)

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        if node.gpus_per_node < 2:
            return
        gpu = node.gpus[0]
        subject = ctx.node_subject(node)
        interconnect = node.spec.gpu_interconnect
        where = ctx.rig_at(f"{node.pointer}/gpu_interconnect" if interconnect else f"{gpu.pointer}/model")
        declared = interconnect.p2p if interconnect is not None else None
        stock = gpu.facts.p2p_stock_driver
        if stock is False and declared is True:
            yield NO_P2P.passed(
                f"{node.label}: P2P declared on {gpu.facts.name}, which needs a patched driver "
                f"(the stock driver has none)",
                location=where,
                subject=subject,
            )
        elif not peer_to_peer(node, gpu):
            yield NO_P2P.warned(
                f"{node.label}: {node.gpus_per_node} x {gpu.facts.name} without PCIe "
                f"peer-to-peer: NCCL goes through host memory",
                location=where,
                subject=subject,
                evidence={"gpu": gpu.facts.name, "p2p_stock_driver": stock},
                fix="expect about half the PCIe rate for all-reduce; prefer data or pipeline "
                "parallelism; set NCCL_P2P_DISABLE=1 if NCCL hangs",
            )
        else:
            how = (
                "over the NVLink bridge"
                if interconnect is not None and interconnect.kind == "nvlink-bridge"
                else "over NVLink"
                if interconnect is not None and interconnect.kind in ("nvlink", "nvswitch")
                else "declared by the rig"
                if declared
                else "over PCIe (the catalog: P2P with the stock driver)"
                if stock
                else "assumed: the catalog does not say whether the stock driver allows PCIe P2P"
            )
            yield NO_P2P.passed(
                f"{node.label}: {gpu.facts.name} peer-to-peer {how}",
                location=where,
                subject=subject,
                evidence={"gpu": gpu.facts.name, "p2p_stock_driver": stock},
            )
        if interconnect is None or interconnect.kind != "nvlink-bridge":
            return
        rate = bridge_gbps(gpu.facts.id)
        joined = int(ctx.facts("interconnect")["nvlink_bridge"]["gpus_joined"])
        if rate is None:
            yield BRIDGE.failed(
                f"{node.label}: {gpu.facts.name} has no NVLink bridge connector",
                location=where,
                subject=subject,
                fix="remove the bridge from the spec; the cards talk over PCIe",
            )
        elif node.gpus_per_node > joined:
            yield BRIDGE.warned(
                f"{node.label}: a bridge joins two of the {node.gpus_per_node} "
                f"{gpu.facts.name}s ({rate:g} GB/s); the pairs talk to each other over PCIe",
                location=where,
                subject=subject,
                evidence={"bridge_gbps": rate},
                fix="keep TP within a bridged pair; all-reduce across pairs runs at PCIe speed",
            )
        else:
            yield BRIDGE.passed(
                f"{node.label}: NVLink bridge between the two {gpu.facts.name}s, {rate:g} GB/s bidirectional",
                location=where,
                subject=subject,
                evidence={"bridge_gbps": rate},
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(PeerToPeerChecker())
