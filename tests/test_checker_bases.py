"""The checker base classes own the walk (issue 16): each calls its leaf method once per node group,
GPU type, workload or piece of evidence, and ``Rule.graded`` is the one verdict ladder."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

import rigcheck
from rigcheck.core.engine.findings import Severity

RULE = rigcheck.Rule(
    code="TEST901",
    name="walk-probe",
    summary="Records what the walk visits",
    severity=Severity.WARN,
    docs=rigcheck.RuleDocs(what="-", why="-", example="-", fix="-"),
)

RIG = textwrap.dedent(
    """\
    apiVersion: rigcheck/v1
    kind: Rig
    name: two-groups
    nodes:
      - name: cpu-only
        memory_gib: 64
      - name: mixed
        count: 2
        gpus:
          - {model: RTX 4090, count: 2}
          - {model: L40S, count: 1}
      - name: h100
        gpus: {model: H100 SXM, count: 8}
    """
)
WORKLOAD = textwrap.dedent(
    """\
    apiVersion: rigcheck/v1
    kind: Workload
    name: small
    model: {preset: gpt2-124m}
    task: pretrain
    """
)


def _context(rig: str = RIG, workload: str | None = WORKLOAD, evidence: tuple[Any, ...] = ()) -> Any:
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.engine.plugin_manager import PluginHost
    from rigcheck.core.spec.documents import parse_spec

    catalog = build_catalog(PluginHost(autoload=False).load())
    rig_doc = parse_spec(rig, "rig.yaml")
    workload_doc = parse_spec(workload, "workload.yaml") if workload else None
    return CheckContext(rig_doc, workload_doc, catalog, evidence=evidence)


class Nodes(rigcheck.PerNodeChecker):
    name = "test.nodes"
    rules = (RULE,)

    def check_node(self, ctx: Any, node: Any) -> Iterator[rigcheck.Finding]:
        yield RULE.passed(node.label)


class Gpus(rigcheck.PerGpuTypeChecker):
    name = "test.gpus"
    rules = (RULE,)

    def check_gpu(self, ctx: Any, node: Any, gpu: Any) -> Iterator[rigcheck.Finding]:
        yield RULE.passed(f"{node.label}: {gpu.facts.name} x{gpu.count}")


class OnRig(rigcheck.WorkloadOnRigChecker):
    name = "test.on-rig"
    rules = (RULE,)

    def check_workload(self, ctx: Any, workload: Any, node: Any) -> Iterator[rigcheck.Finding]:
        yield RULE.passed(f"{workload.name} on {node.label if node else None}")


class Measured(rigcheck.EvidenceChecker):
    name = "test.evidence"
    rules = (RULE,)

    def check_evidence(self, ctx: Any, evidence: Any, node: Any) -> Iterator[rigcheck.Finding]:
        yield RULE.passed(f"{evidence.source} from {node.label if node else None}")


def _messages(checker: rigcheck.Checker, ctx: Any) -> list[str]:
    return [finding.message for finding in checker.check(ctx)]


def test_per_node_walks_every_node_group_once() -> None:
    ctx = _context()
    assert _messages(Nodes(), ctx) == [node.label for node in ctx.nodes]
    assert len(ctx.nodes) == 3


def test_gpu_nodes_only_leaves_out_the_groups_without_gpus() -> None:
    class GpuNodes(Nodes):
        gpu_nodes_only = True

    ctx = _context()
    assert _messages(GpuNodes(), ctx) == [node.label for node in ctx.nodes if node.gpus]
    assert len(_messages(GpuNodes(), ctx)) == 2


def test_per_gpu_type_walks_each_gpu_model_of_each_group() -> None:
    """The CPU-only group has none; the mixed group has two GPU types; the H100 group one: 3 calls."""
    messages = _messages(Gpus(), _context())
    assert len(messages) == 3
    assert [m.split(": ")[1] for m in messages] == [
        "NVIDIA GeForce RTX 4090 x2",
        "NVIDIA L40S x1",
        "NVIDIA H100 SXM5 80GB x8",
    ]


def test_workload_on_rig_runs_once_on_the_first_gpu_node() -> None:
    ctx = _context()
    assert ctx.first_gpu_node is ctx.nodes[1]  # the CPU-only group is skipped
    assert OnRig.needs_workload is True
    assert _messages(OnRig(), ctx) == [f"small on {ctx.nodes[1].label}"]
    cpu_only = _context("apiVersion: rigcheck/v1\nkind: Rig\nname: c\nnodes: [{name: c, memory_gib: 8}]\n")
    assert cpu_only.first_gpu_node is None
    assert _messages(OnRig(), cpu_only) == ["small on None"]
    assert _messages(OnRig(), _context(workload=None)) == []


def test_evidence_checker_matches_each_piece_to_its_node_group() -> None:
    from rigcheck.evidence.model import Evidence

    pieces = (Evidence(source="a.xml", tool="nvidia-smi-xml"), Evidence(source="b.txt", tool="nccl-tests"))
    ctx = _context(evidence=pieces)
    assert Measured.needs_evidence is True
    # no host name: the evidence goes to the first GPU group
    assert _messages(Measured(), ctx) == [
        f"a.xml from {ctx.nodes[1].label}",
        f"b.txt from {ctx.nodes[1].label}",
    ]


def test_estimates_are_memoised_per_gpu() -> None:
    ctx = _context()
    node = ctx.first_gpu_node
    first, second = node.gpus
    assert ctx.estimate_for(node, first) is ctx.estimate_for(node, first)
    assert ctx.estimate() is ctx.estimate_for(node, first)
    assert ctx.estimate_for(node, second) is not ctx.estimate_for(node, first)
    assert ctx.estimate_on(node, first) is ctx.estimate_on(node, first)
    assert _context(workload=None).estimate() is None


@pytest.mark.parametrize(
    ("value", "kwargs", "expected"),
    [
        # higher is worse: FAIL above fail_at, WARN above warn_at, PASS at or below it
        (0.79, {"warn_at": 0.8, "fail_at": 1.0}, Severity.PASS),
        (0.80, {"warn_at": 0.8, "fail_at": 1.0}, Severity.PASS),
        (0.80, {"warn_at": 0.8, "fail_at": 1.0, "inclusive": True}, Severity.WARN),
        (0.95, {"warn_at": 0.8, "fail_at": 1.0}, Severity.WARN),
        (1.00, {"warn_at": 0.8, "fail_at": 1.0}, Severity.WARN),
        (1.00, {"warn_at": 0.8, "fail_at": 1.0, "inclusive": True}, Severity.FAIL),
        (1.01, {"warn_at": 0.8, "fail_at": 1.0}, Severity.FAIL),
        (5.00, {"warn_at": None, "fail_at": 1.0}, Severity.FAIL),
        (5.00, {"warn_at": 0.8}, Severity.WARN),
        # lower is worse (a RAM ratio: warn under 1.0x, fail under 0.8x)
        (0.79, {"warn_at": 1.0, "fail_at": 0.8, "higher_is_worse": False}, Severity.FAIL),
        (0.80, {"warn_at": 1.0, "fail_at": 0.8, "higher_is_worse": False}, Severity.WARN),
        (0.99, {"warn_at": 1.0, "fail_at": 0.8, "higher_is_worse": False}, Severity.WARN),
        (1.00, {"warn_at": 1.0, "fail_at": 0.8, "higher_is_worse": False}, Severity.PASS),
        (1.00, {"warn_at": 1.0, "fail_at": 0.8, "higher_is_worse": False, "inclusive": True}, Severity.WARN),
    ],
)
def test_graded_is_the_ladder(value: float, kwargs: dict[str, Any], expected: Severity) -> None:
    assert RULE.graded(value, **kwargs) is expected


@pytest.mark.parametrize(
    ("severity", "fix"),
    [(Severity.PASS, None), (Severity.WARN, "do this"), (Severity.FAIL, "do this")],
)
def test_judged_keeps_the_fix_only_when_something_is_wrong(severity: Severity, fix: str | None) -> None:
    finding = RULE.judged(severity, "told", fix="do this", subject="s")
    assert (finding.severity, finding.fix, finding.message, finding.subject) == (severity, fix, "told", "s")


def test_rule_docs_name_their_thresholds_from_the_data() -> None:
    """PWR001's page says "warn above 80%" because power.yaml says 0.80; a project override follows."""
    from rigcheck.core.catalog.facts import load_rule_facts
    from rigcheck.plugins.power.psu_sustained import PSU_LOAD

    assert "{facts:power.sustained.warn_above_fraction:.0%}" in PSU_LOAD.docs.what
    shipped = PSU_LOAD.docs.resolved().what
    assert (
        "warn above 80%, fail above 100%" in shipped and "(100 W for board" in shipped and "0.7 x" in shipped
    )
    sections = dict(load_rule_facts("power"))
    sections["sustained"] = sections["sustained"].overridden("warn_above_fraction", 0.85, ".rigcheck.yaml")
    overridden = PSU_LOAD.docs.resolved(
        lambda name: sections if name == "power" else load_rule_facts(name)
    ).what
    assert "warn above 85%, fail above 100%" in overridden
    assert RULE.docs.resolved() is RULE.docs  # no placeholder: the same object
