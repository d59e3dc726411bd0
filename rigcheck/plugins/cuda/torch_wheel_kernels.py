"""CUDA004: the PyTorch wheel carries machine code (SASS) or PTX for the GPU (docs/research/cuda_compat.md
sections 5c, 6b).

A cubin built for M.k runs on GPUs of the same major M with minor >= k; PTX for X.Y is compiled at
load time for any GPU of capability >= X.Y; with neither, "no kernel image is available for
execution on the device".
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import (
    CudaTables,
    Version,
    capability,
    cuda_tables,
    ptx_runs_on,
    sass_runs_on,
)
from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.software import cuda_gpus, software_stack

KERNELS = Rule(
    code="CUDA004",
    name="torch-wheel-has-no-kernels-for-gpu",
    summary="The PyTorch build has no machine code for the GPU (PTX only: warn; neither: fail)",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Looks up the wheel named by `software.torch` (`2.5.1+cu121`) in PyTorch's build lists: pass when it "
        "has SASS for the GPU (same major, minor at or below the GPU's), warn when only PTX can be JIT-compiled "
        "for it, fail when it has neither. A `+cpu` or `+rocm` build on an NVIDIA GPU fails; a version without a "
        "`+cuXYZ` suffix cannot be checked.",
        why="'NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
        "installation' followed by 'no kernel image is available for execution on the device' is what a cu121 "
        "wheel prints on Blackwell; PTX-only support compiles every kernel at first use (minutes) and fails under "
        "minor-version compatibility.",
        example="```yaml\ngpus: {model: RTX 5090}\n"
        "software: {torch: 2.5.1+cu121}   # sm_50..sm_90, no PTX: CUDA004\n```",
        fix="Install a wheel built for the GPU: Blackwell needs torch 2.7+ with cu128 (or cu129/cu130); Volta and "
        "Pascal need cu126 (or cu118) wheels, not cu128 2.7 or cu130.",
        references=(
            "https://github.com/pytorch/pytorch/blob/main/RELEASE.md",
            "https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh",
            "https://docs.nvidia.com/cuda/blackwell-compatibility-guide/",
        ),
    ),
)


class TorchWheelKernelsChecker(PerNodeChecker):
    name = "cuda.torch-wheel"
    rules = (KERNELS,)
    gpu_vendor = "nvidia"

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        tables = cuda_tables()
        stack = software_stack(node)
        gpus = cuda_gpus(node)
        if not gpus:
            return
        subject = ctx.node_subject(node)
        if stack is None or stack.torch is None:
            yield KERNELS.skipped(
                f"{node.label}: software.torch not given",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
            )
            return
        build = stack.torch
        where = ctx.rig_at(stack.torch_pointer)
        if build.cuda_tag is None:
            if build.local and (build.local == "cpu" or build.local.startswith("rocm")):
                yield KERNELS.failed(
                    f"torch {build.text} is a {build.local} build: it cannot use NVIDIA GPUs",
                    location=where,
                    subject=subject,
                    fix="install a CUDA build (pip install torch --index-url "
                    "https://download.pytorch.org/whl/cu126, or the cuXYZ the driver supports)",
                )
            else:
                yield KERNELS.skipped(
                    f"torch {build.text}: no +cuXYZ suffix (a source or container build?), so the build's CUDA and "
                    f"architectures are unknown",
                    location=where,
                    subject=subject,
                    fix="write the build as torch.__version__ prints it, e.g. 2.7.0+cu128",
                )
            return
        row = tables.torch_wheel(build)
        nearest = ""
        if row is None and build.prerelease:
            row = tables.nearest_wheel(build)
            if row is not None:
                nearest = (
                    f"; a pre-release build, judged by the nearest listed {row['wheel']} build's targets "
                    f"(torch {row['torch_from']}-{row['torch_to']})"
                )
        if row is None:
            published = tables.wheels_of_release(build)
            told = f"torch {build.text}: no {build.cuda_tag} wheel in PyTorch's build lists" + (
                f" (this release published {', '.join(published)})" if published else ""
            )
            yield KERNELS.skipped(told, location=where, subject=subject)
            return
        sass = [capability(value) for value in row["sass"]]
        if stack.os == "windows":  # Windows wheels have carried an extra sm_61
            sass += [capability(value) for value in tables.data["torch_wheels"].get("windows_extra_sass", [])]
        ptx = [capability(value) for value in row["ptx"]]
        listed = " ".join(f"sm_{m}{n}" for m, n in sass) + "".join(f" compute_{m}{n}" for m, n in ptx)
        for gpu in gpus:
            cc = capability(gpu.facts.compute_capability)
            evidence = {
                "torch": build.text,
                "wheel": row["wheel"],
                "sass": [f"{m}.{n}" for m, n in sass],
                "ptx": [f"{m}.{n}" for m, n in ptx],
                "gpu": gpu.facts.name,
                "compute_capability": gpu.facts.compute_capability,
                **tables.cite("torch_wheels"),
            }
            label = f"torch {build.text} ({listed}{nearest}) on {gpu.facts.name} (sm_{cc[0]}{cc[1]})"
            runs = [f"sm_{m}{n}" for m, n in sass if sass_runs_on((m, n), cc)]
            if runs:
                yield KERNELS.passed(
                    f"{label}: runs its {runs[-1]} code",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                )
                continue
            jit = [f"compute_{m}{n}" for m, n in ptx if ptx_runs_on((m, n), cc)]
            if jit:
                yield KERNELS.warned(
                    f"{label}: no machine code for the GPU; {jit[-1]} PTX is JIT-compiled at "
                    f"first use (slow start; fails on a driver older than the wheel's CUDA)",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                    fix="a wheel with SASS for the GPU",
                )
                continue
            yield KERNELS.failed(
                f"{label}: 'no kernel image is available for execution on the device'",
                location=where,
                evidence=evidence,
                subject=subject,
                fix=_suggest(tables, cc),
            )


def _suggest(tables: CudaTables, cc: Version) -> str:
    """Each wheel variant with SASS for the GPU and the torch releases that publish it with that code."""

    def key(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    spans: dict[str, tuple[str, str]] = {}
    for row in tables.data["torch_wheels"]["rows"]:
        if any(sass_runs_on(capability(value), cc) for value in row["sass"]):
            low, high = str(row["torch_from"]), str(row["torch_to"])
            if row["wheel"] in spans:
                old_low, old_high = spans[row["wheel"]]
                low, high = min(low, old_low, key=key), max(high, old_high, key=key)
            spans[row["wheel"]] = (low, high)
    if not spans:
        return "no PyTorch wheel in the build lists has code for this GPU; build from source"
    ordered = sorted(spans.items(), key=lambda item: key(item[1][0]))
    return "install a wheel built for the GPU: " + ", ".join(
        f"{wheel} (torch {low}{'' if low == high else f'-{high}'})" for wheel, (low, high) in ordered
    )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(TorchWheelKernelsChecker())
