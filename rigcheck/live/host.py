"""Host facts from Linux files: CPU, RAM, block devices, network links, OS and the NCCL environment.

Everything is read under ``root`` (``/`` on the machine; a folder of fake files in tests), and
anything missing or unreadable is ``None`` (or left out of a list), never an exception: a probe in a
container or a VM sees less, and says less. Sources (man 5 proc, Documentation/ABI/ in the kernel):

* ``/proc/cpuinfo``: ``model name``, ``vendor_id`` (``CPU implementer`` on Arm), ``physical id`` and
  ``core id`` (sockets and physical cores), one ``processor`` block per hardware thread.
* ``/proc/meminfo``: ``MemTotal`` in KiB (what the kernel manages, a little under the installed RAM).
* ``/sys/block/<dev>/size`` in 512-byte sectors and ``queue/rotational``; ``nvme*`` is NVMe, a rotating
  disk is an HDD, anything else a SATA/SAS SSD. Virtual devices (loop, ram, zram, dm-, md, sr, nbd) are
  skipped: they are views of other devices, or not storage. So are disks under 1 GB (a VM's seed or
  config disk holds no data set). A VM's virtio (``vd*``) and Xen (``xvd*``) disks are written as
  ``cloud-volume`` with no speeds: their ``rotational`` flag is the driver's default (virtio-blk
  reports 1 unless the hypervisor says otherwise; seen on an H200 VM, kernel 6.18), not the medium.
* ``/sys/class/net/<if>/speed`` in Mb/s for interfaces that are up and backed by a device (``device``
  link); lo, docker*, veth*, bridges and other virtual interfaces are skipped, and so are IPoIB
  interfaces (type 32) and the netdevs of RoCE ports, which come from ``/sys/class/infiniband``.
* ``/sys/class/infiniband/<hca>/ports/<n>/{rate,state,link_layer}``: ``400 Gb/sec (4X NDR)``,
  ``4: ACTIVE``, ``InfiniBand`` or ``Ethernet`` (RoCE). Only active ports are listed.
* ``/sys/module/nvidia_peermem`` (or ``nv_peer_mem``): GPUDirect RDMA is loaded.
* ``/proc/sys/kernel/{hostname,osrelease}``, ``/etc/os-release``.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Block devices that are not drives of their own.
SKIPPED_BLOCK_PREFIXES = ("loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd")
#: Disks a hypervisor presents (virtio-blk, Xen blkfront): kind and speed are the host's, not visible.
VIRTUAL_DISK_PREFIXES = ("vd", "xvd")
#: Smaller disks are left out (seed, config and swap disks of VMs).
MIN_STORAGE_GB = 1.0
#: Network interfaces that are never physical links.
SKIPPED_NET_PREFIXES = (
    "lo",
    "docker",
    "veth",
    "virbr",
    "br-",
    "cni",
    "flannel",
    "cali",
    "vxlan",
    "tun",
    "tap",
)
#: Environment variables the probe copies into ``software.env``.
ENV_PREFIXES = ("NCCL_",)
ENV_NAMES = ("CUDA_VISIBLE_DEVICES",)
#: ``NCCL_*`` names that are not NCCL settings: NVIDIA's CUDA container images label themselves with
#: ``NCCL_VERSION`` (2.28.3-1 on a machine whose torch loaded NCCL 2.28.9), which NCCL never reads.
ENV_NOT_NCCL_SETTINGS = ("NCCL_VERSION",)

_ARPHRD_INFINIBAND = "32"
_IB_RATES = ("sdr", "ddr", "qdr", "fdr", "edr", "hdr", "ndr", "xdr")
_ARM_IMPLEMENTERS = {"0x41": "arm", "0x4e": "nvidia", "0x61": "apple"}
_CPU_VENDORS = {"GenuineIntel": "intel", "AuthenticAMD": "amd", "HygonGenuine": "amd"}
_PCIE_SPEEDS = {
    "2.5": 1,
    "5.0": 2,
    "5": 2,
    "8.0": 3,
    "8": 3,
    "16.0": 4,
    "16": 4,
    "32.0": 5,
    "32": 5,
    "64.0": 6,
}


@dataclass
class HostFacts:
    """What the host files said; every field may be unknown."""

    hostname: str | None = None
    os: str | None = None
    distro: str | None = None
    kernel: str | None = None
    cpu: dict[str, Any] | None = None
    memory_gib: float | None = None
    storage: list[dict[str, Any]] = field(default_factory=list)
    network: list[dict[str, Any]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def read_host(
    root: str | os.PathLike[str] = "/",
    env: Mapping[str, str] | None = None,
    *,
    cpu_count: Callable[[], int | None] | None = None,
) -> HostFacts:
    """Read every host fact under ``root``. ``env`` defaults to ``os.environ``; ``cpu_count`` (the
    thread count when ``/proc/cpuinfo`` is unreadable) defaults to ``os.cpu_count`` on the real root."""
    base = Path(root)
    live = str(root) in ("/", "")
    facts = HostFacts()
    facts.hostname = read_hostname(base, live=live)
    facts.os, facts.distro, facts.kernel = read_os(base, live=live)
    facts.cpu = read_cpu(base, cpu_count or (os.cpu_count if live else None))
    facts.memory_gib = read_memory_gib(base)
    facts.storage = read_storage(base, facts.notes)
    links, notes = read_network(base)
    facts.network = links
    facts.notes.extend(notes)
    facts.env = read_env(os.environ if env is None else env)
    return facts


# -- small readers ----------------------------------------------------------------------------------------


def _read(path: Path) -> str | None:
    """The stripped text of a file, or None (missing, unreadable, or an EINVAL read such as the speed of
    an interface that is down)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except (OSError, ValueError):
        return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda path: _natural(path.name))
    except OSError:
        return []


def _natural(name: str) -> list[Any]:
    """``nvme2n1`` before ``nvme10n1``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def read_hostname(root: Path, *, live: bool = False) -> str | None:
    name = _read(root / "proc/sys/kernel/hostname") or _read(root / "etc/hostname")
    if not name and live:
        name = socket.gethostname()
    return name or None


def read_os(root: Path, *, live: bool = False) -> tuple[str | None, str | None, str | None]:
    """``(os, distro, kernel)``: ``("linux", "ubuntu-22.04", "5.15.0-105-generic")``."""
    kernel = _read(root / "proc/sys/kernel/osrelease")
    release = _read(root / "etc/os-release") or _read(root / "usr/lib/os-release")
    distro = None
    if release:
        values = {}
        for line in release.splitlines():
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().strip("'\"")
        if values.get("ID"):
            distro = values["ID"] + (f"-{values['VERSION_ID']}" if values.get("VERSION_ID") else "")
    if kernel is not None or (root / "proc").is_dir():
        system: str | None = "wsl" if kernel and "microsoft" in kernel.lower() else "linux"
    elif live:
        system = {"win32": "windows", "darwin": "macos"}.get(sys.platform)
    else:
        system = None
    return system, distro, kernel


def read_cpu(root: Path, cpu_count: Callable[[], int | None] | None = None) -> dict[str, Any] | None:
    """``{"model", "vendor", "sockets", "cores", "threads"}`` (the fields of the spec's ``cpu:``) from
    /proc/cpuinfo; threads from ``cpu_count`` when the file cannot be read."""
    info = _read(root / "proc/cpuinfo")
    blocks: list[dict[str, str]] = []
    for chunk in re.split(r"\n\s*\n", info or ""):
        block = {}
        for line in chunk.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                block[key.strip().lower()] = value.strip()
        if block:
            blocks.append(block)
    processors = [block for block in blocks if "processor" in block]
    out: dict[str, Any] = {}
    first = processors[0] if processors else (blocks[0] if blocks else {})
    model = first.get("model name") or next((b["model name"] for b in blocks if "model name" in b), None)
    if model:
        out["model"] = re.sub(r"\s+", " ", model)
    vendor = _CPU_VENDORS.get(first.get("vendor_id", "")) or _ARM_IMPLEMENTERS.get(
        first.get("cpu implementer", "").lower()
    )
    if vendor:
        out["vendor"] = vendor
    threads = len(processors) or (cpu_count() if cpu_count else None)
    if threads:
        out["threads"] = threads
    packages = {block["physical id"] for block in processors if "physical id" in block}
    if packages:
        out["sockets"] = len(packages)
    pairs = {(block.get("physical id"), block["core id"]) for block in processors if "core id" in block}
    if pairs:
        out["cores"] = len(pairs)
    elif processors and "cpu cores" in first:
        per_socket = _int(first["cpu cores"])
        if per_socket:
            out["cores"] = per_socket * max(1, len(packages))
    elif processors and not any("siblings" in block for block in processors):
        out["cores"] = len(processors)  # Arm: one thread per core, no SMT fields
    return out or None


def read_memory_gib(root: Path) -> float | None:
    """``MemTotal`` (KiB) in GiB, to 0.1 GiB."""
    for line in (_read(root / "proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            kib = _int(parts[1]) if len(parts) > 1 else None
            if kib:
                return round(kib / 1024 / 1024, 1)
    return None


def _pcie_interface(device: Path) -> str | None:
    """``pcie4`` from the PCI device's ``current_link_speed`` (``16.0 GT/s PCIe``)."""
    for name in ("current_link_speed", "max_link_speed"):
        speed = _read(device / name)
        if speed:
            gen = _PCIE_SPEEDS.get(speed.split()[0])
            if gen:
                return f"pcie{gen}"
    return None


def read_storage(root: Path, notes: list[str] | None = None) -> list[dict[str, Any]]:
    """Block devices as ``storage:`` entries, identical drives grouped (``count``); what was left out
    or could not be told apart goes to ``notes``."""
    notes = notes if notes is not None else []
    groups: dict[tuple[str, float, str | None], list[str]] = {}
    virtual: list[str] = []
    for device in _entries(root / "sys/block"):
        name = device.name
        if name.startswith(SKIPPED_BLOCK_PREFIXES):
            continue
        sectors = _int(_read(device / "size"))
        if not sectors:
            continue
        capacity_gb = round(sectors * 512 / 1e9, 1)
        if sectors * 512 < MIN_STORAGE_GB * 1e9:
            notes.append(
                f"disk {name} ({sectors * 512 / 1e6:,.0f} MB) left out: too small for data or checkpoints"
            )
            continue
        if name.startswith("nvme"):
            kind = "nvme"
        elif name.startswith(VIRTUAL_DISK_PREFIXES):
            kind = "cloud-volume"
            virtual.append(name)
        elif _read(device / "queue/rotational") == "1":
            kind = "hdd"
        else:
            kind = "sata-ssd"
        interface = _pcie_interface(device / "device/device") if kind == "nvme" else None
        groups.setdefault((kind, capacity_gb, interface), []).append(name)
    if virtual:
        notes.append(
            f"{', '.join(virtual)}: virtual disk(s) of a VM, written as cloud-volume without speeds (the "
            "medium and its speed are the host's): add volume_type, or read_mb_s and random_read_iops, or "
            "pass fio output with --evidence"
        )
    out = []
    for (kind, capacity_gb, interface), names in groups.items():
        entry: dict[str, Any] = {"name": ",".join(names), "kind": kind}
        if interface:
            entry["interface"] = interface
        if len(names) > 1:
            entry["count"] = len(names)
        entry["capacity_gb"] = capacity_gb
        out.append(entry)
    return out


def _ib_rate(text: str) -> tuple[float | None, str | None]:
    """``"400 Gb/sec (4X NDR)"`` -> ``(400.0, "ndr")``."""
    match = re.match(r"\s*([\d.]+)\s*Gb/sec(?:\s*\((\d+X)\s*(\w+)\))?", text)
    if not match:
        return None, None
    name = (match.group(3) or "").lower()
    return float(match.group(1)), (name if name in _IB_RATES else None)


def read_network(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """``network:`` entries (InfiniBand and RoCE ports, then Ethernet), grouped by kind and rate, and
    notes on ports that are down."""
    notes: list[str] = []
    rdma = any((root / "sys/module" / name).exists() for name in ("nvidia_peermem", "nv_peer_mem"))
    groups: dict[tuple[str, float | None, str | None], list[str]] = {}
    roce_netdevs: set[str] = set()
    for hca in _entries(root / "sys/class/infiniband"):
        for port in _entries(hca / "ports"):
            layer = (_read(port / "link_layer") or "InfiniBand").lower()
            kind = "roce" if layer == "ethernet" else "infiniband"
            if kind == "roce":
                roce_netdevs.update(path.name for path in _entries(hca / "device/net"))
            state = _read(port / "state") or ""
            label = hca.name if port.name == "1" else f"{hca.name}:{port.name}"
            if "ACTIVE" not in state.upper():
                notes.append(
                    f"{kind} port {label} is {state.split(':')[-1].strip() or 'in an unknown state'}"
                )
                continue
            gbps, rate = _ib_rate(_read(port / "rate") or "")
            groups.setdefault((kind, gbps, rate if kind == "infiniband" else None), []).append(label)
    for interface in _entries(root / "sys/class/net"):
        name = interface.name
        if name.startswith(SKIPPED_NET_PREFIXES) or name in roce_netdevs:
            continue
        if not (interface / "device").exists() or _read(interface / "type") == _ARPHRD_INFINIBAND:
            continue
        if (_read(interface / "operstate") or "up").lower() not in ("up", "unknown"):
            continue
        speed = _int(_read(interface / "speed"))
        gbps = speed / 1000 if speed and speed > 0 else None
        groups.setdefault(("ethernet", gbps, None), []).append(name)
    return network_entries(groups, rdma=rdma), notes


def network_entries(
    groups: Mapping[tuple[str, float | None, str | None], list[str]], *, rdma: bool = False
) -> list[dict[str, Any]]:
    """``network:`` entries from ports grouped by (kind, Gb/s, InfiniBand rate name) -> their names."""
    out = []
    for (kind, gbps, rate), names in groups.items():
        entry: dict[str, Any] = {"kind": kind}
        if rate:
            entry["rate"] = rate
        if gbps:
            entry["gbps"] = int(gbps) if float(gbps).is_integer() else gbps
        if len(names) > 1:
            entry["count"] = len(names)
        entry["interface"] = ",".join(names)
        if rdma and kind in ("infiniband", "roce"):
            entry["gpudirect_rdma"] = True
        out.append(entry)
    return out


def read_env(env: Mapping[str, str]) -> dict[str, str]:
    """``NCCL_*`` settings and ``CUDA_VISIBLE_DEVICES``, sorted by name."""
    return {
        name: str(value)
        for name, value in sorted(env.items())
        if (name.startswith(ENV_PREFIXES) and name not in ENV_NOT_NCCL_SETTINGS) or name in ENV_NAMES
    }
