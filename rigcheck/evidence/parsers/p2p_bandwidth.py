"""CUDA samples ``p2pBandwidthLatencyTest``.

``Device=0 CAN|CANNOT Access Peer Device=1`` lines (kept in ``extra["peer_access"]``), a P2P
connectivity matrix, four bandwidth matrices in GB/s (unidirectional and bidirectional, each with
P2P disabled and enabled; the diagonal is a copy within one GPU) and latency matrices in µs.
Each off-diagonal cell becomes one ``Bandwidth`` (``p2p`` or ``p2p_bidir``, with ``p2p_enabled``);
the diagonal of the unidirectional P2P=Disabled matrix becomes a ``d2d`` entry per GPU.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Bandwidth, Evidence, GpuEvidence

_DEVICE = re.compile(
    r"^Device:\s*(\d+),\s*(.+?),\s*pciBusID:\s*([0-9a-fA-F]+),\s*pciDeviceID:\s*([0-9a-fA-F]+),"
    r"\s*pciDomainID:\s*([0-9a-fA-F]+)"
)
_PEER = re.compile(r"Device=(\d+)\s+(CAN|CANNOT)\s+Access Peer Device=(\d+)")
_BANDWIDTH_TITLE = re.compile(r"^(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth.*Matrix")
_LATENCY_TITLE = re.compile(r"^P2P=(Enabled|Disabled) Latency.*Matrix")
_ROW = re.compile(r"^\s*(\d+)((?:\s+[\d.]+)+)\s*$")


class P2pBandwidthParser:
    name = "p2pBandwidthLatencyTest"

    def detect(self, text: str) -> bool:
        return "P2P (Peer-to-Peer) GPU Bandwidth Latency Test" in text or bool(
            re.search(r"(?m)^(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth", text)
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        gpus: list[GpuEvidence] = []
        peer: list[dict[str, Any]] = []
        results: list[Bandwidth] = []
        matrices: dict[str, dict[int, list[float]]] = {}
        current: str | None = None
        latency_part = "gpu"
        for line in text.splitlines():
            if match := _DEVICE.match(line.strip()):
                index, name, bus, device, domain = match.groups()
                bus_id = f"{int(domain, 16):08X}:{int(bus, 16):02X}:{int(device, 16):02X}.0"
                gpus.append(GpuEvidence(index=int(index), name=name, bus_id=bus_id))
                continue
            if match := _PEER.search(line):
                peer.append(
                    {
                        "src": int(match.group(1)),
                        "dst": int(match.group(3)),
                        "can_access": match.group(2) == "CAN",
                    }
                )
                continue
            stripped = line.strip()
            if stripped.startswith("P2P Connectivity Matrix"):
                current = "connectivity"
                continue
            if match := _BANDWIDTH_TITLE.match(stripped):
                direction = "uni" if match.group(1) == "Unidirectional" else "bidir"
                current = f"{direction}:{match.group(2).lower()}"
                continue
            if match := _LATENCY_TITLE.match(stripped):
                current = f"latency:{match.group(1).lower()}"
                latency_part = "gpu"
                continue
            if stripped.startswith("CPU") and current and current.startswith("latency"):
                latency_part = "cpu"
                continue
            if current and (match := _ROW.match(line)):
                key = f"{current}:{latency_part}" if current.startswith("latency") else current
                matrices.setdefault(key, {})[int(match.group(1))] = [float(v) for v in match.group(2).split()]
        count = len(gpus) or max((len(rows) for rows in matrices.values()), default=0)
        for key in ("uni:disabled", "uni:enabled", "bidir:disabled", "bidir:enabled"):
            matrix = matrices.get(key)
            if matrix is None:
                problems.append(f"no {key.replace(':', ' P2P=')} bandwidth matrix (cut off?)")
                continue
            if len(matrix) < count or any(len(row) < count for row in matrix.values()):
                problems.append(
                    f"the {key.replace(':', ' P2P=')} matrix has fewer than {count} rows or columns"
                )
            kind = "p2p" if key.startswith("uni") else "p2p_bidir"
            enabled = key.endswith("enabled")
            for src, row in sorted(matrix.items()):
                for dst, value in enumerate(row):
                    if src == dst:
                        if key == "uni:disabled":
                            results.append(
                                Bandwidth(
                                    kind="d2d", src=f"GPU{src}", dst=f"GPU{dst}", gbps=value, tool=self.name
                                )
                            )
                        continue
                    results.append(
                        Bandwidth(
                            kind=kind,  # type: ignore[arg-type]
                            src=f"GPU{src}",
                            dst=f"GPU{dst}",
                            gbps=value,
                            p2p_enabled=enabled,
                            tool=self.name,
                        )
                    )
        extra: dict[str, Any] = {"peer_access": peer}
        if not peer and count > 1:
            problems.append("no 'Device=N CAN/CANNOT Access Peer Device=M' lines")
        if "connectivity" in matrices:
            extra["p2p_connectivity"] = [
                [int(v) for v in row] for _, row in sorted(matrices["connectivity"].items())
            ]
        latency = {
            key.removeprefix("latency:"): [row for _, row in sorted(rows.items())]
            for key, rows in matrices.items()
            if key.startswith("latency:")
        }
        if latency:
            extra["latency_us"] = latency
        return Evidence(
            source=path,
            tool=self.name,
            gpu_count=len(gpus) or None,
            gpus=gpus,
            bandwidth=results,
            problems=problems,
            extra=extra,
        )


PARSER = P2pBandwidthParser()
