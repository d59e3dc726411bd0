"""rigcheck: validate GPU rigs and ML workloads before you buy, build or change them.

The public API for plugin authors is importable from here (lazily, so that ``import rigcheck``
costs nothing): ``hookimpl``, ``Checker``, ``Rule``, ``RuleDocs``, ``Finding``, ``Severity``,
``Location`` and ``CheckContext``. See docs/plugins.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
#: Version of the plugin API (hooks and the objects they pass). Minor versions only add.
__plugin_api__ = "1.0"

_PUBLIC = {
    "hookimpl": "rigcheck.core.hookspecs",
    "Checker": "rigcheck.core.checker",
    "Rule": "rigcheck.core.rules",
    "RuleDocs": "rigcheck.core.rules",
    "Finding": "rigcheck.core.findings",
    "Severity": "rigcheck.core.findings",
    "Location": "rigcheck.core.findings",
    "CheckContext": "rigcheck.core.context",
}

__all__ = [
    "CheckContext",
    "Checker",
    "Finding",
    "Location",
    "Rule",
    "RuleDocs",
    "Severity",
    "__plugin_api__",
    "__version__",
    "hookimpl",
]

if TYPE_CHECKING:
    from rigcheck.core.checker import Checker
    from rigcheck.core.context import CheckContext
    from rigcheck.core.findings import Finding, Location, Severity
    from rigcheck.core.hookspecs import hookimpl
    from rigcheck.core.rules import Rule, RuleDocs


def __getattr__(name: str) -> Any:
    module_name = _PUBLIC.get(name)
    if module_name is None:
        raise AttributeError(f"module 'rigcheck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
