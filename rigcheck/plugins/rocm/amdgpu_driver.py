"""ROCM003: the amdgpu kernel driver is one AMD lists for the ROCm user space in use (AMD's compatibility
matrix, "AMD GPU Driver" / "KMD versions" row; specs/hardware/rocm.yaml ``drivers``).

The user space is the node's ROCm and the ROCm a ``+rocm`` PyTorch wheel bundles (its own HIP runtime and
libraries), each of which talks to the one kernel driver. AMD supports a driver with the user spaces of
about a year around it (two releases either side up to ROCm 6.3); other pairs are untested.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import TorchBuild, parse_version
from rigcheck.core.catalog.rocm_compat import driver_listed, rocm_tables, rocm_tag, short, span
from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

DRIVER = Rule(
    code="ROCM003",
    name="amdgpu-driver-not-listed-for-rocm",
    summary="The amdgpu driver is not one AMD lists for the ROCm user space (the node's or the torch wheel's)",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares `software.amdgpu_driver` (the AMD GPU driver release: 6.4.1, 30.10.1) with the drivers AMD's "
        "compatibility matrix lists for each ROCm user space on the node: `software.rocm` and the ROCm of a "
        "`+rocmX.Y` torch build. Pass when the driver is listed for each, warn when it is not.",
        why="The kernel driver and the ROCm user space are released together and supported in pairs: AMD tests a "
        "driver with the user spaces of about a year around it. Outside the list, features the runtime expects "
        "may be missing from the driver (or the reverse), and AMD does not support the pair.",
        example="```yaml\nsoftware: {rocm: 7.2.0, amdgpu_driver: 6.2.4}   # 7.2 lists 30.30.x-30.10.x, 6.4.x\n```",
        fix="Install an amdgpu driver release the matrix lists for the ROCm in use (the finding names them), or a "
        "ROCm (or +rocm torch build) the installed driver is listed for.",
        references=(
            "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
            "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/user-kernel-space-compat-matrix.html",
        ),
    ),
)


class AmdgpuDriverChecker(PerNodeChecker):
    name = "rocm.amdgpu-driver"
    rules = (DRIVER,)
    gpu_vendor = "amd"

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        tables = rocm_tables()
        subject = ctx.node_subject(node)
        software = node.spec.software
        base = f"{node.pointer}/software"
        spaces: list[tuple[str, str, str]] = []  # (ROCm version, what brings it, its pointer)
        if software is not None and software.rocm:
            spaces.append((software.rocm, "software.rocm", f"{base}/rocm"))
        build = TorchBuild.parse(software.torch) if software is not None and software.torch else None
        bundled = rocm_tag(build.local) if build is not None else None
        if build is not None and bundled is not None:
            spaces.append((bundled, f"torch {build.text}", f"{base}/torch"))
        driver = software.amdgpu_driver if software is not None else None
        if driver is None or parse_version(driver) is None or not spaces:
            missing = "software.amdgpu_driver" if driver is None else "software.rocm or a +rocm torch build"
            yield DRIVER.skipped(
                f"{node.label}: {missing} not given",
                location=ctx.rig_at(base),
                subject=subject,
                fix="add software.amdgpu_driver (sudo dkms status: the amdgpu release) and software.rocm",
            )
            return
        where = ctx.rig_at(f"{base}/amdgpu_driver")
        if not tables.names_driver_line(driver):
            yield DRIVER.skipped(
                f"amdgpu {driver}: not a driver release line AMD's matrix names ({', '.join(tables.driver_lines())}); "
                f"the DKMS module version (modinfo amdgpu) is numbered apart from the release and AMD publishes no "
                f"table between the two",
                location=where,
                subject=subject,
                fix="give the amdgpu driver release (sudo dkms status, or the amdgpu-install package version)",
            )
            return
        for version, origin, pointer in spaces:
            release = parse_version(version)
            row = tables.driver_row(release) if release is not None else None
            if release is None or row is None:
                yield DRIVER.skipped(
                    f"ROCm {version} ({origin}): not in the driver table", location=where, subject=subject
                )
                continue
            listed = [str(entry) for entry in row["drivers"]]
            evidence = {
                "amdgpu_driver": driver,
                "rocm": version,
                "origin": origin,
                "listed": listed,
                **tables.cite(row),
            }
            label = f"amdgpu {driver} with ROCm {version} ({origin})"
            if any(driver_listed(driver, entry) for entry in listed):
                yield DRIVER.passed(
                    f"{label}: listed for ROCm {short(release)}",
                    location=where,
                    evidence=evidence,
                    subject=subject,
                )
                continue
            others = tables.releases_with_driver(driver)
            yield DRIVER.warned(
                f"{label}: ROCm {short(release)} lists amdgpu {', '.join(listed)}, not {driver} (an untested pair)",
                location=where,
                related=[ctx.rig_at(pointer)],
                evidence=evidence,
                subject=subject,
                fix=f"install amdgpu {listed[0]} (or another listed release)"
                + (f", or a ROCm the driver is listed for: {span(others)}" if others else ""),
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(AmdgpuDriverChecker())
