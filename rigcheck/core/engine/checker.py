"""The base classes of checkers: a name, the rules it owns, and ``check(ctx)`` yielding findings.

:class:`Checker` is the plain base. The others own the walk, so that a checker holds only its rule
(after Checkov's ``BaseK8sContainerCheck``, whose leaf check is one method):

- :class:`PerNodeChecker`: ``check_node(ctx, node)`` for each node group of the rig;
- :class:`PerGpuTypeChecker`: ``check_gpu(ctx, node, gpu)`` for each GPU type of each node group;
- :class:`WorkloadOnRigChecker`: ``check_workload(ctx, workload, node)`` once, on the rig's first
  node group with GPUs (``None`` when it has none), for rules about a workload on the rig;
- :class:`EvidenceChecker`: ``check_evidence(ctx, evidence, node)`` for each piece of measured
  evidence, with the node group it describes (``None`` when the rig has no GPU node).

Verdict ladders go through :meth:`rigcheck.Rule.graded`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from rigcheck.core.engine.rules import Rule

if TYPE_CHECKING:
    from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
    from rigcheck.core.engine.findings import Finding
    from rigcheck.core.spec.models.workload import Workload
    from rigcheck.evidence.model import Evidence


class Checker:
    """Subclass and set ``name`` and ``rules``; implement :meth:`check`.

    Checkers never read files, print or exit: they read the resolved context and yield findings
    built with their own rules (``RULE.failed(...)``). They report what passed and what could not
    be checked as well as what failed, so that a report reads as a complete checklist.
    """

    #: Unique, kebab-case; shown in reports (``"platform.system-ram"``).
    name: ClassVar[str] = ""
    #: The rules whose findings this checker yields.
    rules: ClassVar[tuple[Rule, ...]] = ()
    #: True when the checker compares a workload with the rig (skipped for a rig alone).
    needs_workload: ClassVar[bool] = False
    #: True when the checker compares measured evidence (``--evidence``) with the rig (skipped without).
    needs_evidence: ClassVar[bool] = False
    #: Seconds before the engine gives up on this checker (``None``: the engine's default).
    timeout_s: ClassVar[float | None] = None
    #: True when the rules concern how a machine is built (power supplies, wall circuits, the case, slots,
    #: cables, airflow): a cloud instance's provider owns those, so its node groups (``instance:``, or
    #: ``chassis.form_factor: cloud``) are not walked, and a rig of cloud instances only skips the checker.
    physical_build: ClassVar[bool] = False
    #: The GPU vendor whose software stack the rules concern (``"nvidia"``: the CUDA rules; ``"amd"``: the
    #: ROCm rules): node groups without such a GPU are not walked, nor other vendors' GPUs, and a rig with
    #: none skips the checker as not applicable. ``None``: any GPU.
    gpu_vendor: ClassVar[str | None] = None

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        raise NotImplementedError(f"{type(self).__name__}.check")

    def walked_nodes(self, ctx: CheckContext) -> list[NodeView]:
        """The node groups this checker's rules concern: all of them, less the cloud instances for a
        ``physical_build`` checker, and only those with a ``gpu_vendor`` GPU for a checker that names one."""
        nodes = list(ctx.built_nodes) if self.physical_build else list(ctx.nodes)
        if self.gpu_vendor is None:
            return nodes
        return [node for node in nodes if any(gpu.facts.vendor == self.gpu_vendor for gpu in node.gpus)]

    def walked_gpus(self, node: NodeView) -> list[GpuView]:
        """The node group's GPU types this checker's rules concern: those of its ``gpu_vendor``, or all."""
        if self.gpu_vendor is None:
            return list(node.gpus)
        return [gpu for gpu in node.gpus if gpu.facts.vendor == self.gpu_vendor]


class PerNodeChecker(Checker):
    """A checker whose rules look at one node group at a time: implement :meth:`check_node`."""

    #: True when the rules concern GPU nodes only: node groups without GPUs are not walked.
    gpu_nodes_only: ClassVar[bool] = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        for node in self.walked_nodes(ctx):
            if node.gpus or not self.gpu_nodes_only:
                yield from self.check_node(ctx, node)

    def check_node(self, ctx: CheckContext, node: NodeView) -> Iterable[Finding]:
        raise NotImplementedError(f"{type(self).__name__}.check_node")


class PerGpuTypeChecker(Checker):
    """A checker whose rules look at one GPU type of one node group at a time (a node group with two
    GPU models is checked twice): implement :meth:`check_gpu`."""

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        for node in self.walked_nodes(ctx):
            for gpu in self.walked_gpus(node):
                yield from self.check_gpu(ctx, node, gpu)

    def check_gpu(self, ctx: CheckContext, node: NodeView, gpu: GpuView) -> Iterable[Finding]:
        raise NotImplementedError(f"{type(self).__name__}.check_gpu")


class WorkloadOnRigChecker(Checker):
    """A checker of a workload on the rig (skipped for a rig alone): :meth:`check_workload` runs once,
    with the rig's first node group that has GPUs (``ctx.first_gpu_node``), or ``None``."""

    needs_workload: ClassVar[bool] = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        workload = ctx.workload
        if workload is None:  # the engine skips a needs_workload checker before this
            return
        yield from self.check_workload(ctx, workload, ctx.first_gpu_node)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterable[Finding]:
        raise NotImplementedError(f"{type(self).__name__}.check_workload")


class EvidenceChecker(Checker):
    """A checker of measured evidence (``--evidence``; skipped without): :meth:`check_evidence` runs
    for each piece, with the node group it describes (:func:`rigcheck.evidence.match.evidence_node`:
    by host name, else by GPU count, else the first GPU group; ``None`` when the rig has none)."""

    needs_evidence: ClassVar[bool] = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        from rigcheck.evidence.match import evidence_node

        for evidence in ctx.evidence:
            yield from self.check_evidence(ctx, evidence, evidence_node(ctx, evidence))

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterable[Finding]:
        raise NotImplementedError(f"{type(self).__name__}.check_evidence")
