"""ROCM001: the ROCm release supports the GPU's gfx target (AMD's compatibility matrix, specs/hardware/rocm.yaml
``gfx_support``).

ROCm's libraries (rocBLAS, MIOpen, hipBLASLt...) are compiled for the gfx targets AMD supports in that
release; on another target they have no kernels ("prebuilt ROCm libraries ... will cause runtime errors").
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.cuda_compat import parse_version
from rigcheck.core.catalog.rocm_compat import rocm_tables, short, span
from rigcheck.core.engine.checker import PerGpuTypeChecker
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

SUPPORT = Rule(
    code="ROCM001",
    name="rocm-release-does-not-support-gpu",
    summary="The ROCm release does not list the GPU's gfx target (deprecated: warn; not listed: fail)",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Looks up `software.rocm` (the release line: 6.2.4 is 6.2) in AMD's compatibility matrix and the GPU's "
        "gfx target in the catalog (MI300X is gfx942, MI250X gfx90a, RX 7900 XTX gfx1100): pass when the release "
        "lists the target, warn when it lists it as deprecated, fail when it does not list it. A release outside "
        "the tables cannot be checked.",
        why="ROCm's math and deep-learning libraries ship kernels for the targets AMD supports in that release only; "
        'on another GPU they fail at run time ("HIP error: invalid device function", or rocBLAS finding no '
        "kernels). MI300X (gfx942) first appears in ROCm 6.0; RDNA3 (gfx1100) in 5.7.1; MI50 (gfx906) is "
        "deprecated in 6.0-6.2 and gone after.",
        example="```yaml\ngpus: {model: MI300X, count: 8}\n"
        "software: {rocm: 5.7.1}   # gfx942 is not in ROCm 5.7: ROCM001\n```",
        fix="Install a ROCm release that lists the GPU's target (the finding names them), or run a container built "
        "on one (rocm/pytorch images carry their ROCm).",
        references=(
            "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
            "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html",
        ),
    ),
)


class RocmGpuSupportChecker(PerGpuTypeChecker):
    name = "rocm.gpu-support"
    rules = (SUPPORT,)
    gpu_vendor = "amd"

    def check_gpu(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterator[Finding]:
        tables = rocm_tables()
        subject = ctx.node_subject(node)
        software = node.spec.software
        gfx = gpu.facts.gfx_target
        if gfx is None:
            yield SUPPORT.skipped(
                f"{gpu.facts.name}: the catalog has no gfx target for it",
                location=ctx.rig_at(f"{gpu.pointer}/model"),
                subject=subject,
            )
            return
        written = software.rocm if software else None
        release = parse_version(written) if written else None
        if written is None or release is None:
            yield SUPPORT.skipped(
                f"{node.label}: software.rocm not given",
                location=ctx.rig_at(f"{node.pointer}/software"),
                subject=subject,
                fix="add software.rocm (cat /opt/rocm/.info/version)",
            )
            return
        where = ctx.rig_at(f"{node.pointer}/software/rocm")
        row = tables.gfx_row(release)
        if row is None:
            yield SUPPORT.skipped(
                f"ROCm {written}: not in the compatibility tables (ROCm {span(tables.releases())})",
                location=where,
                subject=subject,
            )
            return
        supported, deprecated = tables.supporting(gfx)
        label = f"ROCm {written} on {gpu.facts.name} ({gfx})"
        evidence = {
            "rocm": written,
            "gpu": gpu.facts.name,
            "gfx_target": gfx,
            "listed": list(row["gfx"]),
            "deprecated": list(row.get("deprecated", ())),
            **tables.cite(row),
        }
        if gfx in row["gfx"]:
            limited = gfx in row.get("limited", ())
            if limited:
                evidence["limits"] = row["limited_reason"]
            yield SUPPORT.passed(
                f"{label}: ROCm {short(release)} lists {gfx}"
                + (" (on some operating systems only)" if limited else ""),
                location=where,
                evidence=evidence,
                subject=subject,
            )
            return
        fix = (
            f"a ROCm release that lists {gfx}: {span(supported)}"
            if supported
            else (f"no ROCm release in the tables supports {gfx}")
        )
        if gfx in row.get("deprecated", ()):
            yield SUPPORT.warned(
                f"{label}: deprecated in ROCm {short(release)} (still runs; no new features, and a later release "
                f"drops it)",
                location=where,
                evidence=evidence,
                subject=subject,
                fix=fix,
            )
            return
        dropped = f" (deprecated in {span(deprecated)})" if deprecated else ""
        yield SUPPORT.failed(
            f"{label}: ROCm {short(release)} does not support {gfx}{dropped}: its libraries have no kernels for "
            f"the GPU",
            location=where,
            evidence=evidence,
            subject=subject,
            fix=fix,
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(RocmGpuSupportChecker())
