"""Storage arithmetic shared by the STO and REL checkers: which device holds the data and the
checkpoints, what it sustains (a device's own numbers, defaults for HDD/SATA, cloud volume limits),
and how big a checkpoint is (docs/research/rules_facts.md STO-1..STO-6).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rigcheck.core.engine.views import NodeView
from rigcheck.core.spec.models.rig import StorageDevice

MIB = 2**20


@dataclass(frozen=True)
class DeviceRates:
    """What a storage entry sustains in total (``count`` devices), MB/s and IOPS; None when unknown."""

    device: StorageDevice
    index: int
    pointer: str
    read_mb_s: float | None
    write_mb_s: float | None
    random_read_iops: float | None
    capacity_gb: float | None
    free_gb: float | None
    how: str
    shared: bool  # a network file system that all nodes share

    @property
    def label(self) -> str:
        name = self.device.name or self.device.kind
        return f"{name} ({self.device.volume_type or self.device.kind})"


def pick_device(
    node: NodeView, wanted: str | None, role: str, prefer_shared: bool = False
) -> tuple[int, StorageDevice] | None:
    """The device a workload names (``data.storage``), else one with the role, else (``prefer_shared``:
    checkpoints of a multi-node job, which must outlive any one node) a shared file system, else the
    first that is not the OS disk, else the first."""
    devices = list(node.spec.storage or ())
    if not devices:
        return None
    if wanted:
        for index, device in enumerate(devices):
            if device.name == wanted:
                return index, device
    for index, device in enumerate(devices):
        if device.roles and role in device.roles:
            return index, device
    if prefer_shared:
        for index, device in enumerate(devices):
            if device.kind == "network-fs":
                return index, device
    for index, device in enumerate(devices):
        if not (device.roles and device.roles == ["os"]) and device.name != "os":
            return index, device
    return 0, devices[0]


def device_rates(node: NodeView, index: int, device: StorageDevice, facts: Mapping[str, Any]) -> DeviceRates:
    count = device.count
    striped = count if device.raid in (None, "raid0", "jbod", "none", "raid10", "raid5", "raid6") else 1
    read, write, iops = device.read_mb_s, device.write_mb_s, device.random_read_iops
    how = "the rig's numbers"
    defaults = facts["device_defaults"]
    if device.kind in defaults and (read is None or write is None or iops is None):
        d = defaults[device.kind]
        read = read if read is not None else d.get("read_mb_s")
        write = write if write is not None else d.get("write_mb_s")
        iops = iops if iops is not None else d.get("random_read_iops")
        how = f"{device.kind} defaults (docs/research/rules_facts.md STO-2) where the rig gives none"
    if device.kind == "cloud-volume":
        read, write, iops, how = cloud_volume(device, facts)
        striped = count
    capacity = device.capacity_gb * count if device.capacity_gb else None
    if device.raid == "raid1" and device.capacity_gb:
        capacity = device.capacity_gb
    return DeviceRates(
        device,
        index,
        f"{node.pointer}/storage/{index}",
        read * striped if read is not None else None,
        write * (striped if device.raid != "raid1" else 1) if write is not None else None,
        iops * striped if iops is not None else None,
        capacity,
        device.free_gb,
        how,
        device.kind in ("network-fs", "object-store"),
    )


def cloud_volume(
    device: StorageDevice, facts: Mapping[str, Any]
) -> tuple[float | None, float | None, float | None, str]:
    """Cloud volume limits: provisioned figures, else the type's baseline (gp3: 3,000 IOPS, 125 MiB/s)."""
    table = facts["cloud_volumes"]
    kind = (device.volume_type or "").lower()
    spec = table.get(kind)
    if spec is None:
        return (
            device.read_mb_s,
            device.write_mb_s,
            device.random_read_iops or device.provisioned_iops,
            "the rig's numbers (volume type unknown to rigcheck)",
        )
    size_gib = (device.capacity_gb or 0) * 1e9 / 2**30
    if (
        kind in ("pd-balanced", "pd-ssd") and size_gib <= 0
    ):  # per-GiB rates of an unknown size: unknown, not 0
        return None, None, None, f"{kind}: rates scale with the size, and capacity_gb is not given"
    mb_s: float | None  # None only for a provisioned volume that gives no rate
    if kind in ("gp3", "premium-ssd-v2"):
        iops = device.provisioned_iops or spec["baseline_iops"]
        if device.provisioned_mb_s:
            mb_s = device.provisioned_mb_s
        elif kind == "gp3":
            mb_s = spec["baseline_mib_s"] * MIB / 1e6
        else:
            mb_s = spec["baseline_mb_s"]
        how = (
            f"{kind}: {'provisioned' if device.provisioned_iops or device.provisioned_mb_s else 'baseline'} "
            f"{iops:,.0f} IOPS, {mb_s:,.1f} MB/s"
        )
    elif kind == "gp2":
        iops = min(max(spec["min_iops"], spec["iops_per_gib"] * size_gib), spec["burst_iops"])
        mb_s = spec["max_mib_s"] * MIB / 1e6
        how = f"gp2: 3 IOPS/GiB x {size_gib:,.0f} GiB (burst {spec['burst_iops']:,})"
    elif kind in ("pd-balanced", "pd-ssd"):
        iops = spec["iops_per_gib"] * size_gib
        mb_s = min(spec["mib_s_per_gib"] * size_gib, spec["max_mib_s"]) * MIB / 1e6
        how = f"{kind}: {spec['iops_per_gib']} IOPS and {spec['mib_s_per_gib']} MiB/s per GiB x {size_gib:,.0f} GiB"
    else:  # io2, ultra: provisioned
        iops = device.provisioned_iops or device.random_read_iops
        mb_s = device.provisioned_mb_s or device.read_mb_s
        how = f"{kind}: provisioned figures"
    return mb_s, mb_s, iops, how


def checkpoint_bytes(
    params: float, trainable: float, kind: str, facts: Mapping[str, Any]
) -> tuple[float, str]:
    """A checkpoint's size: full restartable (14 B/param), weights only (2 B/param), or LoRA adapters with
    their optimizer state (12 B per adapter parameter)."""
    table = facts["checkpoint"]
    if trainable < params:  # adapters: the frozen base is not saved
        per = float(table["adapter_bytes_per_param"])
        return trainable * per, f"{trainable / 1e6:,.1f}M adapter params x {per:g} B"
    if kind == "weights-only":
        per = float(table["weights_only_bytes_per_param"])
        return params * per, f"{params / 1e9:.2f}B params x {per:g} B (weights only)"
    per = float(table["full_bytes_per_param"])
    return params * per, f"{params / 1e9:.2f}B params x {per:g} B (weights, master copy, optimizer state)"
