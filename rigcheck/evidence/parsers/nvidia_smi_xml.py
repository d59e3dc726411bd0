"""``nvidia-smi -q -x``: the XML report, from driver 418 (no DOCTYPE) to 590 (DTD v13).

Facts come from each ``<gpu>`` element's own children, never from the first match in document
order: MIG instances repeat ``fb_memory_usage`` inside ``mig_devices``. Both power layouts are read
(``power_readings`` up to 525, ``gpu_power_readings`` from 530, ``average/instant_power_draw`` from
570). The file is read with a pull parser so that a cut-off file still yields the GPUs it holds;
ElementTree never fetches the DTD named in the DOCTYPE.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from rigcheck.evidence.model import Evidence, GpuEvidence
from rigcheck.evidence.parsers.values import flag, integer, number

_SENTINELS = {"", "n/a", "[n/a]", "none", "not active", "unknown", "not supported", "[not supported]"}


def _text(elem: ET.Element | None, path: str | None = None) -> str | None:
    """The stripped text at ``path`` below ``elem``; None for missing, N/A-like or bracketed values."""
    if elem is None:
        return None
    node = elem.find(path) if path else elem
    if node is None or node.text is None:
        return None
    value = node.text.strip()
    if value.lower() in _SENTINELS or (value.startswith("[") and value.endswith("]")):
        return None
    if value == "Requested functionality has been deprecated":
        return None
    return value


def _first(elem: ET.Element | None, *paths: str) -> str | None:
    for path in paths:
        value = _text(elem, path)
        if value is not None:
            return value
    return None


def _uncorrectable(gpu: ET.Element) -> int | None:
    """Volatile uncorrectable ECC errors: the sum of the *uncorrectable* counters (535+), or the
    old ``double_bit/total``. None when every counter is N/A."""
    volatile = gpu.find("ecc_errors/volatile")
    if volatile is None:
        return None
    total: int | None = None
    for child in volatile:
        if "uncorrectable" in child.tag and len(child) == 0:
            value = integer(_text(child))
            if value is not None:
                total = (total or 0) + value
    if total is None:
        total = integer(_text(volatile, "double_bit/total"))
    return total


def _mig_devices(gpu: ET.Element) -> list[dict[str, Any]]:
    devices = []
    for mig in gpu.findall("mig_devices/mig_device"):
        devices.append(
            {
                "index": integer(_text(mig, "index")),
                "gpu_instance_id": integer(_text(mig, "gpu_instance_id")),
                "compute_instance_id": integer(_text(mig, "compute_instance_id")),
                "multiprocessor_count": integer(_text(mig, "device_attributes/shared/multiprocessor_count")),
                "memory_total_mib": number(_text(mig, "fb_memory_usage/total")),
            }
        )
    return devices


def _processes(gpu: ET.Element) -> list[dict[str, Any]] | None:
    infos = gpu.findall("processes/process_info")
    if not infos:
        return None
    return [
        {
            "pid": integer(_text(info, "pid")),
            "type": _text(info, "type"),
            "name": _text(info, "process_name"),
            "used_memory_mib": number(_text(info, "used_memory")),
        }
        for info in infos
    ]


def _gpu(index: int, gpu: ET.Element, problems: list[str]) -> GpuEvidence:
    link = gpu.find("pci/pci_gpu_link_info")
    power = gpu.find("gpu_power_readings")
    if power is None:
        power = gpu.find("power_readings")
    label = f"GPU {index} ({gpu.get('id') or 'no bus id'})"
    memory = number(_text(gpu, "fb_memory_usage/total"))
    if memory is None:
        problems.append(f"{label} has no fb_memory_usage/total")
    if power is None:
        problems.append(f"{label} has neither power_readings nor gpu_power_readings")
    if link is None:
        problems.append(f"{label} has no pci/pci_gpu_link_info (PCIe generation and width)")
    device_id = _text(gpu, "pci/pci_device_id")
    if device_id is not None:
        device_id = device_id.upper().removeprefix("0X")
    return GpuEvidence(
        index=index,
        name=_text(gpu, "product_name"),
        uuid=_text(gpu, "uuid"),
        serial=_text(gpu, "serial"),
        bus_id=gpu.get("id") or _text(gpu, "pci/pci_bus_id"),
        pci_device_id=device_id,
        vbios=_text(gpu, "vbios_version"),
        architecture=_text(gpu, "product_architecture"),
        memory_total_mib=memory,
        ecc_current=flag(_text(gpu, "ecc_mode/current_ecc")),
        ecc_pending=flag(_text(gpu, "ecc_mode/pending_ecc")),
        ecc_uncorrectable_volatile=_uncorrectable(gpu),
        remapped_rows_pending=flag(_text(gpu, "remapped_rows/remapped_row_pending")),
        remapped_rows_failure=flag(_text(gpu, "remapped_rows/remapped_row_failure")),
        power_limit_w=number(_first(power, "enforced_power_limit", "current_power_limit", "power_limit")),
        power_default_w=number(_text(power, "default_power_limit")),
        power_max_w=number(_text(power, "max_power_limit")),
        power_draw_w=number(_first(power, "power_draw", "average_power_draw", "instant_power_draw")),
        pcie_gen_current=integer(_text(link, "pcie_gen/current_link_gen")),
        pcie_gen_max=integer(_text(link, "pcie_gen/max_link_gen")),
        pcie_gen_device_max=integer(_text(link, "pcie_gen/max_device_link_gen")),
        pcie_gen_host_max=integer(_text(link, "pcie_gen/max_host_link_gen")),
        pcie_width_current=integer(_text(link, "link_widths/current_link_width")),
        pcie_width_max=integer(_text(link, "link_widths/max_link_width")),
        pcie_replay_counter=integer(_text(gpu, "pci/replay_counter")),
        mig_enabled=flag(_text(gpu, "mig_mode/current_mig")),
        persistence_mode=flag(_text(gpu, "persistence_mode")),
        driver_model=_text(gpu, "driver_model/current_dm"),
        processes=_processes(gpu),
    )


def _read_tree(text: str, problems: list[str]) -> ET.Element | None:
    """The root element, built as far as the text allows (a cut-off file keeps what came before)."""
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start",))
    root: ET.Element | None = None
    # A parse error can come out of read_events() itself, after the events before it: root is set as
    # they come. "start" events are (event, element) pairs.
    try:
        parser.feed(text)
        for event in parser.read_events():
            if root is None and len(event) == 2 and isinstance(event[1], ET.Element):
                root = event[1]
        parser.close()
    except ET.ParseError as exc:
        for event in parser.read_events():
            if root is None and len(event) == 2 and isinstance(event[1], ET.Element):
                root = event[1]
        problems.append(
            f"the XML is cut off or malformed ({exc}); only the elements before that point were read"
        )
    return root


class NvidiaSmiXmlParser:
    name = "nvidia-smi-xml"

    def detect(self, text: str) -> bool:
        return "<nvidia_smi_log" in text

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        # ElementTree refuses a str whose declaration names an encoding only for bytes input; drop
        # anything before the root's declaration (a shell prompt pasted above it).
        start = text.find("<?xml")
        if start < 0:
            start = text.find("<nvidia_smi_log")
        root = _read_tree(text[max(start, 0) :], problems)
        extra: dict[str, Any] = {}
        dtd = re.search(r"nvsmi_device_(v\d+)\.dtd", text[:2000])
        extra["dtd_version"] = dtd.group(1) if dtd else None
        if root is None or root.tag != "nvidia_smi_log":
            problems.append("no <nvidia_smi_log> root element")
            return Evidence(source=path, tool=self.name, problems=problems, extra=extra)
        attached = integer(_text(root, "attached_gpus"))
        gpu_elements = root.findall("gpu")
        if attached is None:
            problems.append("no attached_gpus element")
        elif attached != len(gpu_elements):
            noun = "element" if len(gpu_elements) == 1 else "elements"
            problems.append(
                f"attached_gpus says {attached} but the file has {len(gpu_elements)} <gpu> {noun} (trimmed?)"
            )
        if not gpu_elements:
            problems.append("no <gpu> element")
        driver = _text(root, "driver_version")
        if driver is None:
            problems.append("no driver_version element")
        gpus = [_gpu(index, gpu, problems) for index, gpu in enumerate(gpu_elements)]
        mig = {
            gpu.bus_id or str(gpu.index): _mig_devices(elem)
            for gpu, elem in zip(gpus, gpu_elements, strict=True)
        }
        mig = {key: value for key, value in mig.items() if value}
        if mig:
            extra["mig_devices"] = mig
        states = {str(i): _text(elem, "performance_state") for i, elem in enumerate(gpu_elements)}
        if any(states.values()):
            extra["performance_state"] = states
        return Evidence(
            source=path,
            tool=self.name,
            collected_at=_text(root, "timestamp"),
            driver_version=driver,
            cuda_version=_text(root, "cuda_version"),
            gpu_count=attached if attached is not None else len(gpus),
            gpus=gpus,
            problems=problems,
            extra=extra,
        )


PARSER = NvidiaSmiXmlParser()
