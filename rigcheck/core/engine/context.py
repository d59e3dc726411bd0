"""The resolved context checkers read: specs, catalog facts merged with rig overrides, positions.

Building the context resolves every GPU name against the catalog (an unknown name is an error at
its line) and merges the catalog's facts with the rig's own fields; the rig wins, so a user's
power limit or card length replaces the reference card's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rigcheck.core.catalog.catalog import Catalog, CatalogLookupError
from rigcheck.core.catalog.facts import FactSection, load_rule_facts
from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.engine.findings import Location
from rigcheck.core.engine.views import Fact, GpuView, NodeView
from rigcheck.core.spec import spec_codes
from rigcheck.core.spec.documents import SpecDocument, problem_at
from rigcheck.core.spec.frozen import FrozenDict
from rigcheck.core.spec.models.rig import Rig
from rigcheck.core.spec.models.workload import Workload

__all__ = ["CheckContext", "Fact", "GpuView", "NodeView", "resolve_model"]

if TYPE_CHECKING:
    from rigcheck.core.engine.rig_estimate import RigEstimate
    from rigcheck.core.estimate.architecture import Architecture
    from rigcheck.core.estimate.estimate import WorkloadEstimate


class CheckContext:
    """Everything a checker may read. Checkers must not change it."""

    def __init__(
        self,
        rig_doc: SpecDocument,
        workload_doc: SpecDocument | None,
        catalog: Catalog,
        fact_overrides: Mapping[str, tuple[Any, str]] | None = None,
        *,
        evidence: Sequence[Any] = (),
        plugin_configs: Mapping[str, Any] | None = None,
        selection: Callable[[str], bool] | None = None,
    ) -> None:
        self._selection = selection
        #: Measured facts (:class:`rigcheck.evidence.model.Evidence`) given with ``--evidence``.
        self.evidence = list(evidence)
        self._plugin_configs = dict(plugin_configs or {})
        self._plugin_config_copies: dict[str, Any] = {}
        self.rig_doc = rig_doc
        self.workload_doc = workload_doc
        self.catalog = catalog
        self.fact_overrides = dict(fact_overrides or {})
        self.nodes = _resolve_nodes(rig_doc, catalog)
        #: The workload's model architecture (``None`` exactly when there is no workload).
        self.arch: Architecture | None = resolve_model(workload_doc) if workload_doc is not None else None

    @property
    def rig(self) -> Rig:
        return self.rig_doc.model

    def selected(self, code: str) -> bool:
        """Whether this run reports rule ``code`` (``--select``, ``--ignore`` and the project config's
        selection). A checker with several rules may skip the work only a deselected one needs; the
        findings of a deselected rule are dropped either way, so this decides no verdict."""
        return self._selection is None or self._selection(code)

    @property
    def workload(self) -> Workload | None:
        return self.workload_doc.model if self.workload_doc is not None else None

    @property
    def documents(self) -> list[SpecDocument]:
        return [doc for doc in (self.rig_doc, self.workload_doc) if doc is not None]

    @cached_property
    def built_nodes(self) -> list[NodeView]:
        """The node groups that are not cloud instances (what a ``physical_build`` checker walks)."""
        return [node for node in self.nodes if not node.hosted]

    @cached_property
    def subject(self) -> str:
        """``"rig home-2x3090"`` or ``"home-2x3090 + qwen-1.8b-law-lora"``."""
        if self.workload_doc is None:
            return f"rig {self.rig.name}"
        return f"{self.rig.name} + {self.workload_doc.model.name}"

    @property
    def plugin_config(self) -> Any:
        """The validated config of the running checker's plugin (the model it registered with
        ``rigcheck_config_schema``, filled from the project config's ``plugins-config`` and
        ``thresholds``, else its defaults); ``None`` for a plugin without a config model. One copy per
        context and plugin: what a checker changes in it reaches no other run."""
        from rigcheck.core.engine.rules import CURRENT_CHECKER

        plugin = CURRENT_CHECKER.get()[1]
        if plugin not in self._plugin_config_copies:
            value = self._plugin_configs.get(plugin)
            copy = getattr(value, "model_copy", None)
            self._plugin_config_copies[plugin] = copy(deep=True) if copy is not None else value
        return self._plugin_config_copies[plugin]

    def node_subject(self, node: NodeView) -> str:
        """``"home-2x3090 / node ws"``: the subject of a finding about one node group."""
        return f"{self.rig.name} / {node.label}"

    def rig_at(self, pointer: str) -> Location:
        """The location of a field of the rig spec (or of its nearest written ancestor)."""
        return self.rig_doc.locate(pointer)

    def workload_at(self, pointer: str) -> Location:
        if self.workload_doc is None:
            raise ValueError("no workload in this context")
        return self.workload_doc.locate(pointer)

    @cached_property
    def first_gpu_node(self) -> NodeView | None:
        """The rig's first node group with GPUs (where a workload's estimate is made), or ``None``."""
        return next((node for node in self.nodes if node.gpus), None)

    def estimate(self) -> WorkloadEstimate | None:
        """The workload's memory and speed estimate on the first GPU of the rig's first GPU node
        (:class:`rigcheck.core.estimate.estimate.WorkloadEstimate`: ``.memory``, ``.training`` or ``.decode``),
        from the catalog's GPU facts alone; ``None`` without a workload or GPUs."""
        node = self.first_gpu_node
        if node is None:
            return None
        return self.estimate_for(node, node.gpus[0])

    def estimate_for(self, node: NodeView, gpu: GpuView) -> WorkloadEstimate | None:
        """The workload's estimate on ``gpu`` of ``node`` from the catalog's GPU facts alone (no rig speed
        overrides, no topology: what memory rules need), computed once per GPU; ``None`` without a
        workload."""
        if self.workload is None:
            return None
        key = ("estimate_for", id(node), id(gpu))
        cache: dict[tuple[str, int, int], Any] = self.__dict__.setdefault("_estimates", {})
        if key not in cache:
            from rigcheck.core.estimate.estimate import estimate_workload

            cache[key] = estimate_workload(
                self.workload, gpu=gpu.facts, gpus_per_node=node.gpus_per_node, arch=self.arch
            )
        estimate: WorkloadEstimate = cache[key]
        return estimate

    def estimate_on(self, node: NodeView, gpu: GpuView) -> RigEstimate:
        """The workload on ``gpu`` of ``node`` as the rig runs it: the GPU's speed facts with the rig's
        overrides and power limit, and the paths its collectives take
        (:class:`rigcheck.core.engine.rig_estimate.RigEstimate`), computed once per GPU."""
        key = ("estimate_on", id(node), id(gpu))
        cache: dict[tuple[str, int, int], Any] = self.__dict__.setdefault("_estimates", {})
        if key not in cache:
            from rigcheck.core.engine.rig_estimate import estimate_on

            cache[key] = estimate_on(self, node, gpu)
        estimate: RigEstimate = cache[key]
        return estimate

    def facts(self, name: str) -> dict[str, FactSection]:
        """Rule thresholds from ``specs/rules/NAME.yaml`` (each section with source and as_of), with
        the project config's ``thresholds`` applied (each override named in the section's source)."""
        sections = load_rule_facts(name)
        prefix = f"{name}."
        wanted = {
            key[len(prefix) :]: value for key, value in self.fact_overrides.items() if key.startswith(prefix)
        }
        if not wanted:
            return sections
        changed = dict(sections)
        for dotted, (value, origin) in wanted.items():
            section_name, _, key = dotted.partition(".")
            section = changed[section_name]
            changed[section_name] = section.overridden(key, value, origin)
        return FrozenDict(changed)


def resolve_model(workload_doc: SpecDocument) -> Architecture:
    """The workload's model architecture; a bad preset, config or LoRA target is an error at its line."""
    import os

    from rigcheck.core.estimate.architecture import resolve_architecture

    workload = workload_doc.model
    arch = resolve_architecture(
        workload.model, document=workload_doc, base_dir=os.path.dirname(workload_doc.path)
    )
    if workload.task in ("lora", "qlora") and workload.lora and workload.lora.targets:
        for index, target in enumerate(workload.lora.targets):
            try:
                arch.lora_roles([target])
            except ValueError as exc:
                raise SpecError(problem_at(workload_doc, f"/lora/targets/{index}", str(exc))) from None
    return arch


#: Unknown GPU names in one rig that get suggestions; the rest are only named (each costs a fuzzy search).
MAX_HINTED_PER_FILE = 20


def _resolve_nodes(rig_doc: SpecDocument, catalog: Catalog) -> list[NodeView]:
    views: list[NodeView] = []
    problems: list[Problem] = []
    for index, group in enumerate(rig_doc.model.nodes):
        view = NodeView(group, index, rig_doc.pointer("nodes", index))
        for gpu_index, gpu in enumerate(group.gpus or ()):
            pointer = rig_doc.pointer("nodes", index, "gpus", gpu_index)
            try:
                facts = catalog.lookup(gpu.model, hints=len(problems) < MAX_HINTED_PER_FILE)
            except CatalogLookupError as exc:
                problems.append(
                    problem_at(
                        rig_doc, pointer + "/model", str(exc), code=spec_codes.UNKNOWN_HARDWARE, whole=True
                    )
                )
                continue
            view.gpus.append(GpuView(gpu, facts, pointer))
        views.append(view)
    if problems:
        raise SpecError(problems)
    return views
