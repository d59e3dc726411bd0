"""NET004: NCCL's debugging switches left on hardware they cripple (docs/research/rules_facts.md NET-1, NET-9).

NVIDIA lists NCCL_P2P_DISABLE, NCCL_IB_DISABLE and NCCL_SHM_DISABLE among the "Debugging" variables
that "should not be used in production". The exception is a GPU without working peer-to-peer
(GeForce RTX 4090/5090 on the stock driver), where NCCL_P2P_DISABLE=1 is the documented workaround.
The variables checked are listed in specs/rules/network.yaml (``nccl_env.debugging_variables``).
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.links import peer_to_peer
from rigcheck.core.estimate.network import RDMA_KINDS

DEBUG_SWITCHES = Rule(
    code="NET004",
    name="nccl-debug-switch-in-production",
    summary="NCCL_P2P_DISABLE, NCCL_IB_DISABLE or NCCL_SHM_DISABLE is set on hardware it slows down",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Warns when the node's `software.env` sets `NCCL_P2P_DISABLE` on a node whose GPUs have NVLink, "
        "NVSwitch or working PCIe peer-to-peer; `NCCL_IB_DISABLE` on a node with InfiniBand, RoCE or EFA links; "
        "or `NCCL_SHM_DISABLE` on a node with more than one GPU. `NCCL_P2P_DISABLE=1` on GPUs without "
        "peer-to-peer (GeForce RTX 4090/5090 on the stock driver) passes: it is the workaround there.",
        why="NVIDIA lists these under 'Debugging' variables that 'should not be used in production'. P2P off "
        "sends NVLink traffic through host memory, IB off sends inter-node traffic over TCP sockets: both cost "
        "most of the bandwidth the hardware was bought for, silently.",
        example="```yaml\ngpu_interconnect: {kind: nvswitch}\nsoftware: {env: {NCCL_P2P_DISABLE: '1'}}   # NET004\n```",
        fix="Remove the variable (it is often left from a debugging session or copied from a GeForce setup).",
        references=(
            "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
            "docs/research/rules_facts.md NET-1, NET-9",
        ),
    ),
)


def _is_set(value: object) -> bool:
    text = str(value).strip().lower()
    try:
        return int(text) != 0
    except ValueError:
        return text in ("true", "yes", "on")


class NcclDebugEnvChecker(PerNodeChecker):
    name = "network.nccl-debug-env"
    rules = (DEBUG_SWITCHES,)
    gpu_nodes_only = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        env = node.env
        subject = ctx.node_subject(node)
        debugging = ctx.facts("network")["nccl_env"]["debugging_variables"]
        switches = [name for name in debugging if name in env and _is_set(env[name])]
        if not switches:
            yield DEBUG_SWITCHES.passed(
                f"{node.label}: no NCCL debugging switch set",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
            )
            return
        for name in switches:
            yield self._one(ctx, node, name, subject)

    @staticmethod
    def _one(ctx: CheckContext, node: NodeView, name: str, subject: str) -> Finding:
        where = ctx.rig_at(f"{node.pointer}/software/env/{name}")
        gpu = node.gpus[0]
        fix = f"remove {name} (NVIDIA: debugging variables 'should not be used in production')"
        if name == "NCCL_P2P_DISABLE":
            interconnect = node.spec.gpu_interconnect
            nvlink = interconnect is not None and interconnect.kind in ("nvlink", "nvswitch", "nvlink-bridge")
            if node.gpus_per_node < 2:
                return DEBUG_SWITCHES.passed(
                    f"{name}=1 on a single-GPU node: no peer traffic", location=where, subject=subject
                )
            if not nvlink and not peer_to_peer(node, gpu):
                return DEBUG_SWITCHES.passed(
                    f"{name}=1: {gpu.facts.name} has no working peer-to-peer on the stock driver, so this is the "
                    f"documented workaround",
                    location=where,
                    subject=subject,
                )
            link = interconnect.kind if nvlink and interconnect is not None else "PCIe peer-to-peer"
            return DEBUG_SWITCHES.warned(
                f"{name}=1 on {node.gpus_per_node} x {gpu.facts.name} joined by {link}: GPU-to-GPU traffic goes "
                f"through host memory instead",
                location=where,
                related=[ctx.rig_at(f"{node.pointer}/gpu_interconnect")],
                subject=subject,
                fix=fix,
            )
        if name == "NCCL_IB_DISABLE":
            rdma = [link for link in node.spec.network or () if link.kind in RDMA_KINDS]
            if not rdma:
                return DEBUG_SWITCHES.passed(
                    f"{name}=1 on a node without RDMA links", location=where, subject=subject
                )
            kinds = ", ".join(sorted({link.kind for link in rdma}))
            return DEBUG_SWITCHES.warned(
                f"{name}=1 on a node with {kinds} links: inter-node traffic falls back to TCP sockets",
                location=where,
                related=[ctx.rig_at(f"{node.pointer}/network")],
                subject=subject,
                fix=fix,
            )
        if name == "NCCL_SHM_DISABLE":
            if node.gpus_per_node < 2:
                return DEBUG_SWITCHES.passed(
                    f"{name}=1 on a single-GPU node", location=where, subject=subject
                )
            return DEBUG_SWITCHES.warned(
                f"{name}=1 on {node.gpus_per_node} GPUs: NCCL cannot use shared memory between local ranks",
                location=where,
                subject=subject,
                fix=fix,
            )
        return DEBUG_SWITCHES.warned(
            f"{name}=1: NVIDIA lists it among the debugging variables",
            location=where,
            subject=subject,
            fix=fix,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(NcclDebugEnvChecker())
