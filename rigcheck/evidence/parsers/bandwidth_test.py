"""CUDA samples ``bandwidthTest``: Quick, Range and Shmoo modes, and the ``--csv`` lines.

Sections "Host to Device Bandwidth", "Device to Host Bandwidth", "Device to Device Bandwidth",
each with "PINNED" or "PAGEABLE Memory Transfers" and a ``Transfer Size (Bytes)  Bandwidth(X)``
header. Old samples print MB/s, newer ones GB/s, so the unit is read from that header (MB = 10^6 B).
The ``--csv`` form prints ``bandwidthTest-H2D-Pinned, Bandwidth = 12.4 GB/s, ... Size = N bytes``.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Bandwidth, Evidence, GpuEvidence

_SECTION = re.compile(r"^\s*(Host to Device|Device to Host|Device to Device) Bandwidth(?:,\s*(\d+) Device)?")
_UNIT = re.compile(r"Bandwidth\s*\(\s*([KMGT]i?B)/s\s*\)", re.IGNORECASE)
_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+)\s*$")
_CSV = re.compile(
    r"bandwidthTest-(H2D|D2H|D2D)-(Pinned|Pageable)\s*,\s*Bandwidth\s*=\s*([\d.]+)\s*([KMGT]i?B)/s"
    r"(?:.*?Size\s*=\s*(\d+)\s*bytes)?(?:.*?NumDevsUsed\s*=\s*(\d+))?",
    re.IGNORECASE,
)
_DEVICE = re.compile(r"^\s*Device\s+(\d+):\s*(.+?)\s*$")
_KINDS = {
    "Host to Device": "h2d",
    "Device to Host": "d2h",
    "Device to Device": "d2d",
    "H2D": "h2d",
    "D2H": "d2h",
    "D2D": "d2d",
}
_TO_GB = {
    "KB": 1e-6,
    "MB": 1e-3,
    "GB": 1.0,
    "TB": 1e3,
    "KIB": 1024 / 1e9,
    "MIB": 1024**2 / 1e9,
    "GIB": 1024**3 / 1e9,
}


def _ends(kind: str, devices: list[int]) -> tuple[str | None, str | None]:
    gpu = f"GPU{devices[0]}" if len(devices) == 1 else None
    if kind == "h2d":
        return "host", gpu
    if kind == "d2h":
        return gpu, "host"
    return gpu, gpu


class BandwidthTestParser:
    name = "bandwidthTest"

    def detect(self, text: str) -> bool:
        return (
            "[CUDA Bandwidth Test]" in text
            or bool(_CSV.search(text))
            or ("Transfer Size (Bytes)" in text and bool(_SECTION.search(text)))
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        extra: dict[str, Any] = {}
        gpus: list[GpuEvidence] = []
        results: list[Bandwidth] = []
        kind: str | None = None
        pinned: bool | None = None
        factor: float | None = None
        for line in text.splitlines():
            if match := _DEVICE.match(line):
                gpus.append(GpuEvidence(index=int(match.group(1)), name=match.group(2)))
                continue
            if match := re.match(r"^\s*(Quick|Range|Shmoo) Mode", line):
                extra["mode"] = match.group(1).lower()
                continue
            if match := _SECTION.match(line):
                kind = _KINDS[match.group(1)]
                factor = None
                continue
            if "PINNED Memory Transfers" in line:
                pinned = True
                continue
            if "PAGEABLE Memory Transfers" in line:
                pinned = False
                continue
            if "Transfer Size" in line:
                unit = _UNIT.search(line)
                factor = _TO_GB.get(unit.group(1).upper()) if unit else None
                if factor is None:
                    problems.append(f"unknown bandwidth unit in {line.strip()!r}")
                continue
            if match := _CSV.search(line):
                csv_kind = _KINDS[match.group(1).upper()]
                scale = _TO_GB.get(match.group(4).upper(), 1.0)
                devices = [gpu.index or 0 for gpu in gpus]
                src, dst = _ends(csv_kind, devices)
                results.append(
                    Bandwidth(
                        kind=csv_kind,  # type: ignore[arg-type]
                        src=src,
                        dst=dst,
                        gbps=round(float(match.group(3)) * scale, 6),
                        size_bytes=int(match.group(5)) if match.group(5) else None,
                        pinned=match.group(2).lower() == "pinned",
                        tool=self.name,
                    )
                )
                continue
            if (match := _ROW.match(line)) and kind is not None:
                if factor is None:
                    problems.append(
                        f"a {kind} row before any 'Transfer Size (Bytes)  Bandwidth(unit)' header"
                    )
                    continue
                src, dst = _ends(kind, [gpu.index or 0 for gpu in gpus])
                results.append(
                    Bandwidth(
                        kind=kind,  # type: ignore[arg-type]
                        src=src,
                        dst=dst,
                        gbps=round(float(match.group(2)) * factor, 6),
                        size_bytes=int(match.group(1)),
                        pinned=pinned,
                        tool=self.name,
                    )
                )
        if result := re.search(r"Result\s*=\s*(PASS|FAIL|WAIVED)", text):
            extra["result"] = result.group(1)
        else:
            problems.append("no 'Result = PASS' line (cut off?)")
        if not results:
            problems.append("no bandwidth rows")
        if "Cumulative Bandwidth" in text:
            extra["cumulative"] = True
        return Evidence(
            source=path,
            tool=self.name,
            gpu_count=len(gpus) or None,
            gpus=gpus,
            bandwidth=results,
            problems=problems,
            extra=extra,
        )


PARSER = BandwidthTestParser()
