"""Which node group of the rig a piece of evidence describes, and what the rig expects of it."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.catalog.catalog import CatalogLookupError, normalize_name
from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
from rigcheck.evidence.model import Evidence, GpuEvidence


def evidence_node(ctx: CheckContext, evidence: Evidence) -> NodeView | None:
    """The node group ``evidence`` came from: by host name, else the only GPU group, else the group
    whose GPU count matches, else the first GPU group."""
    groups = [node for node in ctx.nodes if node.gpus]
    if not groups:
        return None
    host = (evidence.host or "").lower()
    if host:
        for node in groups:
            names = [name.lower() for name in (node.spec.hostnames or ())]
            if host in names or (node.spec.name or "").lower() == host.split(".")[0]:
                return node
    if len(groups) == 1:
        return groups[0]
    count = len(evidence.gpus) or evidence.gpu_count
    return next((node for node in groups if node.gpus_per_node == count), groups[0])


def gpu_view_for(ctx: CheckContext, node: NodeView, gpu: GpuEvidence) -> GpuView | None:
    """The rig's GPU group a measured GPU belongs to (by catalog identity of its name)."""
    if gpu.name:
        try:
            facts = ctx.catalog.lookup(gpu.name)
        except CatalogLookupError:
            facts = None
        if facts is not None:
            for view in node.gpus:
                if view.facts.id == facts.id:
                    return view
        key = normalize_name(gpu.name)
        for view in node.gpus:
            if normalize_name(view.facts.name) in key or key in normalize_name(view.facts.name):
                return view
    return node.gpus[0] if len(node.gpus) == 1 else None


def with_gpus(ctx: CheckContext) -> Iterator[tuple[Evidence, NodeView]]:
    """Evidence that lists GPUs, with the node group it belongs to."""
    for evidence in ctx.evidence:
        if evidence.gpus:
            node = evidence_node(ctx, evidence)
            if node is not None:
                yield evidence, node


def where(evidence: Evidence, detail: str = "") -> str:
    """``nvidia-smi-xml evidence/node1.xml`` for messages."""
    return f"{evidence.tool} {evidence.source}{detail}"
