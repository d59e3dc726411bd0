"""``nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]``.

The header echoes the field names with their units (``memory.total [MiB]``); values keep their
units unless ``nounits`` was given; ``[N/A]`` and ``[Not Supported]`` mean no value. One row per
GPU in index order; with ``-l``/``-lms`` the rows repeat, one set per sample, so rows are grouped by
GPU (index, bus id or UUID) and the varying numbers are kept as a series in ``extra``. Without a
header only the columns whose values identify them (name, bus id, UUID) can be mapped.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from rigcheck.evidence.model import Evidence, GpuEvidence
from rigcheck.evidence.parsers.values import flag, integer, number

_FIELD = re.compile(r"^[a-z_][a-z0-9_.]*(?:\s*\[[^\]]+\])?$")
_KNOWN = re.compile(
    r"^(index|name|uuid|serial|pci\.bus_id|driver_version|vbios_version|timestamp|persistence_mode|count|"
    r"(memory|power|pcie|ecc|temperature|utilization|clocks|enforced|mig|compute_cap|fan|pstate|"
    r"clocks_event_reasons|clocks_throttle_reasons|retired_pages|remapped_rows|display_mode)[a-z0-9_.]*)$"
)
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")

# field -> (GpuEvidence attribute, kind)
_MAP: dict[str, tuple[str, str]] = {
    "index": ("index", "int"),
    "name": ("name", "str"),
    "uuid": ("uuid", "str"),
    "serial": ("serial", "str"),
    "pci.bus_id": ("bus_id", "str"),
    "pci.device_id": ("pci_device_id", "hex"),
    "vbios_version": ("vbios", "str"),
    "compute_cap": ("compute_capability", "str"),
    "memory.total": ("memory_total_mib", "float"),
    "ecc.mode.current": ("ecc_current", "flag"),
    "ecc.mode.pending": ("ecc_pending", "flag"),
    "ecc.errors.uncorrected.volatile.total": ("ecc_uncorrectable_volatile", "int"),
    "remapped_rows.pending": ("remapped_rows_pending", "flag"),
    "remapped_rows.failure": ("remapped_rows_failure", "flag"),
    "power.limit": ("power_limit_w", "float"),
    "enforced.power.limit": ("power_limit_w", "float"),
    "power.default_limit": ("power_default_w", "float"),
    "power.max_limit": ("power_max_w", "float"),
    "power.draw": ("power_draw_w", "float"),
    "power.draw.average": ("power_draw_w", "float"),
    "power.draw.instant": ("power_draw_w", "float"),
    "pcie.link.gen.current": ("pcie_gen_current", "int"),
    "pcie.link.gen.gpucurrent": ("pcie_gen_current", "int"),
    "pcie.link.gen.max": ("pcie_gen_max", "int"),
    "pcie.link.gen.gpumax": ("pcie_gen_device_max", "int"),
    "pcie.link.gen.hostmax": ("pcie_gen_host_max", "int"),
    "pcie.link.width.current": ("pcie_width_current", "int"),
    "pcie.link.width.max": ("pcie_width_max", "int"),
    "mig.mode.current": ("mig_enabled", "flag"),
    "persistence_mode": ("persistence_mode", "flag"),
    "driver_model.current": ("driver_model", "str"),
}
# Fields that overrule another field mapped to the same attribute.
_PREFERRED = {"enforced.power.limit", "pcie.link.gen.gpucurrent", "power.draw"}


def _missing(value: str) -> bool:
    lowered = value.strip().lower()
    return lowered in (
        "",
        "n/a",
        "[n/a]",
        "[not supported]",
        "not supported",
        "[unknown error]",
        "[gpu is lost]",
    )


def _convert(value: str, kind: str) -> Any:
    if _missing(value):
        return None
    value = value.strip()
    if kind == "str":
        return value
    if kind == "hex":
        return value.upper().removeprefix("0X")
    if kind == "flag":
        return flag(value)
    return integer(value) if kind == "int" else number(value)


def _field_name(header: str) -> str:
    """``memory.total [MiB]`` -> ``memory.total`` (without a regex: headers can be long garbage)."""
    name = header.strip()
    if name.endswith("]") and "[" in name:
        name = name[: name.rfind("[")]
    return name.strip().lower()


def _looks_like_header(row: list[str]) -> bool:
    names = [_field_name(cell) for cell in row if cell.strip()]
    return (
        bool(names)
        and all(_FIELD.match(cell.strip().lower()) for cell in row if cell.strip())
        and any(_KNOWN.match(name) for name in names)
    )


def _guess_fields(rows: list[list[str]]) -> list[str | None]:
    """Without a header: map the columns whose values say what they are."""
    fields: list[str | None] = []
    for column in range(len(rows[0])):
        values = [row[column].strip() for row in rows if column < len(row) and not _missing(row[column])]
        field: str | None = None
        if values and all(_BUS.match(value) for value in values):
            field = "pci.bus_id"
        elif values and all(value.startswith(("GPU-", "MIG-")) for value in values):
            field = "uuid"
        elif values and all(re.search(r"NVIDIA|Tesla|Quadro|GeForce|RTX|TITAN", value) for value in values):
            field = "name"
        fields.append(field)
    return fields


class NvidiaSmiCsvParser:
    name = "nvidia-smi-csv"

    def detect(self, text: str) -> bool:
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines or "," not in lines[0]:
            return False
        if len(lines[0]) > 4096:
            return False
        try:
            first = next(csv.reader([lines[0]], skipinitialspace=True))
            if _looks_like_header(first):
                return True
            # noheader: every row has the same number of cells and some cell is clearly nvidia-smi's.
            rows = list(csv.reader(lines[:20], skipinitialspace=True))
        except csv.Error:
            return False
        if len({len(row) for row in rows}) != 1 or len(rows[0]) < 2:
            return False
        joined = " ".join(cell for row in rows for cell in row)
        return bool(re.search(r"\b\d+ MiB\b|\[N/A\]|\[Not Supported\]", joined)) and bool(
            re.search(r"[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d|\bGPU-[0-9a-f-]{8,}|NVIDIA", joined)
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        try:
            reader = csv.reader(io.StringIO(text), skipinitialspace=True)
            rows = [row for row in reader if any(cell.strip() for cell in row)]
        except csv.Error as exc:
            return Evidence(source=path, tool=self.name, problems=[f"the file is not valid CSV: {exc}"])
        if not rows:
            return Evidence(source=path, tool=self.name, problems=["the file has no CSV rows"])
        if _looks_like_header(rows[0]):
            fields: list[str | None] = [_field_name(cell) for cell in rows[0]]
            data = rows[1:]
        else:
            data = rows
            fields = _guess_fields(rows)
            problems.append("no header line (--format=csv,noheader): columns were guessed from their values")
        if not data:
            problems.append("no data rows after the header")
        width = len(fields)
        groups: dict[str, list[dict[str, str]]] = {}
        for row_number, row in enumerate(data, start=2 if data is not rows else 1):
            if len(row) != width:
                problems.append(f"row {row_number} has {len(row)} cells, the header has {width}")
            record = {field: row[i] for i, field in enumerate(fields) if field and i < len(row)}
            key = record.get("index") or record.get("pci.bus_id") or record.get("uuid")
            if key is None:
                key = str(len(groups))  # one row per GPU, in index order
            groups.setdefault(key.strip(), []).append(record)

        gpus: list[GpuEvidence] = []
        values: dict[str, dict[str, str]] = {}
        series: dict[str, dict[str, list[str]]] = {}
        drivers: set[str] = set()
        for position, (key, records) in enumerate(groups.items()):
            last = records[-1]
            attrs: dict[str, Any] = {}
            for field, raw in last.items():
                if field == "driver_version" and not _missing(raw):
                    drivers.add(raw.strip())
                mapped = _MAP.get(field)
                if mapped is None:
                    values.setdefault(key, {})[field] = raw.strip()
                    continue
                attribute, kind = mapped
                converted = _convert(raw, kind)
                if converted is not None and (attrs.get(attribute) is None or field in _PREFERRED):
                    attrs[attribute] = converted
            attrs.setdefault("index", position)
            gpus.append(GpuEvidence(**attrs))
            if len(records) > 1:
                for field in last:
                    samples = [record.get(field, "").strip() for record in records]
                    if len(set(samples)) > 1:
                        numbers = [_convert(sample, "float") for sample in samples]
                        numeric = all(value is not None for value in numbers) and field != "timestamp"
                        series.setdefault(key, {})[field] = numbers if numeric else samples
        extra: dict[str, Any] = {"fields": [field for field in fields if field]}
        if values:
            extra["values"] = values
        if series:
            extra["series"] = series
            extra["samples"] = max(len(records) for records in groups.values())
        if len(drivers) > 1:
            problems.append(f"the rows name different driver versions: {sorted(drivers)}")
        return Evidence(
            source=path,
            tool=self.name,
            driver_version=next(iter(drivers)) if len(drivers) == 1 else None,
            gpu_count=len(gpus),
            gpus=gpus,
            problems=problems,
            extra=extra,
        )


PARSER = NvidiaSmiCsvParser()
