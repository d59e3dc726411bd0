"""PLT009: laptop GPUs on multi-day runs (docs/research/rules_facts.md COOL-5)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.spec.numbers import fmt

LAPTOP = Rule(
    code="PLT009",
    name="laptop-gpu-long-run",
    summary="A multi-day run on a laptop GPU",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Warns when the workload's `run.hours` exceeds {facts:platform.laptop_gpu.warn_above_hours} on a laptop "
        "GPU (catalog form factor `laptop`).",
        why="Laptop GPUs are different silicon at a fraction of the power (RTX 4090 Laptop: AD103 at 80-150 W "
        "against the desktop card's AD102 at 450 W) and hold their clocks only as long as the chassis can "
        "shed the heat; an 80 W part loses 20% or more on sustained loads.",
        example="```yaml\nrun: {hours: 72}   # on an RTX 4090 Laptop GPU: PLT009\n```",
        fix="Run long jobs on a desktop or cloud GPU; on the laptop, set a conservative power limit and keep it "
        "plugged in on a cooling stand.",
        references=("https://data-check.eu/en/nvidia-geforce-rtx-4090-laptop-gpu/",),
    ),
)


class LaptopGpuChecker(PerNodeChecker):
    name = "platform.laptop-gpu"
    rules = (LAPTOP,)
    needs_workload = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        section = ctx.facts("platform")["laptop_gpu"]
        limit = float(section["warn_above_hours"])
        laptops = [
            gpu for gpu in node.gpus if gpu.facts.form_factor == "laptop" or gpu.facts.segment == "laptop"
        ]
        if not laptops or ctx.workload is None:
            return
        run = ctx.workload.run
        hours = run.hours if run else None
        gpu = laptops[0]
        subject = f"{ctx.subject} on {gpu.facts.name}"
        where = ctx.workload_at("/run/hours")
        evidence = {
            "run_hours": hours,
            "warn_above_hours": limit,
            "gpu": gpu.facts.name,
            **section.cite(),
        }
        if hours is None:
            yield LAPTOP.skipped(f"{gpu.facts.name}: run.hours not given", location=where, subject=subject)
        elif LAPTOP.graded(hours, warn_at=limit) is Severity.WARN:
            yield LAPTOP.warned(
                f"{fmt(hours)} h run on the {gpu.facts.name}, over {fmt(limit)} h",
                location=where,
                evidence=evidence,
                subject=subject,
                fix="move the run to a desktop or cloud GPU, or limit power and cool the laptop",
            )
        else:
            yield LAPTOP.passed(
                f"{fmt(hours)} h run on the {gpu.facts.name}",
                location=where,
                evidence=evidence,
                subject=subject,
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(LaptopGpuChecker())
