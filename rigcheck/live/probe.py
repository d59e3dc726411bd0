"""``rigcheck probe``: read this machine through NVML, torch and Linux files, and write a rig spec.

The spec has one node group (this machine) and a ``probe:`` section
(:class:`~rigcheck.core.spec.models.rig.ProbeInfo`) with everything read, so that the node fields can be
traced to what NVML said. NVML semantics relied on (https://docs.nvidia.com/deploy/nvml-api/):

* ``nvmlDeviceGetMemoryInfo``: bytes; ``total`` is what nvidia-smi prints as the total (81559 MiB on an
  H100 80GB), i.e. already without the driver's reservation. It goes to ``probe.gpus[].memory_mib``;
  the node's GPU group leaves ``memory_gib`` to the catalog, whose ``memory_gib`` is the capacity that
  rules scale by a usable fraction (writing NVML's total there would subtract the reservation twice).
* ``nvmlDeviceGetPowerManagementLimit`` / ``DefaultLimit`` / ``LimitConstraints``: milliwatts. The
  GPU group gets ``power_limit_w`` only when the limit differs from the default (``nvidia-smi -pl``).
* ``nvmlDeviceGetEccMode``: ``[current, pending]`` as ``NVML_FEATURE_ENABLED``/``DISABLED``.
* ``nvmlDeviceGetMaxPcieLinkGeneration``: the highest generation "possible with this device and system",
  i.e. min(device, host), nvidia-smi's ``max_link_gen``; ``nvmlDeviceGetGpuMaxPcieLinkGeneration``: the
  device's own maximum. NVML has no host maximum; ``pcie_gen_host_max`` is filled only when the link
  maximum is below the device's (then the host is the limit and equals it). The current generation
  drops at idle (P8), so it is recorded but never used for the spec.
* ``nvmlDeviceGetMaxPcieLinkWidth``: the widest link possible with this device and system (lanes of
  the slot, as wired); a current width below it means lost lanes and gets a note.
* ``nvmlDeviceGetNvLinkState(device, link)``: 1 when the link is active. Links 0 to
  ``NVML_NVLINK_MAX_LINKS - 1`` (at least 18) are asked; ``NVML_ERROR_INVALID_ARGUMENT`` or
  ``NOT_SUPPORTED`` means the device has no such link. ``nvlinks_total`` counts the links that answered.
* ``nvmlDeviceGetTopologyCommonAncestor``: the closest common PCIe ancestor of two GPUs
  (``NVML_TOPOLOGY_INTERNAL`` ... ``SYSTEM``), recorded as internal, single, multiple, hostbridge, node,
  system. A pair whose ``nvmlDeviceGetP2PStatus(..., NVML_P2P_CAPS_INDEX_NVLINK)`` is
  ``NVML_P2P_STATUS_OK`` is recorded as ``NVLINK`` instead (what ``nvidia-smi topo -m`` shows as NV#).
* ``nvmlDeviceGetP2PStatus(..., NVML_P2P_CAPS_INDEX_READ)``: peer reads between the two GPUs
  (``nvidia-smi topo -p2p r``): OK, or why not (CNS chipset, GNS GPU, TNS topology, DR disabled by
  registry key, NS not supported, U unknown).

The GPU interconnect rule, kept simple:

1. one GPU: ``none``;
2. no GPU with an active NVLink: ``pcie``;
3. active NVLinks and more than four GPUs with every pair on NVLink: ``nvswitch`` (a direct NVLink
   mesh, as on HGX 4-GPU boards and DGX Station, joins at most four GPUs; eight GPUs all on NVLink are an
   NVSwitch system such as HGX/DGX H100);
4. otherwise ``nvlink-bridge`` when the catalog lists the card as a PCIe board (bridged pairs of
   RTX 3090, A6000, H100 PCIe), else ``nvlink``.

``p2p`` is true when every pair reads OK, false when any pair reports a reason, and left out when NVML
did not say. When no GPU's NVLink state could be read, ``gpu_interconnect`` is left out, so the checkers
fall back on the catalog.

The ``pcie`` of the node: ``gen`` is the highest ``max_link_gen`` among the GPUs (the slot and card
together), ``lanes_per_gpu`` the widest ``max_link_width``; a note names GPUs whose links differ.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from typing import IO, Any

from rigcheck.core.engine.errors import UsageError
from rigcheck.live.host import HostFacts, read_host
from rigcheck.live.nvml import NvmlSession, text
from rigcheck.live.torch_info import AUTO, torch_facts

MIB = 1024 * 1024
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: ``NVML_TOPOLOGY_*`` constants (name, value in pynvml 13.615.71, what the probe writes).
TOPOLOGY_LEVELS = (
    ("NVML_TOPOLOGY_INTERNAL", 0, "internal"),
    ("NVML_TOPOLOGY_SINGLE", 10, "single"),
    ("NVML_TOPOLOGY_MULTIPLE", 20, "multiple"),
    ("NVML_TOPOLOGY_HOSTBRIDGE", 30, "hostbridge"),
    ("NVML_TOPOLOGY_NODE", 40, "node"),
    ("NVML_TOPOLOGY_SYSTEM", 50, "system"),
)
#: ``NVML_P2P_STATUS_*`` constants with the abbreviations of ``nvidia-smi topo -p2p``.
P2P_STATUSES = (
    ("NVML_P2P_STATUS_OK", 0, "OK"),
    ("NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED", 1, "CNS"),
    ("NVML_P2P_STATUS_GPU_NOT_SUPPORTED", 2, "GNS"),
    ("NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED", 3, "TNS"),
    ("NVML_P2P_STATUS_DISABLED_BY_REGKEY", 4, "DR"),
    ("NVML_P2P_STATUS_NOT_SUPPORTED", 5, "NS"),
    ("NVML_P2P_STATUS_UNKNOWN", 6, "U"),
)
_LINK_ABSENT = ("NVMLError_InvalidArgument", "NVMLError_NotSupported")
#: More GPUs than a direct NVLink mesh joins: all-pairs NVLink then means NVSwitch.
MESH_MAX_GPUS = 4


@dataclass
class NvmlFacts:
    """What NVML said about the system and its GPUs."""

    driver: str | None = None
    cuda_driver: str | None = None
    nvml_version: str | None = None
    gpus: list[dict[str, Any]] = field(default_factory=list)
    topology: dict[str, dict[str, str]] = field(default_factory=dict)
    p2p_read: dict[tuple[int, int], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    not_supported: list[str] = field(default_factory=list)


# -- the probe -----------------------------------------------------------------------------------------


def probe(
    nvml_module: Any = None,
    torch_module: Any = AUTO,
    host_root: str | os.PathLike[str] = "/",
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """Read this machine and return its rig spec as a plain dict (``apiVersion: rigcheck/v1``).

    ``nvml_module`` is the ``pynvml`` module (imported when None), ``torch_module`` the ``torch`` module
    (imported if installed by default; ``None`` skips torch), ``host_root`` the folder that holds
    ``/proc`` and ``/sys``, ``env`` the environment (``os.environ``), ``now`` the time of the probe.
    Raises :class:`UsageError` when NVML cannot be loaded (no driver) or ``name`` is not a valid name.
    """
    check_rig_name(name)
    with NvmlSession(nvml_module) as nvml:
        facts = read_nvml(nvml)
        if nvml_module is None:
            facts.notes.insert(0, f"NVML read through nvidia-ml-py {_package_version('nvidia-ml-py')}")
    host = read_host(host_root, env)
    torch = torch_facts(torch_module)
    return build_spec(facts, host, torch, now=now, name=name)


def check_rig_name(name: str | None) -> None:
    """A :class:`UsageError` for a ``--name`` that is not a valid rig name."""
    if name is not None and not NAME_PATTERN.match(name):
        raise UsageError(
            f"--name {name!r}: a rig name starts with a letter or digit and has only letters, digits, '.', '_' "
            f"and '-'"
        )


def read_nvml(nvml: NvmlSession) -> NvmlFacts:
    """Everything the probe asks NVML, from an open session."""
    facts = NvmlFacts()
    facts.driver = text(nvml.call("nvmlSystemGetDriverVersion"))
    facts.nvml_version = text(nvml.call("nvmlSystemGetNVMLVersion"))
    cuda = nvml.call("nvmlSystemGetCudaDriverVersion_v2")
    if cuda is None:
        cuda, _ = nvml.try_call("nvmlSystemGetCudaDriverVersion")
    if isinstance(cuda, int) and cuda > 0:  # 12040 -> "12.4" (nvidia-smi's CUDA Version)
        facts.cuda_driver = f"{cuda // 1000}.{cuda % 1000 // 10}"
    count = nvml.call("nvmlDeviceGetCount") or 0
    handles: dict[int, Any] = {}
    for index in range(int(count)):
        handle = nvml.call("nvmlDeviceGetHandleByIndex", index, gpu=index)
        if handle is None:
            facts.gpus.append({"index": index, "name": "unknown"})
            facts.notes.append(f"GPU {index} could not be opened: left out of nodes[0].gpus")
            continue
        handles[index] = handle
        facts.gpus.append(read_gpu(nvml, index, handle, facts.notes))
    read_pairs(nvml, handles, facts)
    facts.not_supported = list(nvml.not_supported)
    return facts


def read_gpu(nvml: NvmlSession, index: int, handle: Any, notes: list[str]) -> dict[str, Any]:
    """One GPU's :class:`~rigcheck.core.spec.models.rig.ProbedGpu` fields (``None`` where NVML refused)."""

    def call(function: str, *args: Any) -> Any:
        return nvml.call(function, handle, *args, gpu=index)

    gpu: dict[str, Any] = {"index": index, "name": text(call("nvmlDeviceGetName")) or "unknown"}
    gpu["uuid"] = text(call("nvmlDeviceGetUUID"))
    gpu["serial"] = text(call("nvmlDeviceGetSerial"))
    gpu["vbios"] = text(call("nvmlDeviceGetVbiosVersion"))
    pci = call("nvmlDeviceGetPciInfo")
    gpu["bus_id"] = text(getattr(pci, "busId", None)) if pci is not None else None
    memory = call("nvmlDeviceGetMemoryInfo")
    if memory is not None:
        gpu["memory_mib"] = _number(getattr(memory, "total", 0) / MIB)
        gpu["memory_used_mib"] = _number(getattr(memory, "used", 0) / MIB)
    capability = call("nvmlDeviceGetCudaComputeCapability")
    if capability is not None:
        gpu["compute_capability"] = f"{capability[0]}.{capability[1]}"
    ecc = call("nvmlDeviceGetEccMode")
    if ecc is not None:
        enabled = nvml.constant("NVML_FEATURE_ENABLED", 1)
        gpu["ecc_current"] = int(ecc[0]) == enabled
        gpu["ecc_pending"] = int(ecc[1]) == enabled
    gpu["power_limit_w"] = _watts(call("nvmlDeviceGetPowerManagementLimit"))
    gpu["power_default_w"] = _watts(call("nvmlDeviceGetPowerManagementDefaultLimit"))
    constraints = call("nvmlDeviceGetPowerManagementLimitConstraints")
    if constraints is not None:
        gpu["power_min_w"], gpu["power_max_w"] = _watts(constraints[0]), _watts(constraints[1])
    gpu["pcie_gen_current"] = call("nvmlDeviceGetCurrPcieLinkGeneration")
    gpu["pcie_gen_max"] = call("nvmlDeviceGetMaxPcieLinkGeneration")
    gpu["pcie_gen_device_max"] = call("nvmlDeviceGetGpuMaxPcieLinkGeneration")
    if (
        gpu["pcie_gen_max"]
        and gpu["pcie_gen_device_max"]
        and gpu["pcie_gen_max"] < gpu["pcie_gen_device_max"]
    ):
        gpu["pcie_gen_host_max"] = gpu["pcie_gen_max"]
        notes.append(
            f"GPU {index}: a Gen{gpu['pcie_gen_device_max']} GPU on a link that reaches Gen{gpu['pcie_gen_max']} "
            f"(the slot, riser or CPU is the limit)"
        )
    gpu["pcie_width_current"] = call("nvmlDeviceGetCurrPcieLinkWidth")
    gpu["pcie_width_max"] = call("nvmlDeviceGetMaxPcieLinkWidth")
    if (
        gpu["pcie_width_current"]
        and gpu["pcie_width_max"]
        and gpu["pcie_width_current"] < gpu["pcie_width_max"]
    ):
        notes.append(
            f"GPU {index}: PCIe link x{gpu['pcie_width_current']} of x{gpu['pcie_width_max']} "
            f"(lanes lost: reseat the card, check the riser or the slot's bifurcation)"
        )
    gpu["pcie_replay_counter"] = call("nvmlDeviceGetPcieReplayCounter")
    gpu["nvlinks_active"], gpu["nvlinks_total"] = read_nvlinks(nvml, index, handle)
    processes = call("nvmlDeviceGetComputeRunningProcesses")
    if processes is not None:
        gpu["processes"] = len(processes)
    return {key: value for key, value in gpu.items() if value is not None}


def read_nvlinks(nvml: NvmlSession, index: int, handle: Any) -> tuple[int | None, int | None]:
    """``(active, total)`` NVLinks of one GPU; ``(0, 0)`` when NVML says the GPU has none."""
    enabled = nvml.constant("NVML_FEATURE_ENABLED", 1)
    links = max(nvml.constant("NVML_NVLINK_MAX_LINKS", 18), 18)
    active = total = 0
    first_error: str | None = None
    for link in range(links):
        state, error = nvml.try_call("nvmlDeviceGetNvLinkState", handle, link)
        if error is None:
            total += 1
            active += int(state) == enabled
            continue
        first_error = first_error or error
        if error not in _LINK_ABSENT:  # lost GPU, no permission: stop asking
            break
    if total:
        return active, total
    if first_error is not None:
        nvml.record("nvmlDeviceGetNvLinkState", first_error, index)
    return (0, 0) if first_error in _LINK_ABSENT else (None, None)


def read_pairs(nvml: NvmlSession, handles: Mapping[int, Any], facts: NvmlFacts) -> None:
    """Topology level, NVLink reachability and peer-read status of every GPU pair."""
    levels = {nvml.constant(name, value): label for name, value, label in TOPOLOGY_LEVELS}
    statuses = {nvml.constant(name, value): label for name, value, label in P2P_STATUSES}
    ok = nvml.constant("NVML_P2P_STATUS_OK", 0)
    read_index = nvml.constant("NVML_P2P_CAPS_INDEX_READ", 0)
    nvlink_index = nvml.constant("NVML_P2P_CAPS_INDEX_NVLINK", 2)
    linked = {gpu["index"] for gpu in facts.gpus if gpu.get("nvlinks_active")}
    indices = sorted(handles)
    pairs = [(a, b) for n, a in enumerate(indices) for b in indices[n + 1 :]]
    failures: dict[tuple[str, str], list[str]] = {}
    for a, b in pairs:
        label = None
        if a in linked and b in linked:
            status, error = nvml.try_call("nvmlDeviceGetP2PStatus", handles[a], handles[b], nvlink_index)
            if error is not None:
                failures.setdefault(("nvmlDeviceGetP2PStatus", error), []).append(f"{a}-{b}")
            elif status == ok:
                label = "NVLINK"
        level, error = nvml.try_call("nvmlDeviceGetTopologyCommonAncestor", handles[a], handles[b])
        if error is not None:
            failures.setdefault(("nvmlDeviceGetTopologyCommonAncestor", error), []).append(f"{a}-{b}")
        elif label is None:
            label = levels.get(level, str(level))
        if label is not None:
            facts.topology.setdefault(f"GPU{a}", {})[f"GPU{b}"] = label
            facts.topology.setdefault(f"GPU{b}", {})[f"GPU{a}"] = label
        status, error = nvml.try_call("nvmlDeviceGetP2PStatus", handles[a], handles[b], read_index)
        if error is not None:
            failures.setdefault(("nvmlDeviceGetP2PStatus", error), []).append(f"{a}-{b}")
        else:
            facts.p2p_read[(a, b)] = statuses.get(status, f"status {status}")
    for (function, error), failed in failures.items():
        where = (
            f"all {len(pairs)} GPU pairs"
            if len(failed) == len(pairs) > 1
            else "GPU pair " + ", ".join(failed)
        )
        nvml.record(function, error, where=where)
    blocked = [f"GPU{a}-GPU{b} {status}" for (a, b), status in facts.p2p_read.items() if status != "OK"]
    if blocked:
        shown = ", ".join(blocked[:6]) + (f" and {len(blocked) - 6} more" if len(blocked) > 6 else "")
        facts.notes.append(
            f"peer-to-peer reads (nvidia-smi topo -p2p r) unavailable for {len(blocked)} of {len(pairs)} GPU "
            f"pair(s): {shown}"
        )


# -- the spec ------------------------------------------------------------------------------------------


def build_spec(
    facts: NvmlFacts,
    host: HostFacts,
    torch: Mapping[str, Any] | None,
    *,
    now: datetime | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The rig spec dict from what NVML, the host files and torch said."""
    from rigcheck._version import __version__

    probed_at = _timestamp(now)
    hostname = host.hostname
    notes = list(facts.notes)
    node: dict[str, Any] = {}
    short = hostname.split(".")[0] if hostname else None
    if short:
        node["name"] = short
    readable = [gpu for gpu in facts.gpus if gpu.get("name") not in (None, "unknown")]
    if readable:
        node["gpus"] = gpu_groups(readable)
        interconnect = gpu_interconnect(readable, facts, notes)
        if interconnect is not None:
            node["gpu_interconnect"] = interconnect
        pcie = node_pcie(readable, notes)
        if pcie is not None:
            node["pcie"] = pcie
    if host.cpu:
        node["cpu"] = dict(host.cpu)
    if host.memory_gib:
        node["memory_gib"] = host.memory_gib
    if host.storage:
        node["storage"] = host.storage
    if host.network:
        node["network"] = host.network
    software = _software(facts, host, torch, notes)
    if software:
        node["software"] = software
    if hostname:
        node["hostnames"] = [hostname]
    notes.extend(host.notes)
    info: dict[str, Any] = {
        "probed_at": probed_at,
        "hostname": hostname,
        "rigcheck_version": __version__,
        "nvml_version": facts.nvml_version,
        "driver_version": facts.driver,
        "cuda_driver_version": facts.cuda_driver,
    }
    if torch:
        info["torch_version"] = torch.get("version")
        info["torch_cuda"] = torch.get("cuda")
        info["torch_arch_list"] = torch.get("arch_list")
    info["gpus"] = facts.gpus
    if facts.topology:
        info["topology"] = facts.topology
    info["not_supported"] = list(facts.not_supported)
    info["notes"] = notes
    rig_name = name or rig_name_for(hostname)
    return {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": rig_name,
        "description": f"{hostname or 'this machine'} as rigcheck probe read it at {probed_at}",
        "probed_at": probed_at,
        "nodes": [node],
        "probe": {key: value for key, value in info.items() if value is not None},
    }


def gpu_groups(gpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GPU groups by model name (NVML's name, which the catalog knows as an alias), split further when
    GPUs of one model differ in power limit or ECC mode; in order of first appearance."""
    groups: dict[tuple[str, float | None, bool | None], dict[str, Any]] = {}
    for gpu in gpus:
        limit, default = gpu.get("power_limit_w"), gpu.get("power_default_w")
        override = limit if limit is not None and default is not None and abs(limit - default) >= 1 else None
        key = (gpu["name"], override, gpu.get("ecc_current"))
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"model": gpu["name"], "count": 0}
            if override is not None:
                group["power_limit_w"] = override
            if gpu.get("ecc_current") is not None:
                group["ecc"] = gpu["ecc_current"]
        group["count"] += 1
    return list(groups.values())


def gpu_interconnect(gpus: list[dict[str, Any]], facts: NvmlFacts, notes: list[str]) -> dict[str, Any] | None:
    """``gpu_interconnect:`` by the rule in the module docstring."""
    if len(gpus) == 1:
        return {"kind": "none"}
    active = [gpu.get("nvlinks_active") for gpu in gpus]
    indices = [gpu["index"] for gpu in gpus]
    pairs = [(a, b) for n, a in enumerate(indices) for b in indices[n + 1 :]]
    statuses = [facts.p2p_read.get(pair) for pair in pairs]
    p2p = None
    if any(status not in (None, "OK") for status in statuses):
        p2p = False
    elif statuses and all(status == "OK" for status in statuses):
        p2p = True
    if all(count is None for count in active):
        notes.append("NVLink state unknown on every GPU: gpu_interconnect left out (the catalog decides)")
        return None
    if not any(active):
        kind = "pcie"
    elif len(gpus) > MESH_MAX_GPUS and all(
        facts.topology.get(f"GPU{a}", {}).get(f"GPU{b}") == "NVLINK" for a, b in pairs
    ):
        kind = "nvswitch"
    elif _form_factor(gpus[0]["name"]) == "PCIe":
        kind = "nvlink-bridge"
    else:
        kind = "nvlink"
    out: dict[str, Any] = {"kind": kind}
    if p2p is not None:
        out["p2p"] = p2p
    return out


def node_pcie(gpus: list[dict[str, Any]], notes: list[str]) -> dict[str, Any] | None:
    """``pcie:`` from the GPUs' link maxima (not the current generation, which drops at idle)."""
    gens = {gpu["index"]: gpu["pcie_gen_max"] for gpu in gpus if gpu.get("pcie_gen_max")}
    widths = {gpu["index"]: gpu["pcie_width_max"] for gpu in gpus if gpu.get("pcie_width_max")}
    if not gens:
        notes.append("PCIe link generation unknown (nvmlDeviceGetMaxPcieLinkGeneration): pcie left out")
        return None
    out: dict[str, Any] = {"gen": max(gens.values())}
    if widths and max(widths.values()) in (1, 2, 4, 8, 16):
        out["lanes_per_gpu"] = max(widths.values())
    for label, values, prefix in (("generation", gens, "Gen"), ("width", widths, "x")):
        if len(set(values.values())) > 1:
            slower = ", ".join(
                f"GPU {index} {prefix}{value}"
                for index, value in values.items()
                if value < max(values.values())
            )
            notes.append(f"PCIe link {label} differs between GPUs: {slower}; pcie: has the highest")
    return out


def _software(
    facts: NvmlFacts, host: HostFacts, torch: Mapping[str, Any] | None, notes: list[str]
) -> dict[str, Any]:
    software: dict[str, Any] = {"os": host.os, "distro": host.distro, "kernel": host.kernel}
    software["driver"] = facts.driver
    if torch:
        version = torch.get("version")
        software["torch"] = version
        if version and "+cu" not in version and torch.get("cuda"):
            software["cuda_runtime"] = torch["cuda"]  # a build without the cuXYZ tag (conda, NGC)
        software["nccl"] = torch.get("nccl")
        if torch.get("error"):
            notes.append(f"torch: {torch['error']}")
        elif torch.get("cuda_available") is False:
            notes.append(
                f"torch {version}: torch.cuda.is_available() is False "
                f"({'a CPU build' if not torch.get('cuda') else 'the driver or the visible GPUs'})"
            )
    if host.env:
        software["env"] = dict(host.env)
    return {key: value for key, value in software.items() if value not in (None, "", {})}


@cache
def _catalog() -> Any:
    from rigcheck.core.catalog.catalog import Catalog, load_catalog_file
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    return catalog


def _form_factor(gpu_name: str) -> str | None:
    """The catalog's form factor of an NVML name (``PCIe``, ``SXM``...), or None when unknown."""
    try:
        return _catalog().lookup(gpu_name).form_factor
    except Exception:
        return None


def rig_name_for(hostname: str | None) -> str:
    """A valid rig name from a host name: other characters become '-'."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", hostname or "").strip("._-")
    return cleaned if cleaned and NAME_PATTERN.match(cleaned) else "probed-rig"


def _timestamp(now: datetime | None) -> str:
    moment = now or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _number(value: float) -> float | int:
    rounded = round(value, 1)
    return int(rounded) if float(rounded).is_integer() else rounded


def _watts(milliwatts: Any) -> float | int | None:
    if milliwatts is None:
        return None
    return _number(float(milliwatts) / 1000)


def _package_version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "(version unknown)"


# -- writing -------------------------------------------------------------------------------------------


def write_probe(
    spec: Mapping[str, Any],
    output: str | os.PathLike[str] | IO[str] | None = None,
    *,
    header: str | None = None,
) -> str:
    """Write ``spec`` as YAML with a header comment (``header``, else the one naming the probed machine) to
    ``output`` (a path, a text stream, or standard output for None or ``"-"``); returns the text."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        from rigcheck.core.spec.loader import STR, resolve_plain_scalar

        # quote what rigcheck's YAML 1.2 reader would not read back as a string ('1e9', '0o17')
        style = "'" if value and resolve_plain_scalar(value) != STR else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, represent_str)
    probe_info = spec.get("probe") or {}
    where = probe_info.get("hostname") or "this machine"
    header = header or (
        f"# Written by rigcheck probe {probe_info.get('rigcheck_version', '')} on {where} at "
        f"{spec.get('probed_at', '')}.\n"
        "# nodes: is what rigcheck checks; probe: is what NVML and the host reported (also usable as evidence).\n"
        "# Add what a probe cannot see (psu, chassis, site, cooling), then: rigcheck check THIS-FILE\n"
    )
    body = yaml.dump(
        dict(spec), Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    content = header + body
    if output is None or output == "-":
        sys.stdout.write(content)
        sys.stdout.flush()
    elif hasattr(output, "write"):
        output.write(content)  # type: ignore[union-attr]
    else:
        from rigcheck.core.spec.boundary import replacing

        with replacing(output) as handle:  # type: ignore[arg-type]
            handle.write(content)
    return content


def probe_to_evidence(probe_info: Any, *, source: str = "rigcheck probe") -> Any:
    """:class:`rigcheck.evidence.model.Evidence` (tool ``rigcheck-probe``) from a ``ProbeInfo`` or its
    dict: one ``GpuEvidence`` per probed GPU (PCIe, ECC, power, NVLink) and the topology matrix."""
    from rigcheck.evidence.parsers.rigcheck_probe import probe_info_to_evidence

    return probe_info_to_evidence(probe_info, source=source)
