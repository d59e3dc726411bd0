"""EVD005, EVD012: NVLink links and GPU peer-to-peer as measured (docs/research/rules_facts.md NET-7, NET-9;
docs/research/tool_formats.md sections 4 and 7).

``nvidia-smi nvlink -s`` lists each link's speed or ``<inactive>``; ``nvidia-smi topo -m`` shows
``NV#`` between GPUs joined by # links; ``topo -p2p`` and p2pBandwidthLatencyTest say whether peers
can reach each other (``NS``/``GNS``, "CANNOT Access Peer").
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.evidence.match import where
from rigcheck.evidence.model import Evidence

NVLINK_DOWN = Rule(
    code="EVD005",
    name="nvlink-links-down",
    summary="NVLink links are inactive, or GPUs expected on NVLink reach each other over PCIe",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Where the rig declares NVLink or NVSwitch (or the catalog gives the GPU NVLink in an SXM module), "
        "fails GPUs with inactive links in `nvidia-smi nvlink -s` (or a probe), and GPU pairs that `nvidia-smi "
        "topo -m` connects through PCIe (PIX, PXB, PHB, NODE, SYS) instead of NV#.",
        why="A link down cuts the GPU's share of all-reduce bandwidth; NCCL routes around it silently and a tensor- "
        "parallel job runs at a fraction of its speed.",
        example="```\nnvidia-smi nvlink -s: GPU 3: Link 5: <inactive>   -> EVD005\n```",
        fix="Reboot and reset the GPU (`nvidia-smi -r`), check the NVSwitch fabric manager service "
        "(`systemctl status nvidia-fabricmanager`) and Xid 74 in dmesg; replace the board if links stay down.",
        references=(
            "https://docs.nvidia.com/deploy/nvidia-smi/index.html (nvlink)",
            "docs/research/rules_facts.md NET-7",
        ),
    ),
)

P2P = Rule(
    code="EVD012",
    name="peer-to-peer-unavailable",
    summary="The rig expects GPU peer-to-peer, but the machine reports it unavailable",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="When the rig declares `gpu_interconnect.p2p: true`, NVLink, or a GPU whose stock driver supports PCIe "
        "peer-to-peer, warns on `nvidia-smi topo -p2p` entries other than OK (NS, GNS, CNS, TNS, DR) and on "
        "p2pBandwidthLatencyTest's 'CANNOT Access Peer'.",
        why="Without P2P, NCCL stages GPU-to-GPU traffic through host memory: the ICX rules' bandwidth assumptions no "
        "longer hold (a 2080 Ti pair measures 5.7 GB/s instead of ~12).",
        example="```\nnvidia-smi topo -p2p r: GPU0 GPU1 NS   -> EVD012\n```",
        fix="Enable IOMMU passthrough or disable ACS in the BIOS, use an NVLink bridge, or declare `p2p: false` so "
        "the ICX rules plan for host staging.",
        references=(
            "docs/research/rules_facts.md NET-9",
            "https://github.com/NVIDIA/cuda-samples (p2pBandwidthLatencyTest)",
        ),
    ),
)

_PCIE_LEVELS = ("PIX", "PXB", "PHB", "NODE", "SYS", "SOC")


class EvidenceNvlinkChecker(EvidenceChecker):
    name = "evidence.nvlink"
    rules = (NVLINK_DOWN, P2P)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        if node is None:
            return
        interconnect = node.spec.gpu_interconnect
        declared = interconnect.kind if interconnect else None
        nvlink_expected = declared in ("nvlink", "nvswitch", "nvlink-bridge") or (
            declared is None
            and any(g.facts.form_factor == "SXM" and g.facts.nvlink not in (None, "none") for g in node.gpus)
        )
        location = ctx.rig_at(f"{node.pointer}/gpu_interconnect" if interconnect else f"{node.pointer}/gpus")
        if nvlink_expected:
            yield from self._links(evidence, node, location)
            yield from self._topology(evidence, node, location)
        p2p_expected = interconnect.p2p if interconnect and interconnect.p2p is not None else None
        if p2p_expected is None:
            p2p_expected = nvlink_expected or all(g.facts.p2p_stock_driver is not False for g in node.gpus)
        if p2p_expected and node.gpus_per_node > 1:
            yield from self._p2p(evidence, node, location)

    @staticmethod
    def _links(evidence: Evidence, node: NodeView, location: Location) -> Iterator[Finding]:
        all_down = set(evidence.extra.get("all_links_inactive") or ())
        for gpu in evidence.gpus:
            if gpu.index in all_down:
                label = f"{node.label}: GPU {gpu.index} ({gpu.name or 'GPU'})"
                yield NVLINK_DOWN.failed(
                    f"{label}: all NVLink links inactive in {where(evidence)}",
                    location=location,
                    evidence={"evidence": evidence.source, "inactive": "all"},
                    fix="check the NVLink bridge is fitted and seated (or the NVSwitch fabric); "
                    "reset the GPU",
                )
                continue
            if not gpu.nvlinks:
                continue
            down = [link.link for link in gpu.nvlinks if not link.active]
            label = f"{node.label}: GPU {gpu.index if gpu.index is not None else '?'} ({gpu.name})"
            detail = {"evidence": evidence.source, "links": len(gpu.nvlinks), "inactive": down}
            if down:
                yield NVLINK_DOWN.failed(
                    f"{label}: {len(down)} of {len(gpu.nvlinks)} NVLink links inactive "
                    f"({', '.join(map(str, down))}) in {where(evidence)}",
                    location=location,
                    evidence=detail,
                    fix="reset the GPU, check nvidia-fabricmanager and Xid 74; replace if they stay down",
                )
            else:
                yield NVLINK_DOWN.passed(
                    f"{label}: {len(gpu.nvlinks)} NVLink links active", location=location, evidence=detail
                )
        if evidence.tool == "nvidia-smi-nvlink" and not evidence.gpus and evidence.problems:
            yield NVLINK_DOWN.failed(
                f"{node.label}: {where(evidence)}: {evidence.problems[0]}",
                location=location,
                evidence={"evidence": evidence.source},
                fix="check the NVLink bridge or NVSwitch fabric (nvidia-fabricmanager)",
            )

    @staticmethod
    def _topology(evidence: Evidence, node: NodeView, location: Location) -> Iterator[Finding]:
        topology = evidence.topology
        if topology is None or topology.kind != "connection":
            return
        gpus = [d for d in topology.devices if d.startswith("GPU")]
        pcie_pairs = [
            f"{a}-{b} {topology.matrix.get(a, {}).get(b)}"
            for i, a in enumerate(gpus)
            for b in gpus[i + 1 :]
            if (topology.matrix.get(a, {}).get(b) or "").upper() in _PCIE_LEVELS
        ]
        detail = {"evidence": evidence.source, "pcie_pairs": pcie_pairs[:20]}
        if pcie_pairs:
            yield NVLINK_DOWN.failed(
                f"{node.label}: {where(evidence)} connects {len(pcie_pairs)} GPU pair(s) "
                f"through PCIe, not NVLink: {', '.join(pcie_pairs[:4])}",
                location=location,
                evidence=detail,
                fix="check the NVLink bridges / NVSwitch fabric, or declare gpu_interconnect: {kind: pcie}",
            )
        elif len(gpus) > 1:
            yield NVLINK_DOWN.passed(
                f"{node.label}: every GPU pair on NVLink in {where(evidence)}",
                location=location,
                evidence=detail,
            )

    @staticmethod
    def _p2p(evidence: Evidence, node: NodeView, location: Location) -> Iterator[Finding]:
        blocked: list[str] = []
        topology = evidence.topology
        if topology is not None and topology.kind == "p2p":
            gpus = [d for d in topology.devices if d.startswith("GPU")]
            blocked += [
                f"{a}-{b} {topology.matrix[a][b]}"
                for i, a in enumerate(gpus)
                for b in gpus[i + 1 :]
                if topology.matrix.get(a, {}).get(b) not in (None, "OK", "X")
            ]
        for entry in evidence.extra.get("peer_access", []) if isinstance(evidence.extra, dict) else []:
            if isinstance(entry, dict) and entry.get("can_access") is False:
                blocked.append(f"GPU{entry.get('src')}->GPU{entry.get('dst')} cannot access peer")
        if not blocked and topology is None and not evidence.extra.get("peer_access"):
            return
        detail = {"evidence": evidence.source, "blocked": blocked[:20]}
        if blocked:
            yield P2P.warned(
                f"{node.label}: peer-to-peer unavailable in {where(evidence)}: {', '.join(blocked[:4])}",
                location=location,
                evidence=detail,
                fix="enable P2P (IOMMU passthrough, ACS off, NVLink bridge) or declare p2p: false",
            )
        elif (topology is not None and topology.kind == "p2p") or evidence.extra.get("peer_access"):
            yield P2P.passed(
                f"{node.label}: GPU peers reach each other in {where(evidence)}",
                location=location,
                evidence=detail,
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceNvlinkChecker())
