"""Rules of ``rigcheck merge``: facts that should be equal on every node of a cluster, and hostnames that must
be unique."""

from __future__ import annotations

from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.severity import Severity

_WHY_SAME = (
    "A job spanning nodes runs at the pace of its slowest or oddest node, and collective libraries assume the "
    "same software everywhere."
)

GPU_DRIFT = Rule(
    code="DRIFT001",
    name="gpus-differ-between-nodes",
    summary="A node has a different number or model of GPUs than the other nodes",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares the GPUs (model and count) each probe file reports with the majority of the nodes; fails for "
        "each node that differs.",
        why="A node with 7 of 8 GPUs (one fell off the bus) breaks the rank layout of every job that assumes 8 per "
        "node; a different model changes memory and speed. " + _WHY_SAME,
        example="```\nnode17: GPUs 7 x NVIDIA H100 SXM5 80GB, while 31 of 32 nodes have 8   -> DRIFT001\n```",
        fix="Repair the node (reseat, replace; check Xid 79), or take it out of the partition until it is repaired.",
        references=("https://docs.nvidia.com/deploy/xid-errors/index.html",),
    ),
)

DRIVER_DRIFT = Rule(
    code="DRIFT002",
    name="driver-differs-between-nodes",
    summary="A node runs a different NVIDIA driver than the other nodes",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares `software.driver` of each probe file with the majority of the nodes.",
        why="Different drivers mean different CUDA maxima, NCCL behaviour and bugs; a rolling upgrade left half "
        "done is a common cause of jobs that fail on some node sets only. " + _WHY_SAME,
        example="```\nnode03: driver 535.129.03, while 15 of 16 nodes have 550.54.15   -> DRIFT002\n```",
        fix="Finish the upgrade (or roll back) so every node runs one driver.",
        references=("https://docs.nvidia.com/datacenter/tesla/drivers/index.html",),
    ),
)

SOFTWARE_DRIFT = Rule(
    code="DRIFT003",
    name="cuda-or-torch-differs-between-nodes",
    summary="A node reports a different driver CUDA version or PyTorch build than the other nodes",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares the driver's CUDA version (NVML) and `software.torch` of each probe file with the majority.",
        why="Ranks built against different CUDA or torch versions can disagree on kernels and collectives, and a "
        "torch wheel that works on one node may not load on another. " + _WHY_SAME,
        example="```\nnode09: torch 2.3.0+cu118, while 7 of 8 nodes have 2.3.0+cu121   -> DRIFT003\n```",
        fix="Run jobs from one container image, or install the same torch build on every node.",
        references=("https://pytorch.org/get-started/locally/",),
    ),
)

ECC_DRIFT = Rule(
    code="DRIFT004",
    name="ecc-differs-between-nodes",
    summary="A node's GPUs have ECC set differently from the other nodes",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares the per-GPU ECC modes of each probe file with the majority of the nodes.",
        why="ECC off changes usable memory (about 6% more) and protection; a job sized on one node can run out of "
        "memory, or lose protection, on another. " + _WHY_SAME,
        example="```\nnode05: ECC modes off/off/on/on/on/on/on/on, while 7 of 8 nodes have all on -> DRIFT004\n```",
        fix="`nvidia-smi -e 1` on the odd GPUs and reboot (or set the same mode everywhere).",
        references=("https://docs.nvidia.com/deploy/nvidia-smi/index.html (ECC Mode)",),
    ),
)

FIRMWARE_DRIFT = Rule(
    code="DRIFT005",
    name="gpu-firmware-differs-between-nodes",
    summary="A node's GPUs run different firmware (VBIOS) from the other nodes",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares the set of VBIOS versions of each probe file's GPUs with the majority of the nodes.",
        why="Firmware fixes (power, NVLink training, memory) reach only the nodes that were updated; mixed firmware "
        "is behind many 'only on some nodes' faults. " + _WHY_SAME,
        example="```\nnode11: VBIOS 96.00.5E.00.01, while 31 of 32 nodes have 96.00.89.00.01   -> DRIFT005\n```",
        fix="Update the GPU firmware with the vendor's tool (nvflash or the system vendor's firmware bundle).",
        references=("https://docs.nvidia.com/dgx/dgxh100-fw-update-guide/index.html",),
    ),
)

HOSTNAME_REPEATED = Rule(
    code="DRIFT006",
    name="hostname-in-several-probes",
    summary="One hostname is reported by more than one probe file",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares the hostnames of the probe files (as DNS compares them: case, surrounding spaces and a "
        "trailing dot ignored); fails at each probe file that repeats a hostname an earlier one reported, and "
        "says whether their node specs (GPUs, CPU, memory, storage, network, software) differ.",
        why="Two machines that report one hostname (a cloned image, a reused name) are one node to the scheduler, "
        "to `hostnames:` and to every drift message, so a node with different GPUs hides behind a healthy one "
        "(before this rule, it passed DRIFT001); a probe file given twice (overlapping globs) counts its node "
        "twice in the merged rig. A hostname in a probe file is whatever that machine, or whoever edited the "
        "file, says.",
        example="```\nnode00: 2 probe files report this hostname (a.yaml, b.yaml), with different node specs   "
        "-> DRIFT006\n```",
        fix="Merge each node's probe file once; if two machines report one hostname, give each its own "
        "(`hostnamectl set-hostname`) and probe them again.",
        references=("https://www.rfc-editor.org/rfc/rfc4343 (DNS names compare case-insensitively)",),
    ),
)

MERGE_RULES = (GPU_DRIFT, DRIVER_DRIFT, SOFTWARE_DRIFT, ECC_DRIFT, FIRMWARE_DRIFT, HOSTNAME_REPEATED)
