"""rigcheck: validate GPU rigs and ML workloads before you buy, build or change them.

The public API for plugin authors is importable from here (lazily, so that ``import rigcheck``
costs nothing): ``hookimpl``; ``Checker`` and the base classes that own the walk
(``PerNodeChecker``, ``PerGpuTypeChecker``, ``WorkloadOnRigChecker``, ``EvidenceChecker``);
``Rule``, ``RuleDocs``, ``Finding``, ``Severity``, ``Location``, ``Suppression``; ``CheckContext``
with ``NodeView`` and ``GpuView``; the spec models ``Rig`` and ``Workload``, the catalog entry
``GpuSpec``, and ``estimate_workload``; ``SpecError`` (a spec or config rigcheck cannot read) and
``find_label`` (the labels convention). The test kit is ``rigcheck.testing``. See docs/plugins.md
("Public names"); everything else under ``rigcheck.core`` is internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rigcheck._version import __plugin_api__, __version__

_PUBLIC = {
    "hookimpl": "rigcheck.core.engine.hookspecs",
    "Checker": "rigcheck.core.engine.checker",
    "PerNodeChecker": "rigcheck.core.engine.checker",
    "PerGpuTypeChecker": "rigcheck.core.engine.checker",
    "WorkloadOnRigChecker": "rigcheck.core.engine.checker",
    "EvidenceChecker": "rigcheck.core.engine.checker",
    "Rule": "rigcheck.core.engine.rules",
    "RuleDocs": "rigcheck.core.engine.rules",
    "Finding": "rigcheck.core.engine.findings",
    "Severity": "rigcheck.core.engine.findings",
    "Location": "rigcheck.core.engine.findings",
    "Suppression": "rigcheck.core.engine.findings",
    "CheckContext": "rigcheck.core.engine.context",
    "NodeView": "rigcheck.core.engine.context",
    "GpuView": "rigcheck.core.engine.context",
    "Rig": "rigcheck.core.spec.models.rig",
    "Workload": "rigcheck.core.spec.models.workload",
    "GpuSpec": "rigcheck.core.catalog.catalog",
    "estimate_workload": "rigcheck.core.estimate.estimate",
    "SpecError": "rigcheck.core.engine.errors",
    "find_label": "rigcheck.core.spec.labels",
    "check": "rigcheck.api",
    "estimate": "rigcheck.api",
    "plan": "rigcheck.api",
}

__all__ = [
    "CheckContext",
    "Checker",
    "EvidenceChecker",
    "Finding",
    "GpuSpec",
    "GpuView",
    "Location",
    "NodeView",
    "PerGpuTypeChecker",
    "PerNodeChecker",
    "Rig",
    "Rule",
    "RuleDocs",
    "Severity",
    "SpecError",
    "Suppression",
    "Workload",
    "WorkloadOnRigChecker",
    "__plugin_api__",
    "__version__",
    "check",
    "estimate",
    "estimate_workload",
    "find_label",
    "hookimpl",
    "plan",
]

if TYPE_CHECKING:
    from rigcheck.api import check, estimate, plan
    from rigcheck.core.catalog.catalog import GpuSpec
    from rigcheck.core.engine.checker import (
        Checker,
        EvidenceChecker,
        PerGpuTypeChecker,
        PerNodeChecker,
        WorkloadOnRigChecker,
    )
    from rigcheck.core.engine.context import CheckContext, GpuView, NodeView
    from rigcheck.core.engine.errors import SpecError
    from rigcheck.core.engine.findings import Finding, Location, Severity, Suppression
    from rigcheck.core.engine.hookspecs import hookimpl
    from rigcheck.core.engine.rules import Rule, RuleDocs
    from rigcheck.core.estimate.estimate import estimate_workload
    from rigcheck.core.spec.labels import find_label
    from rigcheck.core.spec.models.rig import Rig
    from rigcheck.core.spec.models.workload import Workload


def __getattr__(name: str) -> Any:
    module_name = _PUBLIC.get(name)
    if module_name is None:
        raise AttributeError(f"module 'rigcheck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
