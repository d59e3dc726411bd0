"""PLT010: several PSUs feeding one chassis without a start-sync adapter (docs/research/rules_facts.md COOL-6)."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import PerNodeChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs

SYNC = Rule(
    code="PLT010",
    name="multiple-psus-without-sync",
    summary="Several consumer PSUs feed one machine without a sync adapter",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Warns when a node that is not a redundant server has more than one PSU and `sync_adapter` is not "
        "true on them.",
        why="A second ATX PSU must switch on with the first (an add2psu-style adapter); GPUs fed by a PSU that "
        "is off while the board is on back-feed through the slot. Builders of multi-4090 frames pair one PSU "
        "per GPU pair and start them together; mixing PSUs on one card's power path is 'uncharted territory'.",
        example="```yaml\npsu: {watts: 1000, count: 4}   # PLT010 unless sync_adapter: true\n```",
        fix="Fit a multi-PSU sync adapter and set `sync_adapter: true`; feed each card's plugs and risers from one "
        "PSU only.",
        references=("https://mov-axbx.com/wopr/wopr_power.html",),
    ),
)


class MultiPsuSyncChecker(PerNodeChecker):
    name = "platform.multi-psu-sync"
    rules = (SYNC,)
    physical_build = True

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterator[Finding]:
        psus = node.spec.psu or []
        units = sum(psu.count for psu in psus)
        if units <= 1 or any(psu.redundancy for psu in psus):
            return
        subject = ctx.node_subject(node)
        where = ctx.rig_at(f"{node.pointer}/psu")
        if all(psu.sync_adapter for psu in psus):
            yield SYNC.passed(
                f"{node.label}: {units} PSUs started together by a sync adapter",
                location=where,
                subject=subject,
            )
        else:
            yield SYNC.warned(
                f"{node.label}: {units} PSUs without a declared sync adapter",
                location=where,
                subject=subject,
                evidence={"psus": units},
                fix="fit a multi-PSU sync adapter (set sync_adapter: true) and power each card "
                "and its riser from a single PSU",
            )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(MultiPsuSyncChecker())
