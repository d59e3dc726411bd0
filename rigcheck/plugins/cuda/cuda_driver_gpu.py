"""CUDA001: the installed driver can drive the GPU (docs/research/cuda_compat.md sections 5, 5a).

A GPU needs a driver at least as new as the one bundled with the first toolkit that supports its
architecture (Blackwell: CUDA 12.8, 570.26), and no newer than the architecture's last branch
(Kepler: R470; Maxwell, Pascal, Volta: R580).
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import capability, cuda_tables, parse_version
from rigcheck.core.engine.checker import PerGpuTypeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.software import cuda_gpus, software_stack

DRIVER_GPU = Rule(
    code="CUDA001",
    name="driver-does-not-support-gpu",
    summary="The NVIDIA driver is too old for the GPU, or too new for a retired architecture",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares `software.driver` with the GPU's minimum driver (the catalog's per-SKU value, else the "
        "driver of the first toolkit that supports the architecture: Hopper 520.61.05, Blackwell 570.26; the "
        "Windows column for `os: windows` and `wsl`) and with the architecture's last driver branch (Kepler R470; "
        "Maxwell, Pascal and Volta R580). Also fails the open kernel modules (`software.kernel_modules: open`, "
        "the default from R560) on a GPU older than Turing, which they cannot drive.",
        why="An older driver does not know the GPU (`nvidia-smi` shows no device, or 'No devices were found'); a "
        "branch past the architecture's last one does not load for it at all.",
        example="```yaml\ngpus: {model: RTX 5090}\nsoftware: {driver: '565.57.01'}   # needs 570.26+: CUDA001\n```",
        fix="Install a driver in the supported range (for Blackwell R570 or later; for V100/P100/GTX 10xx stay on "
        "R580, the last branch that drives them).",
        references=(
            "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html",
            "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
        ),
    ),
)


class CudaDriverGpuChecker(PerGpuTypeChecker):
    name = "cuda.driver-gpu"
    rules = (DRIVER_GPU,)
    gpu_vendor = "nvidia"

    def check_gpu(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        if gpu not in cuda_gpus(node):
            return
        tables = cuda_tables()
        stack = software_stack(node)
        subject = ctx.node_subject(node)
        where = ctx.rig_at(stack.driver_pointer if stack else f"{node.pointer}/software")
        if stack is None or stack.driver is None:
            yield DRIVER_GPU.skipped(
                f"{gpu.facts.name}: software.driver not given",
                location=where,
                subject=subject,
                fix="add software.driver (nvidia-smi's Driver Version)",
            )
            return
        cc = capability(gpu.facts.compute_capability)
        arch = tables.architecture(cc) or {}
        column = stack.column
        catalog_min = gpu.facts.min_driver_windows if stack.windows_driver else gpu.facts.min_driver_linux
        minimum_text = catalog_min or arch.get(f"min_driver_{column}")
        minimum = parse_version(minimum_text)
        last = arch.get("last_driver_branch")
        branch = tables.branch(stack.driver)
        evidence = {
            "driver": stack.driver_text,
            "branch": branch,
            "os": stack.os or "linux (assumed)",
            "gpu": gpu.facts.name,
            "compute_capability": gpu.facts.compute_capability,
            "architecture": arch.get("name", gpu.facts.architecture),
            "min_driver": minimum_text,
            "min_from": "catalog (this SKU)" if catalog_min else "architecture table",
            "last_driver_branch": last,
            **tables.cite("architectures"),
        }
        label = (
            f"driver {stack.driver_text} ({column}) for {gpu.facts.name} ({evidence['architecture']}, "
            f"sm_{cc[0]}{cc[1]})"
        )
        modules = tables.data["kernel_modules"]
        open_min = capability(modules["open_min_compute_capability"])
        flavour = node.spec.software.kernel_modules if node.spec.software else None
        if flavour == "open" and cc < open_min:
            evidence.update(kernel_modules="open", **tables.cite("kernel_modules"))
            yield DRIVER_GPU.failed(
                f"{label}: the open kernel modules drive Turing (sm_75) and newer only, GPUs with a GSP; "
                f"'{modules['unsupported_message']}'",
                location=ctx.rig_at(f"{node.pointer}/software/kernel_modules"),
                evidence=evidence,
                subject=subject,
                fix="install the proprietary kernel modules of the same driver (the runfile's "
                "--kernel-module-type=proprietary, or the distribution's non-open package)",
            )
            return
        if minimum is not None and stack.driver < minimum:
            yield DRIVER_GPU.failed(
                f"{label}: older than the {minimum_text} the GPU needs",
                location=where,
                evidence=evidence,
                subject=subject,
                fix=f"install driver {minimum_text} or newer",
            )
        elif last is not None and branch is not None and branch > int(last):
            yield DRIVER_GPU.failed(
                f"{label}: branch R{branch} is past R{last}, the last branch for {evidence['architecture']}",
                location=where,
                evidence=evidence,
                subject=subject,
                fix=f"install an R{last} driver (the last that drives {evidence['architecture']})",
            )
        else:
            bounds = f"needs {minimum_text} or newer" if minimum_text else "no minimum recorded"
            if last is not None:
                bounds += f", R{last} at most"
            if (
                cc < open_min
                and flavour is None
                and branch
                and branch >= int(modules["open_default_from_branch"])
            ):
                bounds += (
                    f"; R{modules['open_default_from_branch']} and later install the open kernel modules "
                    f"by default, which do not drive this GPU: use the proprietary ones"
                )
            yield DRIVER_GPU.passed(f"{label}: {bounds}", location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CudaDriverGpuChecker())
