"""Evidence from a rig spec written by ``rigcheck probe``: its ``probe:`` section as measured facts.

``rigcheck probe`` writes a Rig spec whose ``probe:`` section (:class:`~rigcheck.core.spec.models.rig.ProbeInfo`)
holds what NVML reported: one entry per GPU with its PCIe link, ECC mode, power limits and NVLink
counts, and the GPU-pair topology. Given as evidence, that section is compared with a hand-written
spec like any other tool output. The conversion lives here, on the evidence side, so that reading
evidence never imports the live side (``rigcheck.live.probe.probe_to_evidence`` is the same function).

Topology levels become ``nvidia-smi topo -m`` legend entries: internal and single -> PIX,
multiple -> PXB, hostbridge -> PHB, node -> NODE, system -> SYS, and an NVLink pair -> ``NV<k>`` with
k the smaller active-link count of the two GPUs (what ``topo -m`` prints on NVSwitch systems and for
2-GPU bridges; on a direct mesh, where a GPU's links are split among its peers, it is an upper bound).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rigcheck.evidence.model import Evidence, GpuEvidence, NvLinkState, TopologyEvidence

NAME = "rigcheck-probe"

_KIND_RIG = re.compile(r"^kind:[ \t]*['\"]?Rig['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)
_PROBE_KEY = re.compile(r"^probe:[ \t]*(?:#.*)?$", re.MULTILINE)
_LEVELS = {
    "internal": "PIX",
    "single": "PIX",
    "multiple": "PXB",
    "hostbridge": "PHB",
    "node": "NODE",
    "system": "SYS",
}


def probe_info_to_evidence(probe: Any, *, source: str = "rigcheck probe", os: str | None = None) -> Evidence:
    """An :class:`Evidence` (tool ``rigcheck-probe``) from a ``ProbeInfo`` model or its dict.

    Raises pydantic's ``ValidationError`` for a dict that is not a valid ``probe:`` section."""
    from rigcheck.core.spec.models.rig import ProbeInfo

    info = probe if isinstance(probe, ProbeInfo) else ProbeInfo.model_validate(probe)
    problems: list[str] = []
    gpus: list[GpuEvidence] = []
    links: dict[str, dict[str, int | None]] = {}
    processes: dict[str, int] = {}
    for gpu in info.gpus:
        nvlinks: list[NvLinkState] | None = None
        if gpu.nvlinks_total is not None:
            links[f"GPU{gpu.index}"] = {"active": gpu.nvlinks_active, "total": gpu.nvlinks_total}
            if gpu.nvlinks_total == 0 or gpu.nvlinks_active == gpu.nvlinks_total:
                nvlinks = [NvLinkState(link=k, active=True) for k in range(gpu.nvlinks_total)]
            else:
                problems.append(
                    f"GPU {gpu.index}: {gpu.nvlinks_active} of {gpu.nvlinks_total} NVLink links active; the "
                    f"probe does not record which (nvidia-smi nvlink -s shows them)"
                )
        if gpu.processes is not None:
            processes[f"GPU{gpu.index}"] = gpu.processes
        gpus.append(
            GpuEvidence(
                index=gpu.index,
                name=gpu.name,
                uuid=gpu.uuid,
                serial=gpu.serial,
                bus_id=gpu.bus_id,
                vbios=gpu.vbios,
                compute_capability=gpu.compute_capability,
                memory_total_mib=gpu.memory_mib,
                ecc_current=gpu.ecc_current,
                ecc_pending=gpu.ecc_pending,
                power_limit_w=gpu.power_limit_w,
                power_default_w=gpu.power_default_w,
                power_max_w=gpu.power_max_w,
                pcie_gen_current=gpu.pcie_gen_current,
                pcie_gen_max=gpu.pcie_gen_max,
                pcie_gen_device_max=gpu.pcie_gen_device_max,
                pcie_gen_host_max=gpu.pcie_gen_host_max,
                pcie_width_current=gpu.pcie_width_current,
                pcie_width_max=gpu.pcie_width_max,
                pcie_replay_counter=gpu.pcie_replay_counter,
                nvlinks=nvlinks,
            )
        )
    extra: dict[str, Any] = {}
    if links:
        extra["nvlinks"] = links
    if processes:
        extra["processes"] = processes
    if info.not_supported:
        extra["not_supported"] = list(info.not_supported)
    if info.notes:
        extra["notes"] = list(info.notes)
    torch = None
    if info.torch_version or info.torch_cuda or info.torch_arch_list:
        from rigcheck.evidence.model import TorchEvidence

        torch = TorchEvidence(
            version=info.torch_version, cuda=info.torch_cuda, arch_list=info.torch_arch_list
        )
    return Evidence(
        source=source,
        tool=NAME,
        tool_version=info.rigcheck_version,
        host=info.hostname,
        collected_at=info.probed_at,
        os=os,
        driver_version=info.driver_version,
        cuda_version=info.cuda_driver_version,
        gpu_count=len(info.gpus),
        gpus=gpus,
        topology=_topology(info.topology, links),
        torch=torch,
        problems=problems,
        extra=extra,
    )


def _topology(
    topology: Mapping[str, Mapping[str, str]] | None, links: Mapping[str, Mapping[str, int | None]]
) -> TopologyEvidence | None:
    if not topology:
        return None
    devices = sorted({*topology, *(b for row in topology.values() for b in row)}, key=_gpu_number)
    matrix: dict[str, dict[str, str]] = {}
    for a in devices:
        row = matrix.setdefault(a, {})
        for b in devices:
            if a == b:
                row[b] = "X"
                continue
            level = (topology.get(a, {}).get(b) or topology.get(b, {}).get(a) or "").strip()
            if not level:
                continue
            if level.upper() == "NVLINK":
                counts = [links.get(gpu, {}).get("active") for gpu in (a, b)]
                known = [count for count in counts if count]
                row[b] = f"NV{min(known)}" if len(known) == 2 else "NV"
            else:
                row[b] = _LEVELS.get(level.lower(), level.upper())
    return TopologyEvidence(kind="connection", devices=devices, matrix=matrix)


def _gpu_number(name: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", name)
    return (int(digits) if digits else 1 << 30, name)


class RigcheckProbeParser:
    """Evidence parser for specs written by ``rigcheck probe`` (``kind: Rig`` with a ``probe:`` key)."""

    name = NAME

    def detect(self, text: str) -> bool:
        """A YAML document with ``kind: Rig`` and a top-level ``probe:`` mapping."""
        return bool(_KIND_RIG.search(text) and _PROBE_KEY.search(text))

    def parse(self, text: str, path: str) -> Evidence:
        """The probe section as evidence; never raises: what is wrong goes to ``problems``."""
        try:
            return self._parse(text, path)
        except Exception as exc:  # malformed input of any kind is a problem, not a crash
            return Evidence(source=path, tool=NAME, problems=[f"{type(exc).__name__}: {exc}"])

    @staticmethod
    def _parse(text: str, path: str) -> Evidence:
        from pydantic import ValidationError

        from rigcheck.core.engine.errors import SpecError
        from rigcheck.core.spec.documents import parse_spec
        from rigcheck.core.spec.loader import load_yaml_text

        try:
            document = parse_spec(text, path, kind="Rig")
        except SpecError as spec_error:
            # the rig around it may have been edited into something invalid; the probe may still be fine
            try:
                data = load_yaml_text(text, path).data
            except SpecError as exc:
                return Evidence(source=path, tool=NAME, problems=[p.format() for p in exc.problems])
            probe = data.get("probe") if isinstance(data, dict) else None
            if not isinstance(probe, dict):
                return Evidence(source=path, tool=NAME, problems=[p.format() for p in spec_error.problems])
            try:
                return probe_info_to_evidence(probe, source=path, os=_os(data))
            except ValidationError:
                return Evidence(source=path, tool=NAME, problems=[p.format() for p in spec_error.problems])
        rig = document.model
        if rig.probe is None:
            return Evidence(
                source=path,
                tool=NAME,
                problems=["no probe: section: this rig spec was not written by rigcheck probe"],
            )
        software = rig.nodes[0].software if rig.nodes else None
        return probe_info_to_evidence(rig.probe, source=path, os=software.os if software else None)


def _os(data: Mapping[str, Any]) -> str | None:
    nodes = data.get("nodes")
    if isinstance(nodes, list) and nodes and isinstance(nodes[0], dict):
        software = nodes[0].get("software")
        if isinstance(software, dict) and isinstance(software.get("os"), str):
            return software["os"]
    return None


PARSER = RigcheckProbeParser()
