"""The rig spec: what a machine or cluster is (docs/design.md section 3).

A rig is a list of node groups (``count:`` identical nodes). Units are in the field names; a field
left out is unknown (``None``), and a checker that needs it says so instead of guessing.
"""

import datetime
from typing import Annotated, Literal

from pydantic import Field, model_validator

from rigcheck.core.spec.fields import (
    ApiVersion,
    Before,
    Choice,
    Count,
    Number,
    OneOrMany,
    Port,
    Quantity,
    SpecModel,
    StringMap,
    VersionString,
    Whole,
    spec_name_field,
)

# Upper bounds no real rig reaches (issue 15): they keep every number finite downstream. A rate that
# divides (MB/s, IOPS, Gb/s, GB/s) is also above 0.
#: One PSU, GPU or CPU: 100 kW. A whole node (max_power_w): 1 MW (a GB200 NVL72 rack is 132 kW).
Watts = Annotated[float, Quantity("watts", "W", le=100_000)]
NodeWatts = Annotated[float, Quantity("watts", "W", le=1_000_000)]
#: Card and case sizes: 10 m.
Millimetres = Annotated[float, Quantity("length", "mm", le=10_000)]
#: GPU memory and system RAM: 1 PiB.
GiB = Annotated[float, Quantity("bytes", "GiB", le=2**20)]
#: Storage capacity: 1 EB.
GB = Annotated[
    float,
    Quantity(
        "bytes",
        "GB",
        le=1e9,
        description="In GB (1e9 bytes); a string with a unit is converted (e.g. '3.84 TB').",
    ),
]
#: Storage throughput: above 0, at most 100 TB/s.
MBps = Annotated[
    float,
    Quantity(
        "bytes_per_s",
        "MB/s",
        gt=0,
        ge=None,
        le=1e8,
        description="In MB/s (1e6 bytes per second), or e.g. '7 GB/s'.",
    ),
]
#: GPU memory and GPU-to-GPU bandwidth: above 0, at most 1 PB/s.
GBps = Annotated[float, Quantity("bytes_per_s", "GB/s", gt=0, ge=None, le=1e6)]
#: Network line rate: above 0, at most 1 Pb/s.
Gbps = Annotated[
    float,
    Quantity(
        "bits_per_s",
        "Gb/s",
        gt=0,
        ge=None,
        le=1e6,
        description="In Gb/s (1e9 bits per second), or e.g. '400 Gb/s'.",
    ),
]
#: Dense tensor throughput of one GPU: at most 1 EFLOPS.
Tflops = Annotated[float, Number(gt=0, le=1e6)]
#: Random I/O of one device: above 0, at most 1e10 IOPS.
Iops = Annotated[float, Number(gt=0, le=1e10)]
#: GPUs in one node, PSUs and NICs of a node: 1,024.
PerNode = Annotated[int, Whole(le=1024), Field(description="How many; from 1 to 1,024.")]

Cooler = Annotated[
    str,
    Choice(
        "open-air",
        "blower",
        "passive",
        "liquid",
        "hybrid",
        aliases={"axial": "open-air", "water": "liquid"},
        description="open-air (axial fans), blower (exhausts out of the case), passive (needs server "
        "airflow), liquid, hybrid.",
    ),
]

#: A GPU power connector (a card's socket, a PSU's native cable).
PowerConnector = Annotated[str, Choice("12vhpwr", "12v-2x6", "8pin-pcie", "6pin-pcie", "8pin-eps")]


class Circuit(SpecModel):
    """A wall circuit (branch circuit) that feeds PSUs."""

    name: str | None = Field(None, description="Name that PSUs refer to with psu.circuit.")
    volts: Annotated[float, Quantity("volts", "V", gt=0, ge=None, le=1000)] = Field(
        description="Nominal voltage."
    )
    amps: Annotated[float, Quantity("amps", "A", gt=0, ge=None, le=1000)] = Field(
        description="Breaker rating."
    )
    phases: Literal[1, 3] = Field(1, description="1 or 3; for 3 phases, volts is line-to-line.")
    continuous_load_fraction: Annotated[float, Number(gt=0, le=1)] | None = Field(
        None,
        description="Share of the breaker rating allowed for continuous loads (default 0.8, NEC).",
    )


class Site(SpecModel):
    """Where the rig runs: the circuits that feed it and the room."""

    circuit: Circuit | None = None
    circuits: list[Circuit] | None = Field(
        None, description="Several circuits; PSUs name theirs with psu.circuit."
    )
    ambient_c: Annotated[float, Number(ge=-40, le=60)] | None = Field(
        None, description="Room temperature, deg C."
    )
    rack_power_limit_kw: Annotated[float, Quantity("watts", "kW", gt=0, ge=None, le=100_000)] | None = Field(
        None, description="Power a rack may draw, kW."
    )

    @model_validator(mode="after")
    def _one_way_to_give_circuits(self) -> "Site":
        if self.circuit is not None and self.circuits is not None:
            raise ValueError("give either circuit or circuits, not both")
        return self


def _gpu_name(value: object) -> object:
    """Refuse ``model: 4090`` (YAML reads a number) saying so, with the names it is part of, quoted."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        from rigcheck.core.catalog.catalog import number_as_gpu_name

        raise ValueError(number_as_gpu_name(value))
    return value


class GpuGroup(SpecModel):
    """Identical GPUs in a node. Catalog facts come from ``model``; fields here override them."""

    model: Annotated[str, Before(_gpu_name)] = Field(
        description="Catalog name, id or alias: 'RTX 3090', 'H100 SXM', 'NVIDIA A100-SXM4-80GB'."
    )
    count: PerNode = 1
    cooler: Cooler | None = None
    length_mm: Millimetres | None = Field(
        None, description="Card length (the catalog has the reference card's)."
    )
    height_mm: Millimetres | None = Field(
        None,
        description="Card height with the power plug, mm (checked against chassis.gpu_height_clearance_mm).",
    )
    slots: Annotated[float, Number(gt=0, le=8)] | None = Field(
        None, description="Expansion slots one card occupies."
    )
    power_limit_w: Watts | None = Field(
        None, description="Power limit set with nvidia-smi -pl (default: board power)."
    )
    memory_gib: GiB | None = Field(None, description="Override the catalog's memory size.")
    memory_bandwidth_gbps: GBps | None = Field(
        None, description="Override the catalog's memory bandwidth (a measured or down-clocked card), GB/s."
    )
    bf16_dense_tflops: Tflops | None = Field(
        None,
        description="Override the catalog's dense bf16/fp16 tensor TFLOPS (measured, or a variant).",
    )
    fp8_dense_tflops: Tflops | None = Field(None, description="Override the catalog's dense fp8 TFLOPS.")
    fp32_tflops: Tflops | None = Field(None, description="Override the catalog's fp32 TFLOPS.")
    ecc: bool | None = Field(
        None, description="ECC mode as configured (nvidia-smi -e); unknown when left out."
    )
    power_connectors: list[PowerConnector] | None = Field(
        None, description="Power connectors on this card model."
    )
    slot_gap: Annotated[int, Whole(ge=0, le=4)] | None = Field(
        None, description="Empty slots left between adjacent cards."
    )


GpuInterconnectKind = Annotated[
    str,
    Choice(
        "pcie",
        "nvlink-bridge",
        "nvlink",
        "nvswitch",
        "infinity-fabric",
        "none",
        aliases={"nvlink bridge": "nvlink-bridge", "bridge": "nvlink-bridge", "xgmi": "infinity-fabric"},
        description="pcie (no GPU links), nvlink-bridge (2-GPU bridges), nvlink (point-to-point), nvswitch, "
        "infinity-fabric (AMD xGMI), none (single GPU).",
    ),
]


class GpuInterconnect(SpecModel):
    """How the GPUs of a node talk to each other."""

    kind: GpuInterconnectKind
    bandwidth_gbps: GBps | None = Field(
        None, description="Bidirectional GB/s per GPU, when it differs from the catalog's."
    )
    p2p: bool | None = Field(
        None, description="Whether peer-to-peer over PCIe is enabled (nvidia-smi topo -p2p r)."
    )
    bridges: Annotated[int, Whole(ge=0, le=1024)] | None = Field(
        None, description="NVLink bridges fitted (each joins two cards)."
    )


class Pcie(SpecModel):
    """The PCIe link of each GPU to the host."""

    gen: Annotated[int, Whole(ge=1, le=7)] = Field(
        description="PCIe generation of the slot (and card, the lower of the two)."
    )
    lanes_per_gpu: Literal[1, 2, 4, 8, 16] = Field(16, description="Electrical lanes of each GPU slot.")
    chipset_gpus: Annotated[int, Whole(ge=0, le=1024)] = Field(
        0, description="GPUs in slots wired to the chipset instead of the CPU."
    )


class Cpu(SpecModel):
    """The host CPUs of a node."""

    model: str | None = Field(None, description="CPU model, as the vendor names it: 'AMD Ryzen 9 5900X'.")
    sockets: PerNode = 1
    cores: Annotated[int, Whole(le=1_000_000)] | None = Field(
        None, description="Physical cores in total, across all sockets."
    )
    threads: Annotated[int, Whole(le=1_000_000)] | None = Field(
        None, description="Hardware threads in total."
    )
    tdp_w: Watts | None = Field(
        None,
        description="Sustained power of all sockets together: Intel's Processor Base Power (PL1) or AMD's TDP, W. "
        "What the CPU draws while it feeds GPU-bound training.",
    )
    boost_w: Watts | None = Field(
        None,
        description="Short-term power of all sockets: Intel's Maximum Turbo Power (PL2) or AMD's PPT, W "
        "(PWR002 counts it in a spike; default tdp_w).",
    )
    pcie_lanes: Annotated[int, Whole(le=100_000)] | None = Field(None, description="CPU PCIe lanes in total.")
    vendor: Annotated[str, Choice("intel", "amd", "arm", "apple", "nvidia")] | None = Field(
        None, description="CPU vendor."
    )


StorageKind = Annotated[
    str,
    Choice(
        "nvme",
        "sata-ssd",
        "sas-ssd",
        "hdd",
        "network-fs",
        "cloud-volume",
        "object-store",
        "ramdisk",
        aliases={
            "ssd": "sata-ssd",
            "sata": "sata-ssd",
            "disk": "hdd",
            "nfs": "network-fs",
            "lustre": "network-fs",
            "ebs": "cloud-volume",
            "tmpfs": "ramdisk",
            "s3": "object-store",
        },
    ),
]


class StorageDevice(SpecModel):
    """A local drive, a network file system or a cloud volume."""

    name: str | None = Field(
        None, description="Name that data.storage and run.checkpoint.storage of a workload refer to."
    )
    kind: StorageKind = Field(
        description="nvme, sata-ssd, sas-ssd, hdd, network-fs, cloud-volume, object-store or ramdisk."
    )
    interface: str | None = Field(None, description="pcie4, pcie5, sata3, sas12, ... ")
    protocol: str | None = Field(None, description="For network file systems: nfs, lustre, gpfs, weka, ...")
    volume_type: str | None = Field(
        None, description="Cloud volume type: gp3, gp2, io2, pd-ssd, pd-balanced, premium-ssd-v2, ..."
    )
    count: Count = 1
    raid: Annotated[str, Choice("none", "raid0", "raid1", "raid5", "raid6", "raid10", "jbod")] | None = Field(
        None, description="RAID level across the count devices."
    )
    capacity_gb: GB | None = Field(None, description="Capacity of one device, GB.")
    free_gb: GB | None = Field(None, description="Space free for data and checkpoints, GB.")
    read_mb_s: MBps | None = Field(None, description="Sequential read of one device, MB/s.")
    write_mb_s: MBps | None = Field(None, description="Sequential write of one device, MB/s.")
    random_read_iops: Iops | None = Field(None, description="4 KiB random-read IOPS of one device.")
    random_write_iops: Iops | None = Field(None, description="4 KiB random-write IOPS of one device.")
    provisioned_iops: Iops | None = Field(None, description="Cloud volumes: provisioned IOPS.")
    provisioned_mb_s: MBps | None = Field(None, description="Cloud volumes: provisioned throughput, MB/s.")
    mount: str | None = Field(None, description="Mount point: '/data'.")
    roles: list[Annotated[str, Choice("os", "data", "checkpoints", "scratch", "home")]] | None = Field(
        None, description="What it holds: os, data, checkpoints, scratch, home."
    )


class Psu(SpecModel):
    """Power supplies: ``count`` identical units, optionally redundant (N+M)."""

    watts: Annotated[float, Quantity("watts", "W", gt=0, ge=None, le=100_000)] = Field(
        description="Rated DC output of one unit at the site's voltage."
    )
    count: PerNode = 1
    redundancy: str | None = Field(
        None, pattern=r"^\s*\d+\s*\+\s*\d+\s*$", description="'N+M': N carry the load, M are spares."
    )
    efficiency: (
        Annotated[
            str,
            Choice(
                "80plus",
                "80plus-bronze",
                "80plus-silver",
                "80plus-gold",
                "80plus-platinum",
                "80plus-titanium",
                aliases={
                    "bronze": "80plus-bronze",
                    "silver": "80plus-silver",
                    "gold": "80plus-gold",
                    "platinum": "80plus-platinum",
                    "titanium": "80plus-titanium",
                    "white": "80plus",
                },
            ),
        ]
        | None
    ) = Field(None, description="80 PLUS rating: 80plus-gold (or gold), ...")
    efficiency_pct: Annotated[float, Number(gt=50, le=100)] | None = Field(
        None, description="Measured efficiency at the load, %."
    )
    atx_version: VersionString | None = Field(None, description="ATX spec version: '2.52', '3.0', '3.1'.")
    connectors: list[PowerConnector] | None = Field(
        None,
        description="Native GPU cables of one unit, one entry per cable (two 12V-2x6 cables: list it twice); "
        "PWR003 counts the 16-pin ones against the node's 16-pin cards.",
    )
    circuit: str | None = Field(None, description="Name of the site circuit it is plugged into.")
    feeds_gpus: Annotated[int, Whole(ge=0, le=1024)] | None = Field(
        None,
        description="GPUs each unit of this group powers on its own (one 1000 W unit per two cards: 2); the "
        "units without it carry the CPU, the board and the remaining GPUs. PWR001 then checks each unit.",
    )
    sync_adapter: bool | None = Field(None, description="Several PSUs started together (add2psu or similar).")


class Chassis(SpecModel):
    """The case or server enclosure."""

    form_factor: (
        Annotated[
            str,
            Choice(
                "mid-tower",
                "full-tower",
                "small-form-factor",
                "open-frame",
                "rackmount",
                "workstation",
                "laptop",
                "mini-pc",
                "cloud",
                aliases={
                    "rack": "rackmount",
                    "sff": "small-form-factor",
                    "tower": "mid-tower",
                    "cloud-instance": "cloud",
                    "vm": "cloud",
                },
                description="workstation: an OEM workstation (Lenovo ThinkStation, Dell Precision, HP Z) whose "
                "vendor sizes its power; towers built from retail parts are mid-tower or full-tower. cloud: a "
                "rented instance (as is `instance:`): the rules on power supplies, circuits, the case, slots "
                "and cables are not checked.",
            ),
        ]
        | None
    ) = None
    rack_units: Annotated[int, Whole(le=60)] | None = Field(None, description="Height in rack units (U).")
    gpu_clearance_mm: Millimetres | None = Field(None, description="Longest card that fits, mm.")
    gpu_max_length_mm: Millimetres | None = Field(
        None,
        description="The case maker's recommended maximum card length, mm, when it publishes one beside the "
        "bare clearance: its own margin is already in it, so PLT003 adds none.",
    )
    gpu_height_clearance_mm: Millimetres | None = Field(
        None, description="Tallest card (with plug) that fits, mm."
    )
    expansion_slots: Annotated[int, Whole(le=20)] | None = Field(
        None, description="Expansion slots of the case."
    )
    airflow: Annotated[str, Choice("desktop", "server-ducted", "open-air", "liquid")] | None = Field(
        None,
        description="How the case moves air: desktop case fans, server-ducted, open-air frame or liquid.",
    )


NetworkKind = Annotated[
    str,
    Choice(
        "ethernet",
        "infiniband",
        "roce",
        "efa",
        "omni-path",
        "slingshot",
        "tcp",
        aliases={"ib": "infiniband", "eth": "ethernet", "opa": "omni-path"},
    ),
]


class NetworkLink(SpecModel):
    """Network adapters of one kind in a node."""

    kind: NetworkKind = Field(description="ethernet, infiniband, roce, efa, omni-path, slingshot or tcp.")
    rate: Annotated[str, Choice("sdr", "ddr", "qdr", "fdr", "edr", "hdr", "ndr", "xdr")] | None = Field(
        None, description="InfiniBand rate name."
    )
    gbps: Gbps | None = Field(None, description="Line rate of one port, Gb/s.")
    count: PerNode = 1
    interface: str | None = Field(
        None, description="Interface or HCA names, comma-separated: 'mlx5_0,mlx5_1'."
    )
    gpudirect_rdma: bool | None = Field(
        None, description="Whether GPUDirect RDMA works on this link (the NIC reads GPU memory directly)."
    )
    role: Annotated[str, Choice("compute", "storage", "management", "frontend", "any")] | None = Field(
        None,
        description="What the link carries: compute (the collectives), storage, management, frontend or any.",
    )
    subnet: str | None = Field(None, description="IP subnet of the link: '10.0.0.0/24'.")


class Software(SpecModel):
    """The software stack of a node."""

    os: Annotated[str, Choice("linux", "windows", "wsl", "macos")] | None = Field(
        None, description="Operating system."
    )
    distro: str | None = Field(None, description="ubuntu-22.04, rhel-9, ...")
    kernel: VersionString | None = Field(None, description="Linux kernel version, as uname -r prints it.")
    driver: VersionString | None = Field(None, description="NVIDIA driver version: '535.104.05'.")
    cuda_toolkit: VersionString | None = Field(None, description="Host CUDA toolkit, as nvcc -V reports it.")
    cuda_runtime: VersionString | None = Field(
        None, description="CUDA runtime the workload uses when no torch build is given."
    )
    torch: VersionString | None = Field(None, description="PyTorch build: '2.7.0+cu128'.")
    cuda_compat: str | None = Field(None, description="Forward-compatibility package: 'cuda-compat-12-8'.")
    kernel_modules: Annotated[str, Choice("open", "proprietary")] | None = Field(
        None,
        description="Which NVIDIA kernel modules the driver loads: open (the default from R560, Turing and newer "
        "only) or proprietary.",
    )
    peer_memory: Annotated[str, Choice("nvidia-peermem", "nv_peer_mem", "dma-buf", "none")] | None = Field(
        None,
        description="How GPUDirect RDMA reaches the NIC: nvidia-peermem (in the driver from R470), Mellanox's "
        "separate nv_peer_mem module (before R470), Linux DMA-BUF, or none.",
    )
    nccl: VersionString | None = Field(None, description="NCCL version.")
    rocm: VersionString | None = Field(
        None, description="ROCm user space version (AMD GPUs), as /opt/rocm/.info/version says: '6.2.4'."
    )
    amdgpu_driver: VersionString | None = Field(
        None,
        description="AMD GPU driver (amdgpu kernel driver) release as AMD's compatibility matrix names it: "
        "'6.4.1' (the 6.4.x line), '30.10.1' (the ROCm 7 era); sudo dkms status shows the installed one.",
    )
    env: StringMap | None = Field(None, description="Environment variables of the training processes.")


class Firewall(SpecModel):
    """Ports open between the nodes of the rig."""

    open_tcp_ports: list[str | Port] | None = Field(
        None, description="Ports and ranges: 29500, '50000-51000'."
    )


class NodeGroup(SpecModel):
    """``count`` identical nodes."""

    name: str | None = Field(None, description="Name of the node group, used in findings.")
    instance: str | None = Field(
        None,
        description="A cloud instance type ('aws g5.xlarge'): its GPUs come as they are, so fixes never add GPUs, "
        "and the rules on how a machine is built (PSUs, wall circuit, case, slots, cables) are not checked.",
    )
    count: Count = 1
    spares: Annotated[int, Whole(ge=0, le=1_000_000)] | None = Field(
        None, description="Spare nodes kept ready for this group (not counted in count)."
    )
    gpus: Annotated[list[GpuGroup], OneOrMany(GpuGroup)] | None = Field(
        None, description="The GPUs of one node: one group or a list."
    )
    gpu_interconnect: GpuInterconnect | None = None
    pcie: Pcie | None = None
    cpu: Cpu | None = None
    memory_gib: GiB | None = Field(None, description="System RAM of one node, GiB.")
    max_power_w: NodeWatts | None = Field(
        None,
        description="The vendor's maximum system power of one node, W "
        "(DGX H100: 10,200 W); replaces the sum of parts.",
    )
    storage: list[StorageDevice] | None = None
    psu: Annotated[list[Psu], OneOrMany(Psu)] | None = None
    chassis: Chassis | None = None
    network: list[NetworkLink] | None = None
    software: Software | None = None
    firewall: Firewall | None = None
    hostnames: list[str] | None = Field(None, description="Host names of the nodes in this group.")
    labels: StringMap | None = Field(None, description="Free-form labels (name: text).")


#: What NVML reports, bounded like the spec fields: MiB up to 1 PiB, watts, and small counts (PCIe
#: generation and width, NVLinks).
ProbedMiB = Annotated[float, Number(ge=0, le=2**30)]
ProbedWatts = Annotated[float, Number(ge=0, le=100_000)]
ProbedSmall = Annotated[int, Whole(ge=0, le=1024)]


class ProbedGpu(SpecModel):
    """One GPU as ``rigcheck probe`` read it through NVML (and torch)."""

    index: Annotated[int, Whole(ge=0, le=1_000_000)] = Field(description="NVML device index.")
    name: str = Field(description="Name as NVML reports it.")
    uuid: str | None = Field(None, description="GPU UUID.")
    serial: str | None = Field(None, description="Board serial number.")
    vbios: str | None = Field(None, description="VBIOS version.")
    bus_id: str | None = Field(None, description="PCI bus id.")
    memory_mib: ProbedMiB | None = Field(None, description="Total memory, MiB.")
    compute_capability: str | None = Field(None, description="CUDA compute capability: '8.6'.")
    ecc_current: bool | None = Field(None, description="ECC mode now.")
    ecc_pending: bool | None = Field(None, description="ECC mode after the next reboot.")
    power_limit_w: ProbedWatts | None = Field(None, description="Power limit now, W.")
    power_default_w: ProbedWatts | None = Field(None, description="Default power limit, W.")
    power_min_w: ProbedWatts | None = Field(None, description="Lowest power limit that can be set, W.")
    power_max_w: ProbedWatts | None = Field(None, description="Highest power limit that can be set, W.")
    pcie_gen_current: ProbedSmall | None = Field(
        None, description="PCIe generation the link runs at now (lower when idle)."
    )
    pcie_gen_max: ProbedSmall | None = Field(None, description="Highest PCIe generation of the link.")
    pcie_gen_device_max: ProbedSmall | None = Field(
        None, description="Highest PCIe generation the GPU supports."
    )
    pcie_gen_host_max: ProbedSmall | None = Field(
        None, description="Highest PCIe generation the slot supports."
    )
    pcie_width_current: ProbedSmall | None = Field(None, description="PCIe lanes in use now.")
    pcie_width_max: ProbedSmall | None = Field(None, description="Most PCIe lanes of the link.")
    pcie_replay_counter: Annotated[int, Whole(ge=0, le=2**64)] | None = Field(
        None, description="PCIe replays (link errors retried) since boot."
    )
    nvlinks_active: ProbedSmall | None = Field(None, description="NVLinks up.")
    nvlinks_total: ProbedSmall | None = Field(None, description="NVLinks the GPU has.")
    processes: Annotated[int, Whole(ge=0, le=1_000_000)] | None = Field(
        None, description="Processes holding memory on the GPU when probed."
    )
    memory_used_mib: ProbedMiB | None = Field(None, description="Memory in use when probed, MiB.")


class ProbeSource(SpecModel):
    """One tool output that ``rigcheck probe --from`` read, and the facts of the spec taken from it."""

    file: str = Field(description="The file, as named on the command line.")
    tool: str = Field(description="What it was read as: nvidia-smi-xml, nvidia-smi-topo, df, pip-list, ...")
    sha256: str | None = Field(None, description="SHA-256 of the file's bytes.")
    facts: list[str] = Field(
        default_factory=list,
        description="The fields filled from it: nodes[0].gpus, nodes[0].gpu_interconnect, probe.topology, ...",
    )


class ProbeInfo(SpecModel):
    """What ``rigcheck probe`` saw and with which tools; the node spec above is derived from it."""

    probed_at: str = Field(description="ISO 8601, UTC.")
    hostname: str | None = Field(None, description="Host name of the probed machine.")
    rigcheck_version: str | None = Field(None, description="rigcheck version that probed.")
    nvml_version: str | None = Field(None, description="NVML version.")
    driver_version: str | None = Field(None, description="NVIDIA driver version.")
    cuda_driver_version: str | None = Field(
        None, description="The driver's CUDA, as nvidia-smi's 'CUDA Version'."
    )
    torch_version: str | None = Field(None, description="torch.__version__, where torch was importable.")
    torch_cuda: str | None = Field(
        None, description="torch.version.cuda: the CUDA the torch wheel was built with."
    )
    torch_arch_list: list[str] | None = Field(
        None, description="torch.cuda.get_arch_list(): the GPU architectures the wheel was built for."
    )
    gpus: list[ProbedGpu] = Field(default_factory=list)
    topology: dict[str, dict[str, str]] | None = Field(
        None,
        description="GPU pair -> NVML topology level (internal, single, multiple, hostbridge, node, system) or NVLINK.",
    )
    not_supported: list[str] = Field(
        default_factory=list, description="NVML calls the device or driver does not support."
    )
    notes: list[str] = Field(
        description="What the probe noted while reading (a tool missing, a value unreadable).",
        default_factory=list,
    )
    sources: list[ProbeSource] | None = Field(
        None,
        description="rigcheck probe --from: the tool outputs read instead of NVML and the host, and which "
        "facts came from each.",
    )


class RigPrice(SpecModel):
    """What the rig costs to buy, as a quote or a receipt says: ``rigcheck plan --rig FILE`` ranks it by this."""

    amount: Annotated[float, Number(gt=0, le=1e12)] = Field(description="The price, in `currency`.")
    currency: Annotated[str, Choice("USD", "EUR", "CNY")] = Field(
        "USD", description="USD, EUR or CNY (the currencies plan converts between)."
    )
    source: str | None = Field(
        None, description="Where the price comes from: a quote, a shop's page, a receipt."
    )
    as_of: datetime.date | None = Field(None, description="The date of the price: 2026-12-01.")


class Rig(SpecModel):
    """A machine, or a cluster of node groups."""

    api_version: ApiVersion = Field(description="Always rigcheck/v1.", alias="apiVersion")
    kind: Literal["Rig"] = Field(description="Rig.")
    name: str = spec_name_field("rig")
    description: str | None = Field(None, description="Free text about the rig.")
    site: Site | None = None
    nodes: list[NodeGroup] = Field(min_length=1)
    labels: StringMap | None = Field(None, description="Free-form labels (name: text).")
    price: RigPrice | None = Field(
        None, description="What the rig costs to buy (plan ranks a --rig file by it, with its energy)."
    )
    probed_at: str | None = Field(None, description="When rigcheck probe wrote this spec (ISO 8601).")
    probe: ProbeInfo | None = Field(None, description="What rigcheck probe read from the machine (one node).")

    @property
    def total_nodes(self) -> int:
        return sum(group.count for group in self.nodes)
