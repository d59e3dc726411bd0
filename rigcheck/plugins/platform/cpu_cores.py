"""PLT002: CPU cores for one process per GPU plus its data-loader workers (docs/research/rules_facts.md CPU-1)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.catalog.instances import next_size
from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

CPU_CORES = Rule(
    code="PLT002",
    name="cpu-cores-below-data-loader-need",
    summary="A node has fewer CPU cores than its GPU processes and their data-loader workers need",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Checks `cores >= processes x (num_workers + 1) + reserve` for each node: one core per GPU process, "
        "one per data-loader worker, and a reserve for the OS, launcher and logging that grows with the node "
        "(half a core per GPU process, at least one: four on an 8-GPU node, as in Bekman's rule). Processes "
        "are the GPUs of the node (or fewer, when the workload's dp x tp x pp x cp is smaller); workers come "
        "from the workload's `data.num_workers`, else {facts:platform.cpu_cores.default_workers_per_gpu} per GPU "
        "for training and {facts:platform.cpu_cores.inference_workers_per_gpu} for inference. For a cloud "
        "instance (`instance:`) the fix names the family's next size with enough cores. Numbers are in "
        "`specs/rules/platform.yaml` (section `cpu_cores`) and `specs/hardware/instances.yaml`.",
        why="Data loading, tokenisation and augmentation run on the CPU. Too few cores starve the GPUs: Puget "
        "Systems' quad-RTX 3090 workstation with a 10-core Xeon was CPU-bound in one of its tests.",
        example="```yaml\nnodes:\n  - gpus: {model: RTX 3090, count: 4}\n    cpu: {cores: 10}   # PLT002 warn: "
        "4 x (2 + 1) + 2 = 14 cores needed\n```",
        fix="Choose a CPU with at least the number of cores the finding gives, or lower `data.num_workers` to the "
        "largest value that fits.",
        references=(
            "S. Bekman, ML Engineering, 'CPU', https://github.com/stas00/ml-engineering/blob/master/compute/cpu/README.md",
            "Puget Systems quad RTX 3090 test, as reported by thefpsreview.com (2020-10-22)",
        ),
    ),
)


class CpuCoresChecker(PerNodeChecker):
    name = "platform.cpu-cores"
    rules = (CPU_CORES,)

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        facts = ctx.facts("platform")["cpu_cores"]
        per_gpu, least = float(facts["reserved_cores_per_gpu"]), int(facts["reserved_cores_min"])
        workers, workers_from = _workers(ctx, facts)
        subject = ctx.node_subject(node)
        processes, processes_from = _processes(ctx, node)
        if processes == 0:
            yield CPU_CORES.skipped(
                f"{node.label} has no GPUs: no GPU processes to feed",
                location=ctx.rig_at(node.pointer),
                subject=subject,
            )
            return
        reserved = max(least, math.ceil(per_gpu * processes))
        need = processes * (workers + 1) + reserved
        cores = node.spec.cpu.cores if node.spec.cpu else None
        if cores is None:
            yield CPU_CORES.skipped(
                f"{node.label}: cpu.cores is not given; {processes} GPU processes with {workers} workers each "
                f"need {need} cores",
                location=ctx.rig_at(f"{node.pointer}/cpu"),
                subject=subject,
                fix=f"add cpu.cores (physical cores of all sockets) to the node; {need} or more passes",
            )
            return
        evidence = {
            "cores": cores,
            "processes": processes,
            "processes_from": processes_from,
            "workers_per_process": workers,
            "workers_from": workers_from,
            "reserved_cores": reserved,
            "required_cores": need,
            # names the shipped values even when a project config overrides them (kept as it was)
            "formula": "processes x (workers + 1) + max(1, ceil(0.5 x processes))",
            **facts.cite(),
        }
        where = ctx.rig_at(f"{node.pointer}/cpu/cores")
        noun = "process" if processes == 1 else "processes"
        compared = (
            f"{cores} cores for {processes} GPU {noun} x ({workers} workers + 1) + {reserved} = {need} needed"
        )
        if cores < need:
            fitting = max((cores - reserved) // processes - 1, 0)
            yield CPU_CORES.warned(
                f"{node.label}: {compared}",
                location=where,
                evidence=evidence,
                subject=subject,
                fix=f"{_more_cores(node, need)}, or set data.num_workers to {fitting} "
                f"(the most that {cores} cores feed)",
            )
        else:
            yield CPU_CORES.passed(
                f"{node.label}: {compared}", location=where, evidence=evidence, subject=subject
            )


def _more_cores(node: NodeView, need: int) -> str:
    """Where the cores come from: the next size of a cloud instance, else a CPU with more cores."""
    instance = node.spec.instance
    if instance:
        size = next_size(instance, gpus=node.gpus_per_node, cores=need)
        if size is not None:
            return (
                f"move to {size.name} ({size.vcpus} vCPUs = {size.cores} cores, {size.gpus} GPU(s); "
                f"{size.source})"
            )
        return f"a larger size of {instance} with at least {need} physical cores ({2 * need} vCPUs)"
    return f"use a CPU with at least {need} cores"


def _workers(ctx: CheckContext, facts: FactSection) -> tuple[int, str]:
    """Data-loader workers per GPU process, and where that number came from."""
    workload = ctx.workload
    if workload is not None and workload.data is not None and workload.data.num_workers is not None:
        return workload.data.num_workers, "workload data.num_workers"
    if workload is not None and workload.task == "inference":
        return int(facts["inference_workers_per_gpu"]), "inference default"
    default = int(facts["default_workers_per_gpu"])
    return default, f"default for training ({default} per GPU)"


def _processes(ctx: CheckContext, node: NodeView) -> tuple[int, str]:
    """GPU processes on the node (its GPUs, or the workload's world size when smaller), and why."""
    gpus = node.gpus_per_node
    workload = ctx.workload
    if workload is None:
        return gpus, "GPUs in the node"
    world = workload.parallelism.world_size
    if world < gpus:
        return world, "workload dp x tp x pp x cp"
    return gpus, "GPUs in the node"


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(CpuCoresChecker())
