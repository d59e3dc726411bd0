"""ROCM002: the PyTorch ``+rocm`` wheel was compiled for the GPU's gfx target (PyTorch's builder scripts,
``PYTORCH_ROCM_ARCH``, specs/hardware/rocm.yaml ``torch_wheels``).

HIP code objects are built per gfx target, with no portable intermediate form like CUDA's PTX: a wheel
without the GPU's target stops at its first kernel with "HIP error: invalid device function".
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import TorchBuild
from rigcheck.core.catalog.rocm_compat import rocm_tables, rocm_tag, runs
from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

KERNELS = Rule(
    code="ROCM002",
    name="torch-rocm-wheel-has-no-kernels-for-gpu",
    summary="The PyTorch +rocm build was not compiled for the AMD GPU's gfx target",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Looks up the wheel named by `software.torch` (`2.0.1+rocm5.4.2`) in PyTorch's ROCm build lists: pass "
        "when its targets include the GPU's gfx target, fail when they do not. A `+cuXYZ` or `+cpu` build on an "
        "AMD GPU fails; a build the lists do not hold (they are sourced for torch 2.0-2.4) cannot be checked.",
        why="PyTorch compiles its HIP kernels for the targets in PYTORCH_ROCM_ARCH only, and HIP has no PTX-like "
        "fallback: torch 2.0.1+rocm5.4.2 (gfx900, gfx906, gfx908, gfx90a, gfx1030) stops on an MI300X (gfx942) "
        "with 'HIP error: invalid device function'. gfx942 entered the wheels with ROCm 6.0 builds (torch 2.3).",
        example="```yaml\ngpus: {model: MI300X, count: 8}\n"
        "software: {rocm: 6.2.4, torch: 2.0.1+rocm5.4.2}   # no gfx942 kernels: ROCM002\n```",
        fix="Install a +rocm wheel built for the GPU's target (the finding names the listed ones), e.g. "
        "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2, or AMD's rocm/pytorch container.",
        references=(
            "https://github.com/pytorch/builder/blob/release/2.0/manywheel/build_docker.sh",
            "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html",
        ),
    ),
)


class TorchRocmKernelsChecker(PerNodeChecker):
    name = "rocm.torch-wheel"
    rules = (KERNELS,)
    gpu_vendor = "amd"

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        tables = rocm_tables()
        subject = ctx.node_subject(node)
        software = node.spec.software
        if software is None or software.torch is None:
            yield KERNELS.skipped(
                f"{node.label}: software.torch not given",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
            )
            return
        build = TorchBuild.parse(software.torch)
        where = ctx.rig_at(f"{node.pointer}/software/torch")
        if build is None:
            yield KERNELS.skipped(
                f"torch {software.torch}: not a version (2.3.1+rocm6.0)", location=where, subject=subject
            )
            return
        tag = rocm_tag(build.local)
        if tag is None:
            if build.local:  # +cu128, +cpu: a build for something else
                yield KERNELS.failed(
                    f"torch {build.text} is a {build.local} build: it cannot use AMD GPUs",
                    location=where,
                    subject=subject,
                    fix="install a ROCm build (pip install torch --index-url https://download.pytorch.org/whl/"
                    "rocm6.2, or the rocmX.Y that matches the node's ROCm)",
                )
            else:
                yield KERNELS.skipped(
                    f"torch {build.text}: no +rocmX.Y suffix (a source or container build?), so its targets are "
                    f"unknown",
                    location=where,
                    subject=subject,
                    fix="write the build as torch.__version__ prints it, e.g. 2.3.1+rocm6.0",
                )
            return
        row = tables.wheel_row(build.version, tag)
        if row is None:
            yield KERNELS.skipped(
                f"torch {build.text}: not in PyTorch's ROCm build lists as sourced (torch "
                f"{runs(tables.torch_lines())})",
                location=where,
                subject=subject,
            )
            return
        for gpu in self.walked_gpus(node):
            gfx = gpu.facts.gfx_target
            if gfx is None:
                continue
            evidence = {
                "torch": build.text,
                "gfx_targets": list(row["gfx"]),
                "gpu": gpu.facts.name,
                "gfx_target": gfx,
                **tables.cite(row),
            }
            label = f"torch {build.text} ({' '.join(row['gfx'])}) on {gpu.facts.name} ({gfx})"
            if gfx in row["gfx"]:
                yield KERNELS.passed(
                    f"{label}: compiled for {gfx}", location=where, evidence=evidence, subject=subject
                )
                continue
            wheels = tables.wheels_for(gfx)[-3:]  # the newest three
            yield KERNELS.failed(
                f"{label}: 'HIP error: invalid device function' at the first kernel (or rocBLAS finding no "
                f"kernels for {gfx}: 'Cannot read ... TensileLibrary.dat')",
                location=where,
                evidence=evidence,
                subject=subject,
                fix=(
                    f"install a wheel compiled for {gfx}: {', '.join(wheels)} (or a later release)"
                    if wheels
                    else f"no listed PyTorch wheel is compiled for {gfx}: build from source with "
                    f"PYTORCH_ROCM_ARCH={gfx}"
                ),
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(TorchRocmKernelsChecker())
