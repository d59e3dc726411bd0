"""NET006: GPUDirect RDMA claimed where its prerequisites do not hold (docs/research/rules_facts.md NET-11).

GPUDirect RDMA lets the NIC read and write GPU memory over PCIe. It needs the kernel side
(``nvidia-peermem``, shipped with the driver since R470, or Linux DMA-BUF), Linux, and a GPU NVIDIA
supports for it: the GPUDirect RDMA manual lists Tesla (data-center) and Quadro (workstation) GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

GDR = Rule(
    code="NET006",
    name="gpudirect-rdma-unsupported",
    summary="A network link claims GPUDirect RDMA that the GPU, driver or OS cannot provide",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For network links with `gpudirect_rdma: true`: fails GeForce and laptop GPUs (not supported), "
        "drivers older than R470 (no `nvidia-peermem`) unless `software.peer_memory` names Mellanox's `nv_peer_mem` "
        "or DMA-BUF, `peer_memory: none`, and operating systems other than Linux; passes data-center "
        "and workstation GPUs on Linux with R470 or later.",
        why="Without GPUDirect RDMA every inter-node transfer is staged through host memory: NCCL still runs, but "
        "the bandwidth and latency the fabric was sized for are not there.",
        example="```yaml\ngpus: {model: RTX 4090, count: 8}\nnetwork: [{kind: infiniband, rate: ndr, gpudirect_rdma: "
        "true}]   # NET006\n```",
        fix="Data-center GPUs for RDMA fabrics, a driver of R470 or later with nvidia-peermem loaded (or DMA-BUF "
        "with the open kernel modules), and Linux.",
        references=(
            "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html",
            "https://docs.nvidia.com/networking/display/GPUDirectRDMAv18/System+Requirements+and+Recommendations",
        ),
    ),
)


def _branch(driver: str) -> int | None:
    try:
        return int(driver.split(".")[0])
    except ValueError:
        return None


class GpuDirectRdmaChecker(PerNodeChecker):
    name = "network.gpudirect-rdma"
    rules = (GDR,)
    gpu_nodes_only = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        facts = ctx.facts("network")["gpudirect_rdma"]
        minimum = int(facts["min_driver_branch"])
        subject = ctx.node_subject(node)
        claims = [index for index, link in enumerate(node.spec.network or ()) if link.gpudirect_rdma]
        if not claims:
            yield GDR.passed(
                f"{node.label}: no link claims GPUDirect RDMA",
                location=ctx.rig_at(f"{node.pointer}/network"),
                subject=subject,
            )
            return
        where = ctx.rig_at(f"{node.pointer}/network/{claims[0]}/gpudirect_rdma")
        software = node.spec.software
        problems: list[str] = []
        for gpu in node.gpus:
            if gpu.facts.segment in ("consumer", "laptop"):
                problems.append(
                    f"{gpu.facts.name} is a {gpu.facts.segment} GPU, which GPUDirect RDMA does not support"
                )
        driver = software.driver if software else None
        branch = _branch(driver) if driver else None
        peer = software.peer_memory if software else None
        if peer == "none":
            problems.append("no peer-memory module (nvidia-peermem, nv_peer_mem or DMA-BUF) is loaded")
        elif branch is not None and branch < minimum and peer not in ("nv_peer_mem", "dma-buf"):
            problems.append(
                f"driver {driver} predates R{minimum}, the first with nvidia-peermem (before it, Mellanox's "
                f"separate nv_peer_mem module: software.peer_memory: nv_peer_mem)"
            )
        os_name = software.os if software else None
        if os_name not in (None, "linux"):
            problems.append(f"GPUDirect RDMA needs Linux, not {os_name}")
        evidence = {
            "gpus": [gpu.facts.name for gpu in node.gpus],
            "driver": driver,
            "peer_memory": peer,
            "os": os_name,
            "min_driver_branch": minimum,
            **facts.cite(),
        }
        if problems:
            yield GDR.failed(
                f"{node.label}: " + "; ".join(problems),
                location=where,
                evidence=evidence,
                subject=subject,
                fix=f"data-center GPUs on Linux with driver R{minimum}+ and nvidia-peermem, or drop gpudirect_rdma",
            )
            return
        unknown = " (driver version not given)" if driver is None else f" with driver {driver}"
        yield GDR.passed(
            f"{node.label}: {', '.join(gpu.facts.name for gpu in node.gpus)}{unknown} on "
            f"{os_name or 'an unstated OS'} can use GPUDirect RDMA "
            + (f"through {peer}" if peer else "(load nvidia-peermem or use DMA-BUF)"),
            location=where,
            evidence=evidence,
            subject=subject,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(GpuDirectRdmaChecker())
