"""The evidence model: normalized facts from one tool output.

Every field is optional: a parser fills what its tool reports and lists what it expected but did
not find in ``problems`` (a trimmed paste, a malformed row), so a rule can say what is missing
instead of guessing. Units are in the field names; bandwidths are GB/s (10^9 B/s) unless named
otherwise; memory is MiB as nvidia-smi reports it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NvLinkState(_Model):
    link: int
    active: bool
    speed_gbps: float | None = Field(None, description="GB/s per link as nvidia-smi nvlink -s prints it.")


class GpuEvidence(_Model):
    """One GPU as a tool saw it."""

    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    bus_id: str | None = None
    pci_device_id: str | None = None
    vbios: str | None = None
    architecture: str | None = None
    compute_capability: str | None = None
    memory_total_mib: float | None = None
    ecc_current: bool | None = Field(None, description="True enabled, False disabled, None N/A or unknown.")
    ecc_pending: bool | None = None
    ecc_uncorrectable_volatile: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    power_limit_w: float | None = Field(None, description="The current (enforced) power limit.")
    power_default_w: float | None = None
    power_max_w: float | None = None
    power_draw_w: float | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = Field(None, description="max_link_gen: the lower of device and host maxima.")
    pcie_gen_device_max: int | None = None
    pcie_gen_host_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    pcie_replay_counter: int | None = None
    mig_enabled: bool | None = None
    persistence_mode: bool | None = None
    driver_model: str | None = Field(None, description="Windows: WDDM or TCC.")
    nvlinks: list[NvLinkState] | None = None
    processes: list[dict[str, Any]] | None = None


class TopologyEvidence(_Model):
    """``nvidia-smi topo -m`` (connection matrix) or ``topo -p2p`` (P2P capability matrix)."""

    kind: Literal["connection", "p2p"] = "connection"
    devices: list[str] = Field(default_factory=list, description="GPU0.., then NIC0.. (or mlx5_*).")
    matrix: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="matrix[row][column] = X, NV12, PIX, PXB, PHB, NODE, SYS (or OK, NS, GNS...).",
    )
    numa: dict[str, str] = Field(default_factory=dict, description="GPU -> NUMA affinity.")
    cpu_affinity: dict[str, str] = Field(default_factory=dict)
    nic_legend: dict[str, str] = Field(default_factory=dict, description="NIC0 -> mlx5_0.")


class NcclRow(_Model):
    size_bytes: int
    count: int | None = None
    dtype: str | None = None
    redop: str | None = None
    time_us: float | None = None
    algbw_gbps: float | None = None
    busbw_gbps: float | None = None
    in_place_busbw_gbps: float | None = None
    wrong: int | None = None


class NcclResult(_Model):
    """One nccl-tests run."""

    operation: str | None = Field(None, description="all_reduce, all_gather, ... from the header or command.")
    nccl_version: str | None = None
    tests_version: str | None = None
    ranks: int | None = Field(None, description="Number of '# Rank' lines.")
    gpus_per_process: int | None = None
    hosts: list[str] = Field(default_factory=list)
    devices: list[str] = Field(default_factory=list, description="GPU names of the ranks.")
    rows: list[NcclRow] = Field(default_factory=list)
    largest_size_bytes: int | None = None
    busbw_at_largest_gbps: float | None = Field(
        None, description="The larger of out-of-place and in-place busbw."
    )
    avg_busbw_gbps: float | None = Field(None, description="The footer's average (small sizes dominate it).")
    out_of_bounds: int | None = None
    anomalies: list[str] = Field(default_factory=list)


class StorageJob(_Model):
    """One fio job (or group-reported job section)."""

    name: str | None = None
    rw: str | None = None
    block_size: str | None = None
    iodepth: int | None = None
    numjobs: int | None = None
    filename: str | None = None
    read_iops: float | None = None
    read_bw_bytes_per_s: float | None = None
    write_iops: float | None = None
    write_bw_bytes_per_s: float | None = None
    device_util_pct: float | None = None


class Bandwidth(_Model):
    """One bandwidth figure: a copy direction, between which devices, how fast."""

    kind: Literal["h2d", "d2h", "d2d", "p2p", "p2p_bidir", "host_memory", "all_reduce"]
    src: str | None = None
    dst: str | None = None
    gbps: float = Field(description="GB/s (10^9 bytes per second).")
    size_bytes: int | None = None
    pinned: bool | None = None
    p2p_enabled: bool | None = None
    tool: str | None = None


class DiagResult(_Model):
    """One dcgmi diag test (or one GPU's result of it)."""

    test: str
    result: Literal["pass", "fail", "warn", "skip"]
    gpu: int | None = None
    detail: str | None = None


class IbPort(_Model):
    ca: str = Field(description="mlx5_0")
    port: int = 1
    ca_type: str | None = None
    firmware: str | None = None
    state: str | None = Field(
        None, description="Active, Down, Initializing (ibstat) or PORT_ACTIVE (ibv_devinfo)."
    )
    physical_state: str | None = None
    rate_gbps: float | None = None
    link_layer: str | None = Field(None, description="InfiniBand or Ethernet.")

    @property
    def active(self) -> bool:
        return (self.state or "").upper() in ("ACTIVE", "PORT_ACTIVE")


class MountEvidence(_Model):
    """One mounted filesystem as ``df`` lists it (``df -h``, ``df -T``, ``df -hT``, ``df -k``).

    Sizes are bytes: ``df -h`` prints powers of 1024 rounded up to two or three significant digits
    (GNU coreutils, "Block size"), so ``1.8T`` is read as 1.8 x 1024^4 bytes and is accurate only to
    that precision; block columns (``1K-blocks``) are exact."""

    filesystem: str = Field(description="The device or source: /dev/nvme0n1p1, overlay, tmpfs, host:/export.")
    type: str | None = Field(
        None, description="The filesystem type (df -T): ext4, xfs, overlay, nfs4, lustre..."
    )
    size_bytes: float | None = None
    used_bytes: float | None = None
    available_bytes: float | None = None
    use_pct: float | None = Field(None, description="Use% as printed.")
    mounted_on: str = Field(description="The mount point.")


class TorchEvidence(_Model):
    version: str | None = None
    cuda: str | None = Field(None, description="torch.version.cuda; None on CPU builds.")
    cuda_available: bool | None = None
    arch_list: list[str] | None = None
    device_capabilities: list[str] | None = Field(None, description="'12.0' per visible GPU.")
    gpus: list[str] | None = None
    driver_version: str | None = None
    cuda_runtime: str | None = Field(
        None, description="collect_env's 'CUDA runtime version' (the system nvcc)."
    )
    device_count: int | None = Field(None, description="torch.cuda.device_count().")


class Evidence(_Model):
    """Everything one tool output yields."""

    source: str = Field(description="The file it came from.")
    tool: str = Field(description="nvidia-smi-xml, nccl-tests, fio, ... (the parser's name).")
    tool_version: str | None = None
    host: str | None = None
    collected_at: str | None = None
    os: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = Field(None, description="The driver's CUDA (nvidia-smi 'CUDA Version').")
    toolkit_version: str | None = Field(None, description="nvcc -V release, X.Y.Z.")
    gpu_count: int | None = Field(None, description="GPUs the tool says are attached (may exceed len(gpus)).")
    gpus: list[GpuEvidence] = Field(default_factory=list)
    topology: TopologyEvidence | None = None
    nccl: list[NcclResult] = Field(default_factory=list)
    storage: list[StorageJob] = Field(default_factory=list)
    bandwidth: list[Bandwidth] = Field(default_factory=list)
    diag: list[DiagResult] = Field(default_factory=list)
    diag_version: str | None = None
    ib_ports: list[IbPort] = Field(default_factory=list)
    torch: TorchEvidence | None = None
    mounts: list[MountEvidence] = Field(default_factory=list, description="Filesystems (df).")
    packages: dict[str, str] = Field(
        default_factory=dict,
        description="Installed Python distributions (pip show, pip list, pip freeze): the name normalised as "
        "PEP 503 says (lower case, runs of '-', '_', '.' as '-') -> the version as printed.",
    )
    problems: list[str] = Field(
        default_factory=list,
        description="What the parser expected and did not find (partial or malformed input).",
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Tool-specific facts no rule reads yet.")


class EvidenceTool(_Model):
    name: str = Field(description="rigcheck")
    version: str


class EvidenceReport(_Model):
    """``rigcheck evidence FILE... -f json``: what each file was read as and the facts parsed from it."""

    schema_version: Literal[1] = Field(1, description="Bumped when a field changes meaning or is removed.")
    tool: EvidenceTool
    evidence: list[Evidence] = Field(
        description="One entry per file, in the order given; fields left at their defaults are left out."
    )
