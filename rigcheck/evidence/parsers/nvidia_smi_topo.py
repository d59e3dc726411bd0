"""``nvidia-smi topo -m`` (connection matrix) and ``nvidia-smi topo -p2p r|w|n|a|p`` (P2P matrix).

nvidia-smi writes a tab-separated matrix, but pastes turn tabs into spaces or lose them
(``NIC8NIC9`` in a header, ``NODENODE`` in a row), and an empty cell may sit before ``GPU NUMA ID``.
So cells are split on any whitespace, and a cell made of two known tokens run together is split
back into them (and reported in ``problems``); what cannot be split is reported too. The header
names the columns: ``GPU0..``, ``NIC0..`` (older drivers: ``mlx5_0``...), then ``CPU Affinity``,
``NUMA Affinity`` and, on newer drivers, ``GPU NUMA ID``.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence, TopologyEvidence

_LINK = r"NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|CNS|GNS|TNS|NS|OK|DR|X|U"
_LINK_TOKEN = re.compile(rf"(?:{_LINK})")
_LINKS = re.compile(rf"(?:{_LINK})+")
_DEVICE = r"GPU\d+|NIC\d+|mlx\d+_(?:bond_)?\d+"
_DEVICE_TOKEN = re.compile(_DEVICE)
_DEVICES = re.compile(rf"(?:{_DEVICE})+")
_AFFINITY_COLUMNS = {
    "CPU Affinity": "CPU_Affinity",
    "NUMA Affinity": "NUMA_Affinity",
    "GPU NUMA ID": "GPU_NUMA_ID",
}
_GPU0_ROW = re.compile(r"(?m)^[ \t]*GPU0[ \t]+X(?:[ \t]|$)")
_P2P_TOKENS = {"OK", "NS", "CNS", "GNS", "TNS", "DR", "U"}


def _split_links(token: str) -> list[str] | None:
    """``NODENODE`` -> [NODE, NODE]; None when ``token`` is not made of link tokens."""
    if _LINKS.fullmatch(token):
        return _LINK_TOKEN.findall(token)
    return None


class NvidiaSmiTopoParser:
    name = "nvidia-smi-topo"

    def detect(self, text: str) -> bool:
        return bool(_GPU0_ROW.search(text))

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        extra: dict[str, Any] = {}
        lines = text.splitlines()
        row0 = next((i for i, line in enumerate(lines) if _GPU0_ROW.match(line)), None)
        header_at = None
        if row0 is not None:
            header_at = next(
                (i for i in range(row0 - 1, -1, -1) if re.search(r"\bGPU0", lines[i]) and lines[i].strip()),
                None,
            )
        if header_at is None:
            problems.append("no header line naming the columns (GPU0 GPU1 ...)")
            return Evidence(source=path, tool=self.name, problems=problems)

        header = lines[header_at]
        for words, token in _AFFINITY_COLUMNS.items():
            header = header.replace(words, token)
        devices: list[str] = []
        trailing: list[str] = []
        for token in header.split():
            if token in _AFFINITY_COLUMNS.values():
                trailing.append(token)
            elif _DEVICE_TOKEN.fullmatch(token):
                devices.append(token)
            elif _DEVICES.fullmatch(token):
                names: list[str] = _DEVICE_TOKEN.findall(token)
                problems.append(
                    f"tab separators missing in the header: {token!r} (read as {' '.join(names)})"
                )
                devices.extend(names)
            else:
                devices.append(token)  # a raw device name from an old driver (e.g. an IB device)

        matrix: dict[str, dict[str, str]] = {}
        numa: dict[str, str] = {}
        cpu: dict[str, str] = {}
        gpu_numa_id: dict[str, str] = {}
        end = header_at + 1
        for end in range(header_at + 1, len(lines)):
            line = lines[end]
            if not line.strip() or line.strip().startswith("Legend"):
                break
            tokens = line.split()
            label, rest = tokens[0], tokens[1:]
            cells: list[str] = []
            position = 0
            while position < len(rest) and len(cells) < len(devices):
                token = rest[position]
                parts = _split_links(token)
                if parts is None:
                    break
                if len(parts) > 1:
                    problems.append(f"tab separators missing in row {label}: {token!r}")
                cells.extend(parts)
                position += 1
            if len(cells) > len(devices):
                problems.append(f"row {label} has {len(cells)} matrix cells for {len(devices)} columns")
            elif len(cells) < len(devices):
                bad = rest[position] if position < len(rest) else None
                if bad is not None and label.startswith("GPU") and re.search(r"[A-Z]{2}", bad):
                    problems.append(f"row {label}: cannot read the cell {bad!r}")
                problems.append(f"row {label} has {len(cells)} matrix cells for {len(devices)} columns")
            matrix[label] = dict(zip(devices, cells, strict=False))
            after = rest[position:]
            if label.startswith("GPU") and after:
                if len(after) >= 1:
                    cpu[label] = after[0]
                if len(after) >= 2:
                    numa[label] = after[1]
                if len(after) >= 3:
                    gpu_numa_id[label] = after[2]
        else:
            end = len(lines)

        gpu_columns = [device for device in devices if device.startswith("GPU")]
        nic_columns = [device for device in devices if not device.startswith("GPU")]
        missing_rows = [device for device in devices if device not in matrix]
        if missing_rows:
            problems.append(
                f"the header names {len(devices)} devices but there are no rows for "
                f"{', '.join(missing_rows)} (cut off?)"
            )
        legend: dict[str, str] = {}
        for line in lines[end:]:
            match = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", line)
            if match:
                legend[match.group(1)] = match.group(2)
        if any(column.startswith("NIC") for column in nic_columns) and not legend:
            problems.append("NIC columns but no 'NIC Legend' section mapping them to device names (cut off?)")
        values = {value for row in matrix.values() for value in row.values()}
        kind = _kind(text, values)
        if gpu_numa_id:
            extra["gpu_numa_id"] = gpu_numa_id
        if "Legend:" not in text:
            extra["legend"] = False
        topology = TopologyEvidence(
            kind=kind, devices=devices, matrix=matrix, numa=numa, cpu_affinity=cpu, nic_legend=legend
        )
        return Evidence(
            source=path,
            tool=self.name,
            gpu_count=len(gpu_columns),
            topology=topology,
            problems=problems,
            extra=extra,
        )


PARSER = NvidiaSmiTopoParser()


def _kind(text: str, values: set[str]) -> str:
    """``connection`` (topo -m) or ``p2p`` (topo -p2p): by the legend where it says, since a one-GPU
    matrix holds only ``X``; else by the cells."""
    if "Connection traversing" in text or "CPU Affinity" in text:
        return "connection"
    if "Status Ok" in text:
        return "p2p"
    return "p2p" if values and values - {"X"} <= _P2P_TOKENS else "connection"
