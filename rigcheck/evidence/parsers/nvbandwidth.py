"""NVIDIA ``nvbandwidth``: one matrix per test case, then ``SUM <testcase> <GB/s>``.

Header: ``nvbandwidth Version: v0.x``, ``CUDA Runtime Version``, ``CUDA Driver Version``, ``Driver
Version``, optionally ``Device i: name (bus)``. Each test prints ``Running <testcase>.``, a title
such as ``memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)``, a line of column indices, and rows
with ``N/A`` where a pair is not measured. The test case name says what was copied:
host_to_device -> h2d, device_to_host -> d2h, device_to_device -> p2p (p2p_bidir when
bidirectional), device_local_copy -> d2d. Latency tests are kept in ``extra`` only. The number of
GPU columns can reveal a GPU that is missing.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Bandwidth, Evidence, GpuEvidence

_RUNNING = re.compile(r"^Running (?:benchmark )?(\w+)\.?\s*$")
_TITLE = re.compile(r"^(?:memcpy|memory).*\((row|column)s?\).*\((row|column)s?\).*bandwidth\s*\(GB/s\)", re.I)
_SUM = re.compile(r"^SUM\s+(\w+)\s+([\d.]+)")
_DEVICE = re.compile(r"^Device\s+(\d+):\s*(.+?)\s*(?:\(([0-9A-Fa-f:.]+)\))?\s*$")
_ROW = re.compile(r"^\s*(\d+)((?:\s+(?:[\d.]+|N/A))+)\s*$")


def _kind(testcase: str) -> str | None:
    name = testcase.lower()
    if "latency" in name:
        return None
    if name.startswith(("host_to_device", "host_to_all")):
        return "h2d"
    if name.startswith(("device_to_host", "all_to_host")):
        return "d2h"
    if name.startswith("device_local_copy"):
        return "d2d"
    if name.startswith(("device_to_device", "all_to_one", "one_to_all")):
        return "p2p_bidir" if "bidirectional" in name else "p2p"
    return None


class NvbandwidthParser:
    name = "nvbandwidth"

    def detect(self, text: str) -> bool:
        return "nvbandwidth Version" in text or bool(
            re.search(r"(?m)^Running \w+_(?:ce|sm)\.\s*$", text) and re.search(r"(?m)^SUM \w+ ", text)
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        extra: dict[str, Any] = {}
        gpus: list[GpuEvidence] = []
        results: list[Bandwidth] = []
        sums: dict[str, float] = {}
        testcase: str | None = None
        title: str | None = None
        row_is_gpu = False
        column_is_gpu = True
        columns_seen = 0
        matrices = 0
        tool_version = driver = None
        for line in text.splitlines():
            stripped = line.strip()
            if match := re.match(r"^nvbandwidth Version:\s*(\S+)", stripped):
                tool_version = match.group(1)
                continue
            if match := re.match(r"^Driver Version:\s*(\S+)", stripped):
                driver = match.group(1)
                continue
            if match := re.match(r"^CUDA (Runtime|Driver) Version(?: \(API\))?:\s*(.+)$", stripped):
                extra[f"cuda_{match.group(1).lower()}_version"] = match.group(2).strip()
                continue
            if match := _DEVICE.match(stripped):
                gpus.append(
                    GpuEvidence(index=int(match.group(1)), name=match.group(2), bus_id=match.group(3))
                )
                continue
            if match := _RUNNING.match(stripped):
                testcase, title = match.group(1), None
                continue
            if match := _SUM.match(stripped):
                sums[match.group(1)] = float(match.group(2))
                continue
            if _TITLE.match(stripped):
                title = stripped
                row_is_gpu = bool(re.search(r"GPU\s*\(rows?\)", stripped, re.I))
                column_is_gpu = not re.search(r"CPU\s*\(columns?\)", stripped, re.I)
                matrices += 1
                continue
            if title and re.fullmatch(r"(\d+\s*)+", stripped):
                columns_seen = max(columns_seen, len(stripped.split()))
                continue
            if not (title and testcase and (match := _ROW.match(line))):
                continue
            kind = _kind(testcase)
            if kind is None or re.search(r"\b(Read|Write)\d\b", title):
                continue  # latency, or one half of a bidirectional pair (the Total is kept)
            row = int(match.group(1))
            for column, cell in enumerate(match.group(2).split()):
                if cell == "N/A":
                    continue
                row_end = f"GPU{row}" if row_is_gpu else f"CPU{row}"
                column_end = f"GPU{column}" if column_is_gpu else f"CPU{column}"
                reverse = "<-" in title and "<->" not in title
                src, dst = (column_end, row_end) if reverse else (row_end, column_end)
                if (kind == "h2d" and src.startswith("GPU")) or (kind == "d2h" and src.startswith("CPU")):
                    src, dst = dst, src
                results.append(
                    Bandwidth(
                        kind=kind,  # type: ignore[arg-type]
                        src=src,
                        dst=dst,
                        gbps=float(cell),
                        tool=f"{self.name}:{testcase}",
                    )
                )
        if sums:
            extra["sums"] = sums
        if columns_seen:
            extra["matrix_gpus"] = columns_seen
        if tool_version is None:
            problems.append("no 'nvbandwidth Version' line")
        if matrices == 0:
            problems.append("no result matrix ('... bandwidth (GB/s)' title)")
        return Evidence(
            source=path,
            tool=self.name,
            tool_version=tool_version,
            driver_version=driver,
            gpu_count=len(gpus) or columns_seen or None,
            gpus=gpus,
            bandwidth=results,
            problems=problems,
            extra=extra,
        )


PARSER = NvbandwidthParser()
