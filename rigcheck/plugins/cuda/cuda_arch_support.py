"""CUDA003: the CUDA runtime or toolkit in use supports the GPU's architecture (docs/research/cuda_compat.md
sections 5, 5b).

Each architecture has a first CUDA release (Hopper and Ada 11.8, Blackwell 12.8) and, once retired,
a last major (Kepler 11.x; Maxwell, Pascal and Volta 12.x: CUDA 13.0 removed them).
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import (
    CudaTables,
    CudaVersion,
    Version,
    capability,
    cuda_tables,
    parse_version,
    sass_runs_on,
)
from rigcheck.core.engine.checker import PerGpuTypeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.software import cuda_gpus, software_stack

ARCH = Rule(
    code="CUDA003",
    name="cuda-does-not-support-gpu-architecture",
    summary="A CUDA runtime or toolkit in use predates the GPU's architecture or has dropped it",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For each CUDA version the node uses (`cuda_runtime`, `cuda_toolkit`), checks the GPU's architecture "
        "against the architecture matrix: its first CUDA (the catalog's per-SKU `min_cuda` if later) and its "
        "last CUDA major (Kepler 11, Maxwell/Pascal/Volta 12). A toolkit older than the architecture fails (nvcc "
        "cannot build for it); a `cuda_runtime` older than it warns when that CUDA builds code for a lower minor "
        "of the same major (sm_86 cubins run on sm_89, sm_100 on sm_103) and fails otherwise. It is a "
        "compile-time rule, so a prebuilt torch wheel is left to CUDA004, which reads the wheel's own kernels.",
        why="CUDA 13 cannot compile for or ship libraries for a V100 or P100; CUDA 12.6 knows nothing of an RTX "
        "5090 (sm_120). Code built with such a toolkit has no kernel for the GPU and its libraries (cuBLAS, cuDNN) "
        "refuse it.",
        example="```yaml\ngpus: {model: P100}\nsoftware: {driver: '580.95.05', cuda_runtime: '13.0'}   # CUDA003\n```",
        fix="Use a CUDA release inside the GPU's range: 12.x (12.6 wheels) for Maxwell/Pascal/Volta, 11.x for "
        "Kepler, 12.8 or later for Blackwell.",
        references=(
            "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html",
            "https://docs.nvidia.com/cuda/cuda-features-archive/index.html",
        ),
    ),
)


class CudaArchSupportChecker(PerGpuTypeChecker):
    name = "cuda.architecture"
    rules = (ARCH,)
    gpu_vendor = "nvidia"

    def check_gpu(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        if gpu not in cuda_gpus(node):
            return
        tables = cuda_tables()
        stack = software_stack(node)
        subject = ctx.node_subject(node)
        if stack is None or not stack.runtimes:
            yield ARCH.skipped(
                f"{gpu.facts.name}: no CUDA runtime, toolkit or torch build declared",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
            )
            return
        cc = capability(gpu.facts.compute_capability)
        arch = tables.architecture(cc) or {}
        first = max(
            (v for v in (parse_version(arch.get("first_cuda")), parse_version(gpu.facts.min_cuda)) if v),
            default=None,
        )
        last_major = arch.get("last_cuda_major")
        name = f"{gpu.facts.name} ({arch.get('name', gpu.facts.architecture)}, sm_{cc[0]}{cc[1]})"
        for runtime in stack.runtimes:
            cuda = runtime.cuda
            where = ctx.rig_at(runtime.pointer)
            evidence = {
                "cuda": cuda.text,
                "cuda_from": runtime.origin,
                "gpu": gpu.facts.name,
                "compute_capability": gpu.facts.compute_capability,
                "first_cuda": ".".join(map(str, first)) if first else None,
                "last_cuda_major": last_major,
                **tables.cite("architectures"),
            }
            label = f"CUDA {cuda.text} ({runtime.origin}) for {name}"
            too_old = first is not None and cuda.short < first[:2]
            dropped = last_major is not None and cuda.major > int(last_major)
            if (too_old or dropped) and runtime.origin.startswith("torch "):
                yield ARCH.skipped(
                    f"{label}: a prebuilt wheel; whether its kernels run on sm_{cc[0]}{cc[1]} is CUDA004's "
                    f"check (its cubins run on the same major architecture at a higher minor, its PTX on "
                    f"any newer GPU), not this compile-time rule",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                )
                continue
            fallback = _same_major_target(tables, cuda, cc) if too_old else None
            if too_old and fallback is not None and runtime.origin == "cuda_runtime":
                evidence["runs_with_sass_for"] = f"sm_{fallback[0]}{fallback[1]}"
                yield ARCH.warned(
                    f"{label}: the architecture arrived in CUDA {evidence['first_cuda']}, but CUDA "
                    f"{cuda.text} builds sm_{fallback[0]}{fallback[1]} code, which runs on sm_{cc[0]}{cc[1]} "
                    f"(same major, higher minor): the application runs if it ships that code or PTX",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"check the application's targets (cuobjdump --list-elf) for sm_{fallback[0]}"
                    f"{fallback[1]} or PTX, or use a build made with CUDA {evidence['first_cuda']} or later",
                )
            elif too_old:
                yield ARCH.failed(
                    f"{label}: the architecture needs CUDA {evidence['first_cuda']} or later",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"use CUDA {evidence['first_cuda']} or later (for PyTorch, a wheel built with it)",
                )
            elif dropped:
                yield ARCH.failed(
                    f"{label}: CUDA {cuda.major}.x dropped the architecture (last: {last_major}.x)",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix=f"stay on CUDA {last_major}.x for this GPU",
                )
            else:
                span = f"{evidence['first_cuda'] or '?'} to {f'{last_major}.x' if last_major else 'current'}"
                yield ARCH.passed(
                    f"{label}: supported ({span})", location=where, evidence=evidence, subject=subject
                )


def _same_major_target(tables: CudaTables, cuda: CudaVersion, cc: Version) -> Version | None:
    """The newest SASS target this CUDA's nvcc builds that runs on ``cc`` (same major, lower minor)."""
    targets = tables.nvcc_targets(cuda) or []
    usable = [sm for sm in targets if sass_runs_on(sm, cc) and sm != cc]
    return max(usable) if usable else None


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CudaArchSupportChecker())
