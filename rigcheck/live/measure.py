"""``rigcheck measure``: copy and all-reduce bandwidth on this machine, written as evidence.

With CUDA GPUs (through torch): host-to-device and device-to-host copies from pinned memory, a
copy within each GPU, peer copies between every GPU pair, and an all-reduce across the local GPUs
(``torch.cuda.nccl.all_reduce``, bus bandwidth = size / time x 2(n-1)/n, as nccl-tests reports it).
Without a GPU it measures host memory copy bandwidth on the CPU and says so. Each figure is the
best of ``iterations`` timed runs after one warm-up; a copy's bandwidth is bytes moved / time (one
direction), as nvbandwidth reports it.

torch is imported only here, inside the functions: the linter never loads this module.
"""

from __future__ import annotations

import platform
import socket
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from rigcheck.evidence.model import Bandwidth, Evidence, GpuEvidence, TorchEvidence

Progress = Callable[[str], None]


def measure(
    torch_module: Any = None,
    *,
    size_mib: int = 256,
    iterations: int = 5,
    progress: Progress | None = None,
    source: str = "rigcheck measure",
) -> Evidence:
    """Run the measurements and return them as :class:`Evidence` (tool ``rigcheck-measure``)."""
    torch = torch_module if torch_module is not None else _import_torch()
    say = progress or (lambda message: None)
    torch_evidence = TorchEvidence(
        version=str(getattr(torch, "__version__", None)),
        cuda=getattr(getattr(torch, "version", None), "cuda", None),
        cuda_available=bool(torch.cuda.is_available()),
    )
    evidence = Evidence(
        source=source,
        tool="rigcheck-measure",
        host=socket.gethostname(),
        collected_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        os=platform.system().lower(),
        torch=torch_evidence,
    )
    size = size_mib * 2**20
    if not torch.cuda.is_available():
        say("no CUDA GPU: measuring host memory copy bandwidth on the CPU only")
        evidence.problems.append("no CUDA GPU visible to torch: only host memory bandwidth was measured")
        evidence.bandwidth.append(_host_memory(torch, size, iterations, say))
        return evidence
    count = torch.cuda.device_count()
    evidence.gpu_count = count
    torch_evidence.gpus = [torch.cuda.get_device_name(i) for i in range(count)]
    torch_evidence.device_capabilities = [
        ".".join(map(str, torch.cuda.get_device_capability(i))) for i in range(count)
    ]
    evidence.gpus = [GpuEvidence(index=i, name=name) for i, name in enumerate(torch_evidence.gpus)]
    steps = count * 3 + count * (count - 1) + (1 if count > 1 else 0)
    step = 0

    def tick(what: str) -> None:
        nonlocal step
        step += 1
        say(f"[{step}/{steps}] {what}")

    for index in range(count):
        device = f"cuda:{index}"
        host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
        gpu = torch.empty(size, dtype=torch.uint8, device=device)
        other = torch.empty(size, dtype=torch.uint8, device=device)
        for kind, dst_name, src_name, target, origin in (
            ("h2d", device, "host", gpu, host),
            ("d2h", "host", device, host, gpu),
            ("d2d", device, device, other, gpu),
        ):
            tick(f"{kind} {device}, {size_mib} MiB")
            seconds = _best(torch, _copy(target, origin), iterations)
            evidence.bandwidth.append(
                Bandwidth(
                    kind=kind,
                    src=src_name,
                    dst=dst_name,
                    gbps=size / seconds / 1e9,
                    size_bytes=size,
                    pinned=True,
                    tool="rigcheck-measure",
                )
            )
    for src in range(count):
        for dst in range(count):
            if src == dst:
                continue
            tick(f"p2p cuda:{src} -> cuda:{dst}")
            a = torch.empty(size, dtype=torch.uint8, device=f"cuda:{src}")
            b = torch.empty(size, dtype=torch.uint8, device=f"cuda:{dst}")
            seconds = _best(torch, _copy(b, a), iterations)
            evidence.bandwidth.append(
                Bandwidth(
                    kind="p2p",
                    src=f"cuda:{src}",
                    dst=f"cuda:{dst}",
                    gbps=size / seconds / 1e9,
                    size_bytes=size,
                    p2p_enabled=bool(torch.cuda.can_device_access_peer(src, dst)),
                    tool="rigcheck-measure",
                )
            )
    if count > 1:
        tick(f"all_reduce over {count} GPUs, {size_mib} MiB")
        evidence.bandwidth.append(_all_reduce(torch, count, size, iterations))
    return evidence


def _import_torch() -> Any:
    try:
        import torch
    except ModuleNotFoundError:
        from rigcheck.core.engine.errors import UsageError

        raise UsageError(
            "rigcheck measure needs PyTorch: pip install 'rigcheck[torch]' (or torch==2.13.0 for the CPU build)"
        ) from None
    return torch


def _copy(target: Any, origin: Any) -> Callable[[], Any]:
    """A run that copies ``origin`` into ``target`` (asynchronously; :func:`_best` synchronises)."""
    return lambda: target.copy_(origin, non_blocking=True)


def _best(torch: Any, run: Callable[[], Any], iterations: int) -> float:
    """Seconds of the fastest of ``iterations`` runs after one warm-up, synchronising around each."""
    run()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(max(1, iterations)):
        started = time.perf_counter()
        run()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - started)
    return max(best, 1e-9)


def _host_memory(torch: Any, size: int, iterations: int, say: Progress) -> Bandwidth:
    source = torch.empty(size, dtype=torch.uint8)
    target = torch.empty(size, dtype=torch.uint8)
    source.fill_(1)
    target.copy_(source)
    best = float("inf")
    for index in range(max(1, iterations)):
        started = time.perf_counter()
        target.copy_(source)
        best = min(best, time.perf_counter() - started)
        say(f"[{index + 1}/{iterations}] host memory copy, {size // 2**20} MiB")
    return Bandwidth(
        kind="host_memory",
        src="host",
        dst="host",
        gbps=size / max(best, 1e-9) / 1e9,
        size_bytes=size,
        tool="rigcheck-measure",
    )


def _all_reduce(torch: Any, count: int, size: int, iterations: int) -> Bandwidth:
    """nccl-tests' bus bandwidth: algbw = size / time, busbw = algbw x 2(n-1)/n."""
    elements = size // 4
    tensors = [torch.ones(elements, dtype=torch.float32, device=f"cuda:{i}") for i in range(count)]
    seconds = _best(torch, lambda: torch.cuda.nccl.all_reduce(tensors), iterations)
    algbw = size / seconds / 1e9
    return Bandwidth(
        kind="all_reduce",
        src=f"{count} GPUs",
        gbps=algbw * 2 * (count - 1) / count,
        size_bytes=size,
        tool="rigcheck-measure",
    )


def write_evidence(evidence: Evidence, path: str | None) -> str:
    text = evidence.model_dump_json(indent=2, exclude_none=True) + "\n"
    if path:
        from rigcheck.core.spec.boundary import replacing

        with replacing(path) as handle:
            handle.write(text)
    return text
