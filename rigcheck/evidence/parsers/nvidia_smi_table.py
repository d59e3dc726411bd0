"""``nvidia-smi`` with no arguments: the default table, a last resort.

Two layouts: the old one, 79 columns wide with names cut to "Tesla V100-SXM2..." (drivers up
to 525), and the new one, 91 columns with full names (530 on). Each GPU is a block of two or three
``|``-separated rows between ``+---`` rules: index, name, persistence, bus id, display, ECC; then
fan, temperature, performance state, power usage/cap, memory used/total, utilisation, compute mode;
then (newer) the MIG mode. ``ERR!`` in a cell means nvidia-smi could not read it. Drivers before
~400 print no "CUDA Version".
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence, GpuEvidence
from rigcheck.evidence.parsers.values import number

_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_BUS = re.compile(r"^\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(\S+)\s*$")
_ROW2 = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*$")
_MEMORY = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if not body.startswith("|"):
        return []
    return body.strip("|").split("|")


def _processes(lines: list[str]) -> dict[int, list[dict[str, Any]]]:
    """Rows of the Processes table: GPU [GI CI] PID Type Name Memory."""
    found: dict[int, list[dict[str, Any]]] = {}
    for line in lines:
        cells = _cells(line)
        if len(cells) != 1:
            continue
        tokens = cells[0].split()
        if len(tokens) < 4 or not tokens[0].isdigit() or not tokens[-1].endswith("MiB"):
            continue
        middle = tokens[1:-1]
        for position in range(1, len(middle)):
            if middle[position - 1].isdigit() and re.fullmatch(r"[CGM](\+[CGM])*", middle[position]):
                found.setdefault(int(tokens[0]), []).append(
                    {
                        "pid": int(middle[position - 1]),
                        "type": middle[position],
                        "name": " ".join(middle[position + 1 :]) or None,
                        "used_memory_mib": number(tokens[-1]),
                    }
                )
                break
    return found


class NvidiaSmiTableParser:
    name = "nvidia-smi-table"

    def detect(self, text: str) -> bool:
        return bool(_HEADER.search(text)) and ("Memory-Usage" in text or "Bus-Id" in text)

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        extra: dict[str, Any] = {}
        header = _HEADER.search(text)
        tool_version = driver = cuda = None
        if header:
            tool_version, driver, cuda = header.groups()
        else:
            problems.append("no 'NVIDIA-SMI ... Driver Version: ...' header line")

        lines = text.splitlines()
        process_start = next((i for i, line in enumerate(lines) if "Processes:" in line), len(lines))
        table_start = next(
            (i for i, line in enumerate(lines[:process_start]) if line.strip().startswith("|=")), None
        )
        if table_start is None:
            problems.append("no '|=====' line under the column headers (cut off?)")
            return Evidence(
                source=path,
                tool=self.name,
                tool_version=tool_version,
                driver_version=driver,
                cuda_version=cuda,
                problems=problems,
            )

        blocks: list[list[list[str]]] = [[]]
        for line in lines[table_start + 1 : process_start]:
            stripped = line.strip()
            if stripped.startswith("+") or not stripped:
                if blocks[-1]:
                    blocks.append([])
                continue
            cells = _cells(line)
            if len(cells) == 3:
                blocks[-1].append(cells)
        blocks = [block for block in blocks if block]

        gpus: list[GpuEvidence] = []
        compute_modes: dict[str, str] = {}
        for block in blocks:
            first = _gpu_cell(block[0][0])
            if first is None:
                row = "|".join(block[0])
                problems.append(f"a table row does not start with a GPU index and name: {row[:120]!r}")
                continue
            index, name, persistence = first
            bus = _BUS.match(block[0][1])
            ecc_cell = block[0][2].strip()
            gpu: dict[str, Any] = {
                "index": index,
                "name": name,
                "persistence_mode": {"On": True, "Off": False}.get(persistence),
                "bus_id": bus.group(1) if bus else None,
                "ecc_uncorrectable_volatile": int(ecc_cell) if _whole(ecc_cell) else None,
            }
            if bus is None:
                problems.append(f"GPU {index}: no bus id in {block[0][1].strip()!r}")
            if len(block) < 2:
                problems.append(f"GPU {index}: the row with power and memory is missing (cut off?)")
            else:
                second = _ROW2.match(block[1][0])
                if second is None:
                    problems.append(
                        f"GPU {index}: cannot read fan/temp/perf/power from {block[1][0].strip()!r}"
                    )
                else:
                    fan, _temp, _perf, usage, cap = second.groups()
                    if "ERR!" in fan:
                        problems.append(
                            f"GPU {index}: the fan column reads ERR! (nvidia-smi could not read it)"
                        )
                    gpu["power_draw_w"] = number(usage) if "ERR" not in usage else None
                    gpu["power_limit_w"] = number(cap) if "ERR" not in cap else None
                memory = _MEMORY.search(block[1][1])
                if memory is None:
                    problems.append(f"GPU {index}: no 'used / total MiB' in {block[1][1].strip()!r}")
                else:
                    gpu["memory_total_mib"] = float(memory.group(2))
                parts = block[1][2].split(None, 1)
                if len(parts) == 2:
                    compute_modes[str(index)] = parts[1].strip()
            if len(block) >= 3:
                mig = block[2][2].strip()
                gpu["mig_enabled"] = {"Enabled": True, "Disabled": False}.get(mig)
            gpus.append(GpuEvidence(**gpu))

        if not gpus:
            problems.append("no table rows after the header")
        processes = _processes(lines[process_start:])
        for gpu_evidence in gpus:
            if gpu_evidence.index in processes:
                gpu_evidence.processes = processes[gpu_evidence.index]
        if compute_modes:
            extra["compute_mode"] = compute_modes
        if any(gpu.name and gpu.name.endswith("...") for gpu in gpus):
            extra["names_truncated"] = True
        extra["layout"] = "new" if any(len(line.rstrip()) >= 91 for line in lines[:6]) else "old"
        return Evidence(
            source=path,
            tool=self.name,
            tool_version=tool_version,
            driver_version=driver,
            cuda_version=cuda,
            gpu_count=len(gpus),
            gpus=gpus,
            problems=problems,
            extra=extra,
        )


PARSER = NvidiaSmiTableParser()


def _whole(text: str) -> bool:
    """Whether ``text`` is a whole number a counter can hold (ASCII digits, at most 18: ``int`` of
    thousands of digits is slow, and of 4,300 or more an error)."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def _gpu_cell(cell: str) -> tuple[int, str, str] | None:
    """The first cell of a GPU's row, ``0  NVIDIA H100 80GB HBM3          On``: its index, name and
    persistence mode, or None. Split on blanks, not matched with a pattern: the pattern this replaces
    backtracked cubically on a cell of blanks (2,000 took 14 s)."""
    parts = cell.split()
    if len(parts) < 2 or not _whole(parts[0]) or parts[-1] not in ("On", "Off", "N/A"):
        return None
    return int(parts[0]), " ".join(parts[1:-1]), parts[-1]
