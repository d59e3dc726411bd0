"""PLT008: passive datacenter cards need ducted server airflow (docs/research/rules_facts.md COOL-4)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

PASSIVE = Rule(
    code="PLT008",
    name="passive-gpu-in-desktop-case",
    summary="A passively cooled datacenter card sits in a desktop case without server airflow",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Fails a card whose cooler is passive (A100/H100/L40S PCIe, T4, A2...) in a chassis whose form "
        "factor is a desktop one (tower, small form factor, workstation, mini PC) unless `chassis.airflow` "
        "is `server-ducted`; passes in rackmount servers.",
        why="Passive cards have no fan: NVIDIA's product briefs say they require system airflow. In a desktop "
        "case they throttle within minutes and shut down.",
        example="```yaml\ngpus: {model: NVIDIA A100 PCIe 80GB}\nchassis: {form_factor: mid-tower}   # PLT008\n```",
        fix="A server chassis with ducted airflow, a certified workstation with the vendor's GPU shroud and fans, "
        "or an actively cooled card (RTX 6000 Ada, RTX A6000).",
        references=(
            "NVIDIA A100 PCIe product brief, https://docslib.org/doc/3015592",
            "NVIDIA H100 PCIe product brief PB-11133-001",
        ),
    ),
)


class PassiveCoolingChecker(PerNodeChecker):
    name = "platform.passive-cooling"
    rules = (PASSIVE,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        section = ctx.facts("platform")["passive_cooling"]
        desktop = set(section["desktop_form_factors"])
        passive = [gpu for gpu in node.gpus if gpu.fact("cooler").value == "passive"]
        if not passive:
            return
        subject = ctx.node_subject(node)
        chassis = node.spec.chassis
        where = ctx.rig_at(f"{passive[0].pointer}/model")
        names = ", ".join(gpu.facts.name for gpu in passive)
        if passive[0].facts.form_factor in ("SXM", "OAM"):
            yield PASSIVE.passed(
                f"{node.label}: {names} is a server module cooled by its baseboard's fans",
                location=where,
                subject=subject,
            )
            return
        if chassis is None or chassis.form_factor is None:
            yield PASSIVE.skipped(
                f"{node.label}: passive {names}, chassis form factor not given",
                location=where,
                subject=subject,
                fix="add chassis.form_factor (rackmount for a server)",
            )
            return
        evidence = {
            "cards": names,
            "form_factor": chassis.form_factor,
            "airflow": chassis.airflow,
            **section.cite(),
        }
        if chassis.form_factor in desktop and chassis.airflow != "server-ducted":
            yield PASSIVE.failed(
                f"{node.label}: passive {names} in a {chassis.form_factor} without server airflow",
                location=where,
                evidence=evidence,
                subject=subject,
                fix="a rackmount server with ducted airflow, or an actively cooled card",
            )
        else:
            yield PASSIVE.passed(
                f"{node.label}: passive {names} in a {chassis.form_factor}"
                + (" with ducted airflow" if chassis.airflow == "server-ducted" else ""),
                location=where,
                evidence=evidence,
                subject=subject,
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(PassiveCoolingChecker())
