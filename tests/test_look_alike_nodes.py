"""Issue 45: every node is checked. Nodes written alike once got the first one's findings copied onto
them (node stamping, after checking only the second and last), so a third-party per-node rule that reads
the node's name judged ``GPU-C`` by ``gpu-a``. A node group with ``count:`` is still the spec's way to
say "identical", checked once."""

from __future__ import annotations

import rigcheck
from rigcheck import PerNodeChecker, Rule, RuleDocs, Severity
from rigcheck.testing import run

LOWER = Rule(
    code="NAME001",
    name="node-name-lower-case",
    summary="Node names are lower case",
    severity=Severity.FAIL,
    docs=RuleDocs(what="w", why="y", example="e", fix="f"),
)


class LowerCaseNames(PerNodeChecker):
    name = "lower-case-names"
    rules = (LOWER,)

    def check_node(self, ctx, node):  # type: ignore[no-untyped-def]
        where = ctx.rig_at(node.pointer + "/name")
        if node.written_name == node.written_name.lower():
            yield LOWER.passed(f"{node.label} is lower case", location=where)
        else:
            yield LOWER.failed(f"{node.label} is not lower case", location=where)


class Plugin:
    @rigcheck.hookimpl
    def rigcheck_checkers(self, register):  # type: ignore[no-untyped-def]
        register(LowerCaseNames())


NODE = "  - name: {name}\n    gpus: {{model: H100 SXM, count: 8}}\n    gpu_interconnect: {{kind: nvswitch}}\n"


def test_each_of_four_look_alike_nodes_gets_its_own_verdict() -> None:
    names = ["gpu-a", "gpu-b", "GPU-C", "gpu-d"]
    rig = "apiVersion: rigcheck/v1\nkind: Rig\nname: alike\nnodes:\n" + "".join(
        NODE.format(name=name) for name in names
    )
    result = run(rig, plugins=[Plugin()], select=["NAME"], builtins=False)
    verdicts = {
        finding.message.split()[1]: finding.severity.value
        for finding in result.report.findings
        if finding.code == "NAME001"
    }
    assert verdicts == {"gpu-a": "pass", "gpu-b": "pass", "GPU-C": "fail", "gpu-d": "pass"}
    lines = [f.location.line for f in result.report.findings if f.code == "NAME001" and f.location]
    assert lines == sorted(set(lines)) and len(lines) == 4  # each at its own node's name


def test_look_alike_nodes_each_have_the_findings_of_one_node_alone() -> None:
    """Five alike nodes: each built-in per-node rule's findings, node by node, are those of a rig of
    that one node (its own name and pointer)."""
    one = run("apiVersion: rigcheck/v1\nkind: Rig\nname: alike\nnodes:\n" + NODE.format(name="n0"))
    five = run(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: alike\nnodes:\n"
        + "".join(NODE.format(name=f"n{i}") for i in range(5))
    )
    per_node = [
        (f.code, f.severity.value, f.message)
        for f in one.report.findings
        if f.location and f.location.pointer.startswith("/nodes/0")
    ]
    assert per_node
    for index in range(5):
        own = [
            (f.code, f.severity.value, f.message.replace(f"n{index}", "n0"))
            for f in five.report.findings
            if f.location and f.location.pointer.startswith(f"/nodes/{index}")
        ]
        assert own == per_node, index
