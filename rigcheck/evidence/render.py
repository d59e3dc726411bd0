"""``rigcheck evidence``'s output: each file's :class:`~rigcheck.evidence.model.Evidence` as JSON or YAML
data (:class:`~rigcheck.evidence.model.EvidenceReport`, ``schemas/evidence.schema.json``), or as text to
read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rigcheck.evidence.model import Evidence, EvidenceReport, EvidenceTool, GpuEvidence

#: The distributions a text listing names (all are in the JSON).
NAMED_PACKAGES = (
    "torch",
    "torchvision",
    "transformers",
    "vllm",
    "peft",
    "bitsandbytes",
    "flash-attn",
    "deepspeed",
)
KEY_CUDA_WHEELS = ("nvidia-cuda-runtime-", "nvidia-cudnn-", "nvidia-nccl-")


def report_data(evidence: Sequence[Evidence]) -> dict[str, Any]:
    """The report as JSON data: fields left at their defaults are left out of each evidence entry."""
    from rigcheck._version import __version__

    report = EvidenceReport(tool=EvidenceTool(name="rigcheck", version=__version__), evidence=list(evidence))
    data = report.model_dump(mode="json", exclude={"evidence"})
    data["evidence"] = [item.model_dump(mode="json", exclude_defaults=True) for item in evidence]
    for entry, item in zip(data["evidence"], evidence, strict=True):  # always present, even at defaults
        entry.setdefault("source", item.source)
        entry.setdefault("tool", item.tool)
    return data


def render_json(evidence: Sequence[Evidence]) -> str:
    """As the JSON report is written: no NaN or Infinity (a plugin parser's non-finite float is ``null``),
    no raw control character (:func:`~rigcheck.core.report.render.escape.dump_json`)."""
    from rigcheck.core.report.render.escape import dump_json, json_safe

    return dump_json(json_safe(report_data(evidence), nonfinite=lambda _: None)) + "\n"


def render_yaml(evidence: Sequence[Evidence]) -> str:
    from rigcheck.core.spec.yaml_writer import dump_yaml

    return dump_yaml(report_data(evidence))


def render_text(evidence: Sequence[Evidence]) -> str:
    """One block per file; every line passes :func:`~rigcheck.core.report.render.escape.escape_text` (what a file
    holds reaches the terminal: no control character, no line break inside a value, no workflow command)."""
    from rigcheck.core.report.render.escape import escape_text

    blocks = ["\n".join(escape_text(line) for line in _text(item)) for item in evidence]
    return "\n\n".join(blocks) + "\n"


def _text(evidence: Evidence) -> Iterator[str]:
    version = f" {evidence.tool_version}" if evidence.tool_version else ""
    yield f"{evidence.source}: read as {evidence.tool}{version}"
    about = [
        f"host {evidence.host}" if evidence.host else "",
        f"OS {evidence.os}" if evidence.os else "",
        f"driver {evidence.driver_version}" if evidence.driver_version else "",
        f"CUDA {evidence.cuda_version} (driver)" if evidence.cuda_version else "",
        f"CUDA toolkit {evidence.toolkit_version}" if evidence.toolkit_version else "",
        f"collected {evidence.collected_at}" if evidence.collected_at else "",
    ]
    if any(about):
        yield "  " + ", ".join(part for part in about if part)
    if evidence.gpu_count is not None and evidence.gpu_count != len(evidence.gpus):
        yield f"  {evidence.gpu_count} GPU(s) attached, {len(evidence.gpus)} listed"
    for gpu in evidence.gpus:
        yield "  " + _gpu(gpu)
    if evidence.topology is not None:
        yield from _topology(evidence)
    for result in evidence.nccl:
        largest = (
            f"busbw {result.busbw_at_largest_gbps:g} GB/s at {result.largest_size_bytes:,} bytes"
            if result.busbw_at_largest_gbps is not None and result.largest_size_bytes is not None
            else "no result rows"
        )
        ranks = f", {result.ranks} ranks" if result.ranks else ""
        yield f"  nccl-tests {result.operation or '?'}: {largest}{ranks}, {len(result.rows)} sizes"
        sized = [row for row in result.rows if row.size_bytes >= 2**20 and row.busbw_gbps is not None]
        if sized:
            yield "    busbw by size (GB/s): " + ", ".join(
                f"{_bytes(row.size_bytes)} {row.busbw_gbps:g}" for row in sized
            )
        for anomaly in result.anomalies:
            yield f"    anomaly: {anomaly}"
    for job in evidence.storage:
        parts = [
            f"read {job.read_iops:g} IOPS" if job.read_iops else "",
            f"{job.read_bw_bytes_per_s / 1e6:,.1f} MB/s read" if job.read_bw_bytes_per_s else "",
            f"write {job.write_iops:g} IOPS" if job.write_iops else "",
            f"{job.write_bw_bytes_per_s / 1e6:,.1f} MB/s write" if job.write_bw_bytes_per_s else "",
        ]
        setup = " ".join(str(value) for value in (job.rw, job.block_size) if value)
        yield f"  fio job {job.name or '?'} ({setup or 'setup unknown'}): " + ", ".join(p for p in parts if p)
    for item in evidence.bandwidth:
        between = f" {item.src}->{item.dst}" if item.src or item.dst else ""
        size = f" at {item.size_bytes:,} bytes" if item.size_bytes else ""
        yield f"  bandwidth {item.kind}{between}: {item.gbps:g} GB/s{size}"
    if evidence.diag:
        counts: dict[str, int] = {}
        for diag in evidence.diag:
            counts[diag.result] = counts.get(diag.result, 0) + 1
        failed = sorted({diag.test for diag in evidence.diag if diag.result in ("fail", "warn")})
        version = f" {evidence.diag_version}" if evidence.diag_version else ""
        summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
        yield f"  dcgmi diag{version}: {summary}" + (
            f" (fail or warn: {', '.join(failed)})" if failed else ""
        )
    for port in evidence.ib_ports:
        rate = f" {port.rate_gbps:g} Gb/s" if port.rate_gbps else ""
        yield f"  {port.ca} port {port.port}: {port.state or 'state unknown'}{rate} {port.link_layer or ''}".rstrip()
    if evidence.torch is not None:
        yield "  " + _torch(evidence)
    for mount in evidence.mounts:
        size = _bytes(mount.size_bytes) if mount.size_bytes is not None else "size unknown"
        free = f", {_bytes(mount.available_bytes)} free" if mount.available_bytes is not None else ""
        kind = f" ({mount.type})" if mount.type else ""
        yield f"  {mount.mounted_on}: {mount.filesystem}{kind}, {size}{free}"
    if evidence.packages:
        shown = ", ".join(
            f"{name} {evidence.packages[name]}" for name in NAMED_PACKAGES if name in evidence.packages
        )
        yield f"  {len(evidence.packages)} Python distributions" + (f": {shown}" if shown else "")
        wheels = evidence.extra.get("cuda_wheels") or {}
        if wheels:
            key = [name for name in sorted(wheels) if name.startswith(KEY_CUDA_WHEELS)]
            more = len(wheels) - len(key)
            listed = ", ".join(f"{name} {wheels[name]}" for name in key)
            yield f"  CUDA wheels: {listed}" + (f" (and {more} more)" if more else "")
    if evidence.problems:
        yield "  problems:"
        for problem in evidence.problems:
            yield f"    - {problem}"


def _bytes(value: float) -> str:
    """``1.8 TiB``, ``68.0 GiB``, ``4.0 KiB``: binary units, as ``df -h`` prints them."""
    for unit, power in (("TiB", 4), ("GiB", 3), ("MiB", 2), ("KiB", 1)):
        if value >= 1024**power:
            return f"{value / 1024**power:,.1f} {unit}"
    return f"{value:g} B"


def _gpu(gpu: GpuEvidence) -> str:
    parts = [f"GPU {gpu.index if gpu.index is not None else '?'}: {gpu.name or 'name unknown'}"]
    if gpu.memory_total_mib is not None:
        parts.append(f"{gpu.memory_total_mib:g} MiB")
    if gpu.ecc_current is not None:
        parts.append(f"ECC {'on' if gpu.ecc_current else 'off'}")
    if gpu.pcie_gen_max is not None or gpu.pcie_width_max is not None:
        parts.append(f"PCIe gen {gpu.pcie_gen_max or '?'} x{gpu.pcie_width_max or '?'} (max)")
    if gpu.power_limit_w is not None:
        parts.append(f"power limit {gpu.power_limit_w:g} W")
    if gpu.nvlinks:
        active = sum(link.active for link in gpu.nvlinks)
        parts.append(f"{active}/{len(gpu.nvlinks)} NVLinks active")
    if gpu.compute_capability:
        parts.append(f"compute {gpu.compute_capability}")
    return ", ".join(parts)


def _topology(evidence: Evidence) -> Iterator[str]:
    topology = evidence.topology
    assert topology is not None
    gpus = [device for device in topology.devices if device.startswith("GPU")]
    pairs = [
        (a, b, topology.matrix.get(a, {}).get(b, "?")) for n, a in enumerate(gpus) for b in gpus[n + 1 :]
    ]
    kinds: dict[str, int] = {}
    for _, _, link in pairs:
        kinds[link] = kinds.get(link, 0) + 1
    what = "nvidia-smi topo -m" if topology.kind == "connection" else "nvidia-smi topo -p2p"
    summary = ", ".join(f"{count} pair(s) {link}" for link, count in sorted(kinds.items())) or "no GPU pairs"
    nics = len([device for device in topology.devices if not device.startswith("GPU")])
    yield f"  topology ({what}): {len(gpus)} GPU(s), {summary}" + (f"; {nics} NIC(s)" if nics else "")


def _torch(evidence: Evidence) -> str:
    torch = evidence.torch
    assert torch is not None
    parts = [f"torch {torch.version or 'version unknown'}"]
    if torch.cuda:
        parts.append(f"built for CUDA {torch.cuda}")
    if torch.cuda_available is not None:
        parts.append("CUDA available" if torch.cuda_available else "CUDA not available")
    if torch.device_count is not None:
        parts.append(f"{torch.device_count} device(s)")
    if torch.gpus:
        parts.append(", ".join(torch.gpus))
    if torch.device_capabilities:
        parts.append("capability " + ", ".join(torch.device_capabilities))
    return ", ".join(parts)
