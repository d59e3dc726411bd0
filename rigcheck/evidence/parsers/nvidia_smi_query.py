"""``nvidia-smi -q`` / ``nvidia-smi -a``: the indented ``Key : Value`` report.

Keys such as "Current", "Max" and "Total" repeat under different parents, so the text is read
into a tree by indentation first and the facts are looked up by path ("PCI > GPU Link Info >
PCIe Generation > Max"). Mis-indented lines (a real 535 capture has some) attach to the nearest
less-indented line above them instead of breaking the parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rigcheck.evidence.model import Evidence, GpuEvidence
from rigcheck.evidence.parsers.values import flag, integer, number

_SENTINELS = {"", "n/a", "[n/a]", "none", "unknown", "not supported", "[not supported]"}
_GPU_HEADER = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")


@dataclass
class _Node:
    key: str
    value: str | None
    indent: int
    children: list[_Node] = field(default_factory=list)

    def get(self, *path: str) -> _Node | None:
        node: _Node | None = self
        for part in path:
            if node is None:
                return None
            wanted = part.lower()
            node = next((child for child in node.children if child.key.lower() == wanted), None)
        return node

    def value_at(self, *path: str) -> str | None:
        node = self.get(*path)
        if node is None or node.value is None:
            return None
        value = node.value.strip()
        if value.lower() in _SENTINELS or value == "Requested functionality has been deprecated":
            return None
        return value

    def first(self, *paths: tuple[str, ...]) -> str | None:
        for path in paths:
            value = self.value_at(*path)
            if value is not None:
                return value
        return None


def _tree(text: str) -> _Node:
    root = _Node("", None, -1)
    stack = [root]
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or set(line.strip()) <= {"="} or "NVSMI LOG" in line:
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        body = line.strip()
        if " : " in body or body.endswith(" :"):
            key, _, value = body.partition(" :")
            node = _Node(key.strip(), value.strip(), indent)
        else:
            node = _Node(body, None, indent)
        while len(stack) > 1 and stack[-1].indent >= indent:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)
    return root


def _uncorrectable(gpu: _Node) -> int | None:
    volatile = gpu.get("ECC Errors", "Volatile")
    if volatile is None:
        return None
    total: int | None = None
    for child in volatile.children:
        if "uncorrectable" in child.key.lower() and not child.children:
            value = integer(child.value if (child.value or "").lower() not in _SENTINELS else None)
            if value is not None:
                total = (total or 0) + value
    if total is None:
        total = integer(volatile.value_at("Double Bit", "Total"))
    return total


def _gpu(index: int, node: _Node, bus_id: str, problems: list[str]) -> GpuEvidence:
    link = ("PCI", "GPU Link Info")
    power = node.get("GPU Power Readings") or node.get("Power Readings")
    label = f"GPU {index} ({bus_id})"
    memory = number(node.value_at("FB Memory Usage", "Total"))
    if memory is None:
        problems.append(f"{label} has no 'FB Memory Usage > Total' line")
    if power is None:
        problems.append(f"{label} has no 'Power Readings' section")
    if node.get(*link) is None:
        problems.append(f"{label} has no 'PCI > GPU Link Info' section")
    device_id = node.value_at("PCI", "Device Id")
    if device_id is not None:
        device_id = device_id.upper().removeprefix("0X")
    power = power or _Node("", None, 0)
    return GpuEvidence(
        index=index,
        name=node.value_at("Product Name"),
        uuid=node.value_at("GPU UUID"),
        serial=node.value_at("Serial Number"),
        bus_id=bus_id,
        pci_device_id=device_id,
        vbios=node.value_at("VBIOS Version"),
        architecture=node.value_at("Product Architecture"),
        memory_total_mib=memory,
        ecc_current=flag(node.value_at("ECC Mode", "Current")),
        ecc_pending=flag(node.value_at("ECC Mode", "Pending")),
        ecc_uncorrectable_volatile=_uncorrectable(node),
        remapped_rows_pending=flag(node.value_at("Remapped Rows", "Pending")),
        remapped_rows_failure=flag(node.value_at("Remapped Rows", "Remapping Failure Occurred")),
        power_limit_w=number(
            power.first(("Enforced Power Limit",), ("Current Power Limit",), ("Power Limit",))
        ),
        power_default_w=number(power.value_at("Default Power Limit")),
        power_max_w=number(power.value_at("Max Power Limit")),
        power_draw_w=number(power.first(("Power Draw",), ("Average Power Draw",), ("Instant Power Draw",))),
        pcie_gen_current=integer(node.value_at(*link, "PCIe Generation", "Current")),
        pcie_gen_max=integer(node.value_at(*link, "PCIe Generation", "Max")),
        pcie_gen_device_max=integer(node.value_at(*link, "PCIe Generation", "Device Max")),
        pcie_gen_host_max=integer(node.value_at(*link, "PCIe Generation", "Host Max")),
        pcie_width_current=integer(node.value_at(*link, "Link Width", "Current")),
        pcie_width_max=integer(node.value_at(*link, "Link Width", "Max")),
        pcie_replay_counter=integer(node.value_at("PCI", "Replays Since Reset")),
        mig_enabled=flag(node.value_at("MIG Mode", "Current")),
        persistence_mode=flag(node.value_at("Persistence Mode")),
        driver_model=node.value_at("Driver Model", "Current"),
    )


class NvidiaSmiQueryParser:
    name = "nvidia-smi-query"

    def detect(self, text: str) -> bool:
        if "NVSMI LOG" in text:
            return True
        return bool(
            re.search(r"(?m)^Driver Version\s+: ", text) and re.search(r"(?m)^Attached GPUs\s+: ", text)
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        root = _tree(text)
        gpu_nodes: list[tuple[str, _Node]] = []
        for child in root.children:
            match = _GPU_HEADER.match(child.key)
            if match and child.value is None:
                gpu_nodes.append((match.group(1), child))
        attached = integer(root.value_at("Attached GPUs"))
        if attached is None:
            problems.append("no 'Attached GPUs' line")
        elif attached != len(gpu_nodes):
            problems.append(
                f"'Attached GPUs' says {attached} but the file has {len(gpu_nodes)} GPU section"
                f"{'' if len(gpu_nodes) == 1 else 's'} (trimmed?)"
            )
        if not gpu_nodes:
            problems.append("no 'GPU 0000xxxx:BB:DD.F' section")
        driver = root.value_at("Driver Version")
        if driver is None:
            problems.append("no 'Driver Version' line")
        gpus = [_gpu(i, node, bus_id, problems) for i, (bus_id, node) in enumerate(gpu_nodes)]
        extra: dict[str, Any] = {}
        states = {str(i): node.value_at("Performance State") for i, (_bus, node) in enumerate(gpu_nodes)}
        if any(states.values()):
            extra["performance_state"] = states
        return Evidence(
            source=path,
            tool=self.name,
            collected_at=root.value_at("Timestamp"),
            driver_version=driver,
            cuda_version=root.value_at("CUDA Version"),
            gpu_count=attached if attached is not None else len(gpus),
            gpus=gpus,
            problems=problems,
            extra=extra,
        )


PARSER = NvidiaSmiQueryParser()
