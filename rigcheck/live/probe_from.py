"""``rigcheck probe --from FILE...``: a rig spec from saved tool outputs alone, no NVML or torch needed.

The files are read as ``check --evidence`` reads them (:mod:`rigcheck.evidence`), and their facts take the
place of what :mod:`rigcheck.live.probe` asks NVML, torch and the host files, so the same rules write
the spec (:func:`rigcheck.live.probe.build_spec`: GPU groups, the interconnect, the PCIe link):

* GPUs: from ``nvidia-smi -q -x``, ``-q``, ``--query-gpu`` CSV and the default table, then the torch
  one-liners (name and memory only), merged by index; the first file in that order to give a value wins.
  Without any of them, the devices of a one-host nccl-tests run (its ``# Rank`` lines), rank i as GPU i.
  ``nvidia-smi nvlink -s`` gives each GPU's active and total links.
* ``nvidia-smi topo -m``: each GPU pair's level (``NV#`` -> NVLINK, PIX -> single, PXB -> multiple,
  PHB -> hostbridge, NODE -> node, SYS and SOC -> system: the inverse of what
  :mod:`rigcheck.evidence.parsers.rigcheck_probe` writes). Without ``nvlink -s``, a GPU's active links are
  the largest ``NV#`` in its row (0 for a row without one), its total unknown. ``topo -p2p`` (and
  p2pBandwidthLatencyTest's "CANNOT Access Peer") give peer-to-peer per pair.
* the driver and its CUDA from nvidia-smi (or collect_env), the toolkit from ``nvcc -V``, torch (version,
  CUDA build) from collect_env, the one-liners, ``pip show``/``list``/``freeze``; NCCL from the
  ``nvidia-nccl-cuNN`` wheel.
* storage from ``df``: NVMe devices, network file systems (by type) and VM disks (``vd*``, ``xvd*``); a
  mount whose kind ``df`` cannot tell (overlay, ``/dev/sd*``, md RAID) is named in a comment instead.
* InfiniBand and RoCE from ``ibstat`` / ``ibv_devinfo``: the active ports grouped by link layer and rate.

What no file says (CPU, RAM, PSU, chassis, the site) is listed as comments at the top of the spec.
``probe.sources`` names each file, what it was read as, its SHA-256 and the fields taken from it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from rigcheck.evidence.loader import file_sha256
from rigcheck.evidence.model import Evidence, GpuEvidence
from rigcheck.live.host import HostFacts, network_entries
from rigcheck.live.probe import NvmlFacts, build_spec

#: Which tools describe GPUs, richest first (the first to give a value wins).
GPU_TOOLS = (
    "nvidia-smi-xml",
    "nvidia-smi-query",
    "nvidia-smi-csv",
    "nvidia-smi-table",
    "rigcheck-probe",
    "torch-version",
)
#: ``nvidia-smi topo -m`` cells -> the probe's topology levels.
TOPOLOGY_LEVELS = {
    "PIX": "single",
    "PXB": "multiple",
    "PHB": "hostbridge",
    "NODE": "node",
    "SYS": "system",
    "SOC": "system",
}
#: df filesystem types of network file systems -> storage protocol.
NETWORK_FS = {
    "nfs": "nfs",
    "nfs4": "nfs",
    "lustre": "lustre",
    "gpfs": "gpfs",
    "wekafs": "weka",
    "beegfs": "beegfs",
    "cifs": "smb",
    "smb3": "smb",
    "glusterfs": "glusterfs",
    "ceph": "ceph",
    "fuse.juicefs": "juicefs",
    "fuse.s3fs": "s3fs",
    "fuse.gcsfuse": "gcsfuse",
    "fuse.mountpoint-s3": "mountpoint-s3",
    "virtiofs": "virtiofs",
}
#: Filesystems that hold no data set: kernel and memory filesystems, container plumbing.
NOT_STORAGE = frozenset(
    ("tmpfs", "devtmpfs", "proc", "sysfs", "cgroup", "cgroup2", "efivarfs", "squashfs", "shm", "udev", "none")
)
_GPU_FIELDS = (
    "uuid",
    "serial",
    "vbios",
    "bus_id",
    "compute_capability",
    "ecc_current",
    "ecc_pending",
    "power_limit_w",
    "power_default_w",
    "power_max_w",
    "pcie_gen_current",
    "pcie_gen_max",
    "pcie_gen_device_max",
    "pcie_gen_host_max",
    "pcie_width_current",
    "pcie_width_max",
    "pcie_replay_counter",
)
_NV = re.compile(r"^NV(\d+)$")


class Sources:
    """Which fields came from which file."""

    def __init__(self, evidence: Sequence[Evidence]) -> None:
        self.evidence = list(evidence)
        self.facts: dict[int, list[str]] = {}

    def add(self, item: Evidence, fact: str) -> None:
        facts = self.facts.setdefault(id(item), [])
        if fact not in facts:
            facts.append(fact)

    def entries(self) -> list[dict[str, Any]]:
        out = []
        for item in self.evidence:
            entry: dict[str, Any] = {"file": item.source, "tool": item.tool}
            digest = file_sha256(item.source)
            if digest:
                entry["sha256"] = digest
            entry["facts"] = self.facts.get(id(item), [])
            out.append(entry)
        return out


def spec_from_evidence(
    evidence: Sequence[Evidence], *, now: datetime | None = None, name: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The rig spec (a plain dict, as :func:`rigcheck.live.probe.probe` returns) and the comment lines
    naming what the evidence does not say."""
    sources = Sources(evidence)
    notes: list[str] = []
    hosts = sorted({item.host for item in evidence if item.host})
    if len(hosts) > 1:
        notes.append(
            f"the files name {len(hosts)} hosts ({', '.join(hosts[:4])}): the spec is one node, from the first "
            f"file to give each fact; write one spec per machine and join them with rigcheck merge"
        )
    gpus = merge_gpus(evidence, sources, notes)
    facts = NvmlFacts(gpus=gpus, notes=notes)
    facts.driver = _first(evidence, "driver_version", sources, "nodes[0].software.driver")
    facts.cuda_driver = _first(evidence, "cuda_version", sources, "probe.cuda_driver_version")
    read_topology(evidence, facts, sources)
    host = HostFacts()
    host.hostname = _first(evidence, "host", sources, "nodes[0].hostnames")
    host.os, host.distro = _os(evidence, sources)
    host.storage, storage_notes = storage_from_mounts(evidence, sources)
    host.network = network_from_ports(evidence, sources)
    torch = torch_facts(evidence, sources)
    spec = build_spec(facts, host, torch, now=now, name=name)
    node = spec["nodes"][0]
    toolkit = _first(evidence, "toolkit_version", sources, "nodes[0].software.cuda_toolkit")
    if toolkit:
        node.setdefault("software", {})["cuda_toolkit"] = toolkit
    if gpus:
        for item in evidence:
            if any(source == item.source for source in _gpu_sources(gpus)):
                sources.add(item, "nodes[0].gpus")
    for key, fact in (("gpu_interconnect", "nodes[0].gpu_interconnect"), ("pcie", "nodes[0].pcie")):
        if key in node:
            for item in _topology_sources(evidence, key):
                sources.add(item, fact)
    for gpu in gpus:
        gpu.pop("_from", None)
    probe = spec["probe"]
    # build_spec's note on a missing PCIe link names the NVML call; here the comments say what to add
    kept = [note for note in probe.get("notes", []) if not note.startswith("PCIe link generation unknown")]
    probe["notes"] = [*kept, *storage_notes]
    probe["sources"] = sources.entries()
    spec["description"] = (
        f"{host.hostname or 'a machine'} as {len(evidence)} saved tool output(s) describe it "
        f"(rigcheck probe --from at {spec['probed_at']})"
    )
    return spec, unfilled(spec, storage_notes)


def merge_gpus(evidence: Sequence[Evidence], sources: Sources, notes: list[str]) -> list[dict[str, Any]]:
    """The probe's GPU dicts (:class:`~rigcheck.core.spec.models.rig.ProbedGpu` fields), merged by index."""
    ranked = sorted(
        (item for item in evidence if item.gpus and item.tool in GPU_TOOLS),
        key=lambda item: GPU_TOOLS.index(item.tool),
    )
    merged: dict[int, dict[str, Any]] = {}
    for item in ranked:
        for position, gpu in enumerate(item.gpus):
            index = gpu.index if gpu.index is not None else position
            entry = merged.get(index)
            if entry is None:
                if not gpu.name:
                    continue
                entry = merged[index] = {"index": index, "name": gpu.name, "_from": [item.source]}
            elif gpu.name and not _same_model(entry["name"], gpu.name):
                notes.append(
                    f"GPU {index}: {item.source} names it {gpu.name!r}, {entry['_from'][0]} {entry['name']!r}; "
                    f"kept the first"
                )
                continue
            filled = _fill(entry, gpu)
            if filled:
                entry["_from"].append(item.source)
                sources.add(item, "probe.gpus")
                if {"ecc_current", "power_limit_w"} & set(filled):
                    sources.add(item, "nodes[0].gpus")
    if not merged:
        _gpus_from_nccl(evidence, merged, sources)
    for item in evidence:
        if item.tool != "nvidia-smi-nvlink":
            continue
        inactive_all = set(item.extra.get("all_links_inactive") or ())
        for gpu in item.gpus:
            entry = merged.get(gpu.index) if gpu.index is not None else None
            if entry is None:
                continue
            if gpu.nvlinks is not None:
                entry["nvlinks_total"] = len(gpu.nvlinks)
                entry["nvlinks_active"] = sum(link.active for link in gpu.nvlinks)
                sources.add(item, "probe.gpus[].nvlinks_active")
            elif gpu.index in inactive_all:
                entry["nvlinks_active"] = 0
                sources.add(item, "probe.gpus[].nvlinks_active")
        if not item.gpus and item.problems and "inActive" in " ".join(item.problems):
            for entry in merged.values():
                entry.setdefault("nvlinks_active", 0)
            sources.add(item, "probe.gpus[].nvlinks_active")
    counts = {item.gpu_count for item in ranked if item.gpu_count}
    if merged and counts and max(counts) > len(merged):
        notes.append(
            f"the evidence says {max(counts)} GPU(s) are attached but lists {len(merged)}: nodes[0].gpus has the "
            f"listed ones (a cut paste?)"
        )
    return [merged[index] for index in sorted(merged)]


def _gpus_from_nccl(
    evidence: Sequence[Evidence], merged: dict[int, dict[str, Any]], sources: Sources
) -> None:
    """Without an nvidia-smi GPU list: the GPUs of a one-host nccl-tests run, rank i as GPU i (each rank
    line names its device: ``# Rank 0 ... on HOST device 0 [0x04] NVIDIA H100 80GB HBM3``)."""
    for item in evidence:
        for result in item.nccl:
            if len(result.hosts) == 1 and result.devices:
                for index, name in enumerate(result.devices):
                    merged[index] = {"index": index, "name": name, "_from": [item.source]}
                sources.add(item, "probe.gpus")
                return


def _fill(entry: dict[str, Any], gpu: GpuEvidence) -> list[str]:
    filled = []
    for field in _GPU_FIELDS:
        value = getattr(gpu, field)
        if value is not None and entry.get(field) is None:
            entry[field] = value
            filled.append(field)
    if gpu.memory_total_mib is not None and entry.get("memory_mib") is None:
        entry["memory_mib"] = gpu.memory_total_mib
        filled.append("memory_mib")
    if gpu.processes is not None and entry.get("processes") is None:
        entry["processes"] = len(gpu.processes)
        filled.append("processes")
    if gpu.nvlinks is not None and entry.get("nvlinks_total") is None:
        entry["nvlinks_total"] = len(gpu.nvlinks)
        entry["nvlinks_active"] = sum(link.active for link in gpu.nvlinks)
        filled.append("nvlinks")
    return filled


def _same_model(a: str, b: str) -> bool:
    """``NVIDIA H100 80GB HBM3`` and ``H100 80GB HBM3`` (or a table's cut ``NVIDIA H100 80GB HBM3 ...``)."""

    def key(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", name.lower().removeprefix("nvidia ").rstrip(". "))

    first, second = key(a), key(b)
    return first.startswith(second) or second.startswith(first)


def _gpu_sources(gpus: list[dict[str, Any]]) -> set[str]:
    return {source for gpu in gpus for source in gpu.get("_from", [])[:1]}


def read_topology(evidence: Sequence[Evidence], facts: NvmlFacts, sources: Sources) -> None:
    """``facts.topology`` and ``facts.p2p_read`` from ``topo -m`` / ``topo -p2p`` and peer-access lines."""
    by_index = {gpu["index"]: gpu for gpu in facts.gpus}
    for item in evidence:
        topology = item.topology
        if topology is None:
            continue
        gpus = [device for device in topology.devices if device.startswith("GPU")]
        if topology.kind == "connection" and not facts.topology:
            for a in gpus:
                row = topology.matrix.get(a, {})
                links = [int(match.group(1)) for b in gpus if b != a and (match := _NV.match(row.get(b, "")))]
                index = _index(a)
                gpu = by_index.get(index) if index is not None else None
                if gpu is not None and gpu.get("nvlinks_active") is None:
                    gpu["nvlinks_active"] = max(links, default=0)
                for b in gpus:
                    cell = row.get(b, "")
                    if b == a or not cell:
                        continue
                    label = "NVLINK" if _NV.match(cell) else TOPOLOGY_LEVELS.get(cell.upper())
                    if label is not None:
                        facts.topology.setdefault(a, {})[b] = label
            sources.add(item, "probe.topology")
        elif topology.kind == "p2p":
            for n, a in enumerate(gpus):
                for b in gpus[n + 1 :]:
                    status = topology.matrix.get(a, {}).get(b)
                    first, second = _index(a), _index(b)
                    if status and first is not None and second is not None:
                        facts.p2p_read[(first, second)] = status
            sources.add(item, "nodes[0].gpu_interconnect.p2p")
        for entry in item.extra.get("peer_access", []) if isinstance(item.extra, dict) else []:
            if isinstance(entry, dict) and entry.get("can_access") is not None:
                pair = tuple(sorted((int(entry.get("src", 0)), int(entry.get("dst", 0)))))
                facts.p2p_read[pair] = "OK" if entry["can_access"] else "NS"  # type: ignore[index]
                sources.add(item, "nodes[0].gpu_interconnect.p2p")


def _topology_sources(evidence: Sequence[Evidence], key: str) -> list[Evidence]:
    if key == "pcie":
        return [item for item in evidence if any(g.pcie_gen_max for g in item.gpus)][:1]
    return [
        item
        for item in evidence
        if item.topology is not None or item.tool == "nvidia-smi-nvlink" or any(g.nvlinks for g in item.gpus)
    ]


def _index(device: str) -> int | None:
    match = re.fullmatch(r"GPU(\d+)", device)
    return int(match.group(1)) if match else None


def storage_from_mounts(
    evidence: Sequence[Evidence], sources: Sources
) -> tuple[list[dict[str, Any]], list[str]]:
    """``storage:`` entries from ``df`` rows, and notes on the mounts whose kind df cannot tell."""
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    seen: set[str] = set()
    for item in evidence:
        for mount in item.mounts:
            kind_of_fs = (mount.type or "").lower()
            if mount.mounted_on in seen or kind_of_fs in NOT_STORAGE or mount.filesystem in NOT_STORAGE:
                continue
            if (
                mount.mounted_on.startswith(("/dev", "/proc", "/sys", "/run", "/boot"))
                or not mount.size_bytes
            ):
                continue
            seen.add(mount.mounted_on)
            device = mount.filesystem
            entry: dict[str, Any] = {}
            if kind_of_fs in NETWORK_FS or (":" in device and not device.startswith("/")):
                entry = {"kind": "network-fs"}
                protocol = NETWORK_FS.get(kind_of_fs)
                if protocol:
                    entry["protocol"] = protocol
            elif device.startswith("/dev/nvme"):
                entry = {"kind": "nvme"}
            elif device.startswith(("/dev/vd", "/dev/xvd")):
                entry = {"kind": "cloud-volume"}
            if not entry:
                size = mount.size_bytes / 1e9
                notes.append(
                    f"df: {mount.mounted_on} ({device}{', ' + mount.type if mount.type else ''}, {size:,.0f} GB) "
                    f"left out of storage: df does not say what kind of drive it is (nvme, sata-ssd, hdd, "
                    f"cloud-volume)"
                )
                continue
            entry["name"] = device.rsplit("/", 1)[-1] if device.startswith("/dev/") else mount.mounted_on
            entry["capacity_gb"] = round(mount.size_bytes / 1e9, 1)
            if mount.available_bytes is not None:
                entry["free_gb"] = round(mount.available_bytes / 1e9, 1)
            entry["mount"] = mount.mounted_on
            if mount.mounted_on == "/":
                entry["roles"] = ["os"]
            out.append(entry)
            sources.add(item, "nodes[0].storage")
    return out, notes


def network_from_ports(evidence: Sequence[Evidence], sources: Sources) -> list[dict[str, Any]]:
    """``network:`` entries from the active InfiniBand/RoCE ports, by link layer and rate."""
    groups: dict[tuple[str, float | None, str | None], list[str]] = {}
    for item in evidence:
        for port in item.ib_ports:
            if not port.active:
                continue
            kind = "roce" if (port.link_layer or "").lower() == "ethernet" else "infiniband"
            label = port.ca if port.port == 1 else f"{port.ca}:{port.port}"
            groups.setdefault((kind, port.rate_gbps, None), []).append(label)
            sources.add(item, "nodes[0].network")
    return network_entries(groups)


def torch_facts(evidence: Sequence[Evidence], sources: Sources) -> dict[str, Any] | None:
    """The torch dict :func:`~rigcheck.live.probe.build_spec` takes (version, cuda, nccl, cuda_available)."""
    order = ("torch-collect-env", "torch-version", "pip-show", "pip-list", "pip-freeze")
    ranked = sorted(
        (item for item in evidence if item.torch is not None and item.tool in order),
        key=lambda item: order.index(item.tool),
    )
    facts: dict[str, Any] = {}
    for item in ranked:
        torch = item.torch
        assert torch is not None
        for key, value in (
            ("version", torch.version),
            ("cuda", torch.cuda),
            ("arch_list", torch.arch_list),
            ("cuda_available", torch.cuda_available),
        ):
            if value is not None and key not in facts:
                facts[key] = value
                if key == "version":
                    sources.add(item, "nodes[0].software.torch")
    for item in evidence:
        nccl = item.extra.get("nccl") if item.tool.startswith("pip-") else None
        if nccl and "nccl" not in facts:
            facts["nccl"] = nccl
            sources.add(item, "nodes[0].software.nccl")
    return facts or None


def _first(evidence: Sequence[Evidence], field: str, sources: Sources, fact: str) -> Any:
    for item in evidence:
        value = getattr(item, field)
        if value:
            sources.add(item, fact)
            return value
    return None


def _os(evidence: Sequence[Evidence], sources: Sources) -> tuple[str | None, str | None]:
    """``("linux", "ubuntu-22.04")`` from collect_env's ``OS: Ubuntu 22.04.4 LTS (x86_64)``."""
    for item in evidence:
        text = item.os or ""
        match = re.match(
            r"^(Ubuntu|Debian GNU/Linux|Rocky Linux|Red Hat Enterprise Linux|CentOS\w*|Amazon Linux)"
            r"\s+(\d+(?:\.\d+)?)",
            text,
        )
        if match:
            ident = {
                "Debian GNU/Linux": "debian",
                "Rocky Linux": "rocky",
                "Red Hat Enterprise Linux": "rhel",
                "Amazon Linux": "amzn",
            }.get(match.group(1), match.group(1).lower())
            sources.add(item, "nodes[0].software.distro")
            return "linux", f"{ident}-{match.group(2)}"
        if "Windows" in text:
            sources.add(item, "nodes[0].software.os")
            return "windows", None
    return None, None


def unfilled(spec: dict[str, Any], storage_notes: Sequence[str]) -> list[str]:
    """Comment lines for what the evidence did not give (the fields a check reads)."""
    node = spec["nodes"][0]
    software = node.get("software", {})
    lines = []
    wanted = (
        ("gpus", "nodes[0].gpus", "no nvidia-smi output (nvidia-smi -q -x is the richest)"),
        ("gpu_interconnect", "nodes[0].gpu_interconnect", "nvidia-smi topo -m and nvidia-smi nvlink -s"),
        ("pcie", "nodes[0].pcie", "nvidia-smi -q (or -q -x) gives each GPU's PCIe link"),
        (
            "cpu",
            "nodes[0].cpu",
            "the CPU model, sockets and cores (lscpu; rigcheck probe reads /proc/cpuinfo)",
        ),
        ("memory_gib", "nodes[0].memory_gib", "system RAM in GiB (free -g)"),
        ("storage", "nodes[0].storage", "drives and mounts (df -hT; fio JSON for their speed)"),
        ("network", "nodes[0].network", "InfiniBand or RoCE ports (ibstat), Ethernet links"),
    )
    for key, path, how in wanted:
        if key not in node:
            lines.append(f"{path}: {how}")
    for key, path, how in (
        ("driver", "software.driver", "nvidia-smi"),
        ("cuda_toolkit", "software.cuda_toolkit", "nvcc -V"),
        ("torch", "software.torch", "pip show torch, or python -m torch.utils.collect_env"),
    ):
        if key not in software:
            lines.append(f"nodes[0].{path}: {how}")
    lines.extend(storage_notes)
    lines.append(
        "nodes[0].psu, nodes[0].chassis, site: no tool reports them (a bought machine: add them; a "
        "cloud instance: add nodes[0].instance instead)"
    )
    return lines
