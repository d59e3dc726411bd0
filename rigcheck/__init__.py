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
    "hookimpl": "rigcheck.core.hookspecs",
    "Checker": "rigcheck.core.checker",
    "PerNodeChecker": "rigcheck.core.checker",
    "PerGpuTypeChecker": "rigcheck.core.checker",
    "WorkloadOnRigChecker": "rigcheck.core.checker",
    "EvidenceChecker": "rigcheck.core.checker",
    "Rule": "rigcheck.core.rules",
    "RuleDocs": "rigcheck.core.rules",
    "Finding": "rigcheck.core.findings",
    "Severity": "rigcheck.core.findings",
    "Location": "rigcheck.core.findings",
    "Suppression": "rigcheck.core.findings",
    "CheckContext": "rigcheck.core.context",
    "NodeView": "rigcheck.core.context",
    "GpuView": "rigcheck.core.context",
    "Rig": "rigcheck.core.models.rig",
    "Workload": "rigcheck.core.models.workload",
    "GpuSpec": "rigcheck.core.catalog",
    "estimate_workload": "rigcheck.core.estimate",
    "SpecError": "rigcheck.core.errors",
    "find_label": "rigcheck.core.labels",
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
    "estimate_workload",
    "find_label",
    "hookimpl",
]

if TYPE_CHECKING:
    from rigcheck.core.catalog import GpuSpec
    from rigcheck.core.checker import (
        Checker,
        EvidenceChecker,
        PerGpuTypeChecker,
        PerNodeChecker,
        WorkloadOnRigChecker,
    )
    from rigcheck.core.context import CheckContext, GpuView, NodeView
    from rigcheck.core.errors import SpecError
    from rigcheck.core.estimate import estimate_workload
    from rigcheck.core.findings import Finding, Location, Severity, Suppression
    from rigcheck.core.hookspecs import hookimpl
    from rigcheck.core.labels import find_label
    from rigcheck.core.models.rig import Rig
    from rigcheck.core.models.workload import Workload
    from rigcheck.core.rules import Rule, RuleDocs


def __getattr__(name: str) -> Any:
    module_name = _PUBLIC.get(name)
    if module_name is None:
        raise AttributeError(f"module 'rigcheck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
