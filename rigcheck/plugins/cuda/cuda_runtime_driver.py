"""CUDA002: the driver supports the CUDA runtime the applications were built with (docs/research/cuda_compat.md
sections 2-4).

Natively when the driver's branch runs that CUDA (what nvidia-smi prints as "CUDA Version");
through minor-version compatibility (CUDA 11+) when the driver is at least the major's floor, with
limits; through a forward-compatibility package on data-center GPUs under Linux; otherwise not.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import (
    CudaTables,
    CudaVersion,
    Version,
    cuda_tables,
    cuda_text,
    parse_version,
)
from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.software import Runtime, SoftwareStack, software_stack

_MVC = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
_FC = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"

RUNTIME_DRIVER = Rule(
    code="CUDA002",
    name="driver-too-old-for-cuda-runtime",
    summary="The driver cannot run the CUDA runtime in use, or only through a compatibility path",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For each CUDA runtime the node uses (the torch wheel's bundled CUDA, `cuda_runtime`, the host "
        "`cuda_toolkit`), compares it with the driver: pass when the driver's branch supports it natively (the "
        "'CUDA Version' nvidia-smi prints is this maximum, not an installed toolkit; a branch that runs 12.4 runs "
        "every 12.4 update, since the table's per-update rows are only the driver each update was bundled with); "
        "pass, with its limits, when it runs through a forward-compatibility package (`software.cuda_compat`, "
        "Linux and data-center GPUs only: NVIDIA's supported path, the one NGC containers take); warn when it "
        "runs only through minor-version compatibility (same major, driver at least 450.80.02 for 11.x, "
        "525.60.13 for 12.x, 580.65.06 for 13.x; Windows 452.39 / 527.41 / R580); fail otherwise. CUDA 10.x and "
        "older have no minor-version compatibility. A forward-compatibility package on a GeForce or "
        "workstation GPU fails (error 804), and so does a CUDA runtime on a node whose GPUs are not NVIDIA's.",
        why="'CUDA driver version is insufficient for CUDA runtime version' is the first error after a driver or "
        "container mismatch. Minor-version compatibility runs the application but cannot JIT newer PTX "
        "(cudaErrorUnsupportedPtxVersion, which breaks Triton and torch.compile) and newer APIs return "
        "cudaErrorCallRequiresNewerDriver.",
        example="```yaml\n"
        "software: {driver: '525.60.13', torch: '2.4.0+cu124'}   # 12.4 via MVC only: CUDA002 warn\n```",
        fix="Upgrade the driver to the branch that supports the runtime natively, or use a wheel/container built "
        "for an older CUDA (cu118 or cu121 on an R525 driver).",
        references=("https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html", _MVC, _FC),
    ),
)


class CudaRuntimeDriverChecker(PerNodeChecker):
    name = "cuda.runtime-driver"
    rules = (RUNTIME_DRIVER,)

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        tables = cuda_tables()
        gpus = [gpu for gpu in node.gpus if gpu.facts.vendor == "nvidia"]
        subject = ctx.node_subject(node)
        stack = software_stack(node)
        if not gpus:
            if node.gpus and stack is not None and stack.runtimes:
                yield self._no_nvidia(ctx, node, stack, subject)
            return
        if stack is None or stack.driver is None:
            yield RUNTIME_DRIVER.skipped(
                f"{node.label}: software.driver not given",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
                fix="add software.driver (nvidia-smi's Driver Version)",
            )
            return
        maximum = tables.branch_max_cuda(stack.driver)
        shown = (
            f"nvidia-smi's 'CUDA Version: {cuda_text(maximum)}' is the newest runtime driver "
            f"{stack.driver_text} runs natively, not an installed toolkit"
            if maximum
            else f"driver {stack.driver_text} is older than every branch rigcheck knows"
        )
        if not stack.runtimes:
            yield RUNTIME_DRIVER.passed(
                f"{node.label}: no CUDA runtime declared; {shown}",
                location=ctx.rig_at(stack.driver_pointer),
                subject=subject,
            )
            return
        for runtime in stack.runtimes:
            yield self._one(ctx, tables, stack, stack.driver, runtime, gpus[0], maximum, shown, subject)

    @staticmethod
    def _one(
        ctx: CheckContext,
        tables: CudaTables,
        stack: SoftwareStack,
        driver: Version,
        runtime: Runtime,
        gpu: GpuView,
        maximum: Version | None,
        shown: str,
        subject: str,
    ) -> Finding:
        cuda = runtime.cuda
        where = ctx.rig_at(runtime.pointer)
        related = [ctx.rig_at(stack.driver_pointer)]
        row = tables.toolkit_row(cuda)
        needed_text = row.get(stack.column) if row else None
        if row is not None and needed_text is None and not stack.windows_driver and row.get("linux_branch"):
            needed_text = f"R{row['linux_branch']}"
        evidence = {
            "runtime": cuda.text,
            "runtime_from": runtime.origin,
            "driver": stack.driver_text,
            "os": stack.os or "linux (assumed)",
            "driver_max_cuda": cuda_text(maximum) if maximum else None,
            "toolkit_driver": needed_text,
            **tables.cite("toolkit_drivers"),
        }
        label = f"CUDA {cuda.text} ({runtime.origin}) on driver {stack.driver_text}"
        # The per-update rows of NVIDIA's table are the driver each update was bundled with, not a floor:
        # a driver whose branch runs 12.4 runs every 12.4 update natively.
        native = maximum is not None and cuda.short <= maximum[:2]
        package = stack.compat_package
        datacenter = gpu.facts.segment == "datacenter"
        if package and not datacenter:
            return RUNTIME_DRIVER.failed(
                f"{label}: forward-compatibility package {package} on {gpu.facts.name} ({gpu.facts.segment}): "
                f"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804) when it is loaded",
                location=ctx.rig_at(f"{stack.driver_pointer.rsplit('/', 1)[0]}/cuda_compat"),
                related=[where],
                evidence=evidence,
                subject=subject,
                fix="remove the cuda-compat package and upgrade the driver instead (forward compatibility is for "
                "data-center GPUs only)",
            )
        if native:
            stale = tables.forward_package(package) if package else None
            if (
                stale is not None
                and maximum is not None
                and (parse_version(stale["cuda"]) or ())[:2] <= maximum[:2]
            ):
                return RUNTIME_DRIVER.warned(
                    f"{label}: supported natively, but {package} (CUDA {stale['cuda']}) is older than the driver; "
                    f"older forward-compatibility packages are not supported on newer drivers (error 803); {shown}",
                    location=ctx.rig_at(f"{stack.driver_pointer.rsplit('/', 1)[0]}/cuda_compat"),
                    evidence=evidence,
                    subject=subject,
                    fix=f"remove {package}",
                )
            return RUNTIME_DRIVER.passed(
                f"{label}: supported natively; {shown}", location=where, evidence=evidence, subject=subject
            )
        forward_problem = None
        if package:
            forward_problem = _forward_problem(tables, stack, driver, cuda, package)
            if forward_problem is None:
                branch = tables.branch(driver)
                evidence.update(compat_package=package, branch=branch)
                return RUNTIME_DRIVER.passed(
                    f"{label}: runs through forward-compatibility package {package} on R{branch}, NVIDIA's "
                    f"supported path for data-center GPUs (what NGC containers do): PTX JIT works; no "
                    f"CUDA-OpenGL/Vulkan interop; remove the package after a driver upgrade or CUDA fails with "
                    f"error 803; {shown}",
                    location=ctx.rig_at(f"{stack.driver_pointer.rsplit('/', 1)[0]}/cuda_compat"),
                    evidence=evidence,
                    subject=subject,
                )
        also = f" ({package} does not apply: {forward_problem})" if forward_problem else ""
        if cuda.major < int(tables.data["minor_version_compatibility"]["no_mvc_before_major"]):
            return RUNTIME_DRIVER.failed(
                f"{label}: CUDA {cuda.major}.x has no minor-version compatibility and needs driver "
                f"{needed_text}{also}; {shown}",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=f"install driver {needed_text} or newer",
            )
        floor_text = tables.mvc_floor(cuda.major, stack.windows_driver)
        floor = parse_version(floor_text)
        evidence["mvc_floor"] = floor_text
        upgrade = f"upgrade the driver to {needed_text} or newer" if needed_text else "upgrade the driver"
        if floor is not None and driver >= floor:
            return RUNTIME_DRIVER.warned(
                f"{label}: runs only through minor-version compatibility (CUDA {cuda.major}.x floor "
                f"{floor_text}; full support from {needed_text}){also}: no PTX JIT "
                f"(cudaErrorUnsupportedPtxVersion, which Triton and torch.compile hit) and newer APIs return "
                f"cudaErrorCallRequiresNewerDriver; {shown}",
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix=upgrade,
            )
        below = f" (the CUDA {cuda.major}.x floor is {floor_text})" if floor_text else ""
        return RUNTIME_DRIVER.failed(
            f"{label}: 'CUDA driver version is insufficient for CUDA runtime version'{below}{also}; {shown}",
            location=where,
            related=related,
            evidence=evidence,
            subject=subject,
            fix=upgrade,
        )

    @staticmethod
    def _no_nvidia(ctx: CheckContext, node: NodeView, stack: SoftwareStack, subject: str) -> Finding:
        names = ", ".join(sorted({f"{gpu.facts.name} ({gpu.facts.vendor})" for gpu in node.gpus}))
        runtime = stack.runtimes[0]
        return RUNTIME_DRIVER.failed(
            f"{node.label}: CUDA {runtime.cuda.text} ({runtime.origin}) needs an NVIDIA driver and GPU, but the "
            f"node has {names}: no CUDA driver exists for it, so the runtime finds no device",
            location=ctx.rig_at(runtime.pointer),
            evidence={
                "runtimes": [r.cuda.text for r in stack.runtimes],
                "gpus": names,
                **cuda_tables().cite("toolkit_drivers"),
            },
            subject=subject,
            fix="install the GPU vendor's own build (PyTorch +rocm for AMD, MPS/MLX for Apple) and drop the CUDA "
            "runtime and toolkit from the spec",
        )


def _forward_problem(
    tables: CudaTables, stack: SoftwareStack, driver: Version, cuda: CudaVersion, package: str
) -> str | None:
    """Why a forward-compatibility package cannot carry this runtime on ``driver`` (``stack.driver``), or
    None when it can."""
    row = tables.forward_package(package)
    branch = tables.branch(driver)
    if stack.os not in (None, "linux"):
        return f"forward compatibility is Linux-only, not {stack.os}"
    if row is None:
        return f"{package} is not a package rigcheck knows"
    if cuda.short > (parse_version(row["cuda"]) or (0, 0))[:2]:
        return f"it provides CUDA up to {row['cuda']}"
    if branch not in [int(value) for value in row["base_branches"]]:
        supported = ", ".join(f"R{value}" for value in row["base_branches"]) or "none"
        return f"it does not support branch R{branch} (supported: {supported})"
    return None


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CudaRuntimeDriverChecker())
