"""A node's CUDA software stack as the CUDA checkers read it: OS, driver, and the CUDA runtimes in use.

The runtime an application uses is the one it was built with: a PyTorch wheel's bundled CUDA
(``+cu121`` -> 12.1, whatever the host has installed), ``cuda_runtime`` for other applications, and
the host toolkit (``nvcc -V``) for code compiled on the node. Under WSL the Windows driver is the
one that counts (docs/research/cuda_compat.md section 7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from rigcheck.core.catalog.cuda_compat import CudaVersion, TorchBuild, Version, parse_version
from rigcheck.core.engine.views import GpuView, NodeView


class Runtime(NamedTuple):
    """A CUDA runtime the software stack brings, and where the spec says so."""

    cuda: CudaVersion
    origin: str  # "torch 2.5.1+cu121", "cuda_runtime", "cuda_toolkit (nvcc)"
    pointer: str


@dataclass(frozen=True)
class SoftwareStack:
    """A node's software: OS, driver, PyTorch build, CUDA toolkit and runtimes, with their pointers."""

    os: str | None
    driver: Version | None
    driver_text: str | None
    driver_pointer: str
    torch: TorchBuild | None
    torch_pointer: str
    toolkit: CudaVersion | None
    runtimes: list[Runtime] = field(default_factory=list)
    compat_package: str | None = None

    @property
    def windows_driver(self) -> bool:
        """Windows and WSL run the Windows driver (its own version numbers and table column)."""
        return self.os in ("windows", "wsl")

    @property
    def column(self) -> str:
        return "windows" if self.windows_driver else "linux"


def cuda_gpus(node: NodeView) -> list[GpuView]:
    """The node's NVIDIA GPUs with a known compute capability: the ones NVIDIA's CUDA tables cover."""
    return [gpu for gpu in node.gpus if gpu.facts.vendor == "nvidia" and gpu.facts.compute_capability]


def software_stack(node: NodeView) -> SoftwareStack | None:
    """The node's stack, worked out once per node group (five CUDA checkers ask for it)."""
    if "_software_stack" not in node.__dict__:
        node.__dict__["_software_stack"] = _software_stack(node)
    return node.__dict__["_software_stack"]


def _software_stack(node: NodeView) -> SoftwareStack | None:
    software = node.spec.software
    if software is None:
        return None
    base = f"{node.pointer}/software"
    torch = TorchBuild.parse(software.torch) if software.torch else None
    toolkit = CudaVersion.parse(software.cuda_toolkit) if software.cuda_toolkit else None
    runtimes: list[Runtime] = []
    seen: set[tuple[int, int, int | None]] = set()

    def add(cuda: CudaVersion | None, origin: str, pointer: str) -> None:
        if cuda is None or (cuda.major, cuda.minor, cuda.update) in seen:
            return
        seen.add((cuda.major, cuda.minor, cuda.update))
        runtimes.append(Runtime(cuda, origin, pointer))

    if torch is not None:
        add(torch.cuda, f"torch {torch.text}", f"{base}/torch")
    if software.cuda_runtime:
        add(CudaVersion.parse(software.cuda_runtime), "cuda_runtime", f"{base}/cuda_runtime")
    add(toolkit, "cuda_toolkit (nvcc)", f"{base}/cuda_toolkit")
    return SoftwareStack(
        os=software.os,
        driver=parse_version(software.driver) if software.driver else None,
        driver_text=software.driver,
        driver_pointer=f"{base}/driver",
        torch=torch,
        torch_pointer=f"{base}/torch",
        toolkit=toolkit,
        runtimes=runtimes,
        compat_package=software.cuda_compat,
    )
