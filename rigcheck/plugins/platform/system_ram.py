"""PLT001: system RAM of a node against the VRAM of its GPUs (docs/research/rules_facts.md RAM-1)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.instances import next_size
from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.numbers import fmt

SYSTEM_RAM = Rule(
    code="PLT001",
    name="system-ram-below-vram",
    summary="A node has less system RAM than the VRAM of its GPUs",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Compares each node's system RAM (`memory_gib`) with the total memory of its GPUs: warn under "
        "{facts:platform.system_ram.warn_below_ratio:.1f}x, and fail under "
        "{facts:platform.system_ram.staging_fail_below_ratio:.1f}x only when the workload stages model state in "
        "host RAM (CPU or NVMe offload, `offload_params`, or full checkpoints of a ZeRO-3 / FSDP-sharded model, "
        "gathered on the host); pass otherwise (noting when it is under the softer "
        "{facts:platform.system_ram.recommended_ratio:g}x recommendation). A rig checked alone warns at most. "
        "Thresholds are in `specs/rules/platform.yaml` (section `system_ram`); MEM003 sizes the offloaded "
        "states themselves.",
        why="Host RAM holds model weights while they load, pinned buffers for host-to-device copies, data-loader "
        "workers and, with CPU offload, optimizer states. Practitioners size it at least equal to the VRAM of "
        "the node; BLOOM-176B trained on nodes with 0.8x, the lowest known-good ratio.",
        example="```yaml\nnodes:\n  - gpus: {model: H100 SXM, count: 8}   # 8 x 80 GiB = 640 GiB VRAM\n"
        "    memory_gib: 256                     # PLT001 warn: 0.4x (fail with offload: cpu)\n```",
        fix="Fit at least as much RAM as the node's total VRAM (the finding gives the number); twice that leaves "
        "room for CPU offload and large data-loader caches.",
        references=(
            "S. Bekman, ML Engineering, 'CPU memory', "
            "https://github.com/stas00/ml-engineering/blob/master/compute/cpu-memory/README.md",
            "BLOOM: A 176B-Parameter Open-Access Multilingual Language Model, arXiv:2211.05100 (512 GB RAM per "
            "8x A100 80GB node)",
        ),
    ),
)


def host_staging(ctx: CheckContext) -> str | None:
    """Why the workload stages model state in host RAM (CPU/NVMe offload, or a full state dict gathered
    from sharded ranks), or None when it does not."""
    workload = ctx.workload
    if workload is None:
        return None
    par = workload.parallelism
    if par.offload != "none" or par.offload_params:
        what = "parameters and optimizer states" if par.offload_params else "optimizer states"
        return f"the workload offloads {what} to the host ({par.offload})"
    sharded = par.zero == 3 or par.fsdp in ("full_shard", "hybrid_shard")
    checkpoint = workload.run.checkpoint if workload.run is not None else None
    if sharded and checkpoint is not None and checkpoint.kind == "full":
        return "the workload saves full checkpoints of a sharded model, gathered in host RAM"
    return None


class SystemRamChecker(PerNodeChecker):
    name = "platform.system-ram"
    rules = (SYSTEM_RAM,)

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        limits = ctx.facts("platform")["system_ram"]
        fail_below = float(limits["staging_fail_below_ratio"])
        warn_below = float(limits["warn_below_ratio"])
        recommended = float(limits["recommended_ratio"])
        subject = ctx.node_subject(node)
        ram = node.spec.memory_gib
        if not node.gpus:
            yield SYSTEM_RAM.skipped(
                f"{node.label} has no GPUs: nothing to compare its RAM with",
                location=ctx.rig_at(node.pointer),
                subject=subject,
            )
            return
        vram = node.vram_gib_per_node
        gpus = ", ".join(gpu.label for gpu in node.gpus)
        if ram is None:
            yield SYSTEM_RAM.skipped(
                f"{node.label}: memory_gib is not given, so RAM cannot be compared with {fmt(vram)} GiB of VRAM",
                location=ctx.rig_at(node.pointer),
                subject=subject,
                fix=f"add memory_gib to the node (at least {fmt(vram * warn_below)} GiB for {gpus})",
            )
            return
        ratio = ram / vram
        evidence = {
            "ram_gib": ram,
            "vram_gib": vram,
            "gpus": gpus,
            "ratio": round(ratio, 3),
            "formula": "ratio = memory_gib / sum(gpu count x gpu memory_gib)",
            "staging_fail_below_ratio": fail_below,
            "warn_below_ratio": warn_below,
            "recommended_ratio": recommended,
            **limits.cite(),
        }
        where = ctx.rig_at(f"{node.pointer}/memory_gib")
        compared = f"{fmt(ram)} GiB RAM is {fmt(ratio)}x the {fmt(vram)} GiB of VRAM ({gpus})"
        need = vram * warn_below
        fix: str | None = (
            f"fit at least {fmt(need)} GiB of RAM ({fmt(warn_below)}x VRAM); "
            f"{fmt(vram * recommended)} GiB ({fmt(recommended)}x) leaves room for CPU offload"
        )
        size = (
            next_size(node.spec.instance, gpus=node.gpus_per_node, memory_gib=need)
            if node.spec.instance
            else None
        )
        if size is not None:
            fix = f"move to {size.name} ({fmt(size.memory_gib)} GiB RAM, {size.gpus} GPU(s); {size.source})"
        staging = host_staging(ctx)
        evidence["host_staging"] = staging
        severity = SYSTEM_RAM.graded(
            ratio, warn_at=warn_below, fail_at=fail_below if staging else None, higher_is_worse=False
        )
        if severity is Severity.FAIL:
            message = f"{compared}, under {fmt(fail_below)}x, and {staging}"
        elif severity is Severity.WARN:
            use = (
                f"; {staging}"
                if staging
                else "; enough for GPU-resident training and inference, short for CPU offload or loading "
                "a full state dict"
            )
            message = f"{compared}, under {fmt(warn_below)}x{use}"
        else:
            note = f" (under the {fmt(recommended)}x some builders recommend)" if ratio < recommended else ""
            message, fix = compared + note, None
        yield SYSTEM_RAM.finding(
            severity, f"{node.label}: {message}", location=where, evidence=evidence, fix=fix, subject=subject
        )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(SystemRamChecker())
