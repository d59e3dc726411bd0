"""``nvidia-smi nvlink -s``: per GPU, ``Link N: 25 GB/s`` or ``Link N: <inactive>``.

A GPU whose links are all down (or that has none, such as a PCIe card without a bridge) prints
"NVML: Unable to retrieve NVLink information as all links are inActive" instead of link lines;
that GPU gets an empty ``nvlinks`` list, which means "no active NVLink", not "unknown".
"""

from __future__ import annotations

import re

from rigcheck.evidence.model import Evidence, GpuEvidence, NvLinkState

_GPU = re.compile(r"^GPU\s+(\d+):\s*(.*?)\s*(?:\(UUID:\s*([^)]+)\))?\s*$")
_LINK = re.compile(r"^\s*Link\s+(\d+):\s*(.*?)\s*$")
_SPEED = re.compile(r"(?<![\d.])([\d.]+)\s*GB/s")  # tried once per run of digits: linear in the line
_ALL_INACTIVE = re.compile(r"all links are in-?active", re.IGNORECASE)


class NvlinkStatusParser:
    name = "nvidia-smi-nvlink"

    def detect(self, text: str) -> bool:
        return bool(re.search(r"(?m)^GPU \d+: .*\(UUID: ", text)) and bool(
            re.search(r"(?m)^\s+Link \d+: ", text) or _ALL_INACTIVE.search(text)
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        gpus: list[GpuEvidence] = []
        inactive: list[int] = []
        for line in text.splitlines():
            gpu_match = _GPU.match(line)
            if gpu_match:
                index, name, uuid = gpu_match.groups()
                gpus.append(GpuEvidence(index=int(index), name=name or None, uuid=uuid, nvlinks=[]))
                continue
            if not gpus:
                continue
            link_match = _LINK.match(line)
            if link_match:
                link, status = link_match.groups()
                speed = _SPEED.search(status)
                active = speed is not None and "inactive" not in status.lower()
                links = gpus[-1].nvlinks if gpus[-1].nvlinks is not None else []
                links.append(
                    NvLinkState(
                        link=int(link), active=active, speed_gbps=float(speed.group(1)) if speed else None
                    )
                )
                gpus[-1].nvlinks = links
            elif _ALL_INACTIVE.search(line):
                inactive.append(gpus[-1].index or 0)
        if not gpus:
            problems.append("no 'GPU N: name (UUID: ...)' line")
        for gpu in gpus:
            if not gpu.nvlinks and gpu.index not in inactive:
                problems.append(
                    f"GPU {gpu.index} has no link lines and no 'all links are inActive' message (cut off?)"
                )
        extra = {"all_links_inactive": inactive} if inactive else {}
        return Evidence(
            source=path, tool=self.name, gpu_count=len(gpus), gpus=gpus, problems=problems, extra=extra
        )


PARSER = NvlinkStatusParser()
