"""Built-in checkers registered without importing their modules.

What each checker module registers (its checkers' names, engine attributes and rules) is kept as JSON in
rigcheck's cache folder (:mod:`rigcheck.core.catalog.data_cache`) under the SHA-256 of the module's
source, written the first time the module is imported and read on later runs. A checker's module is
then imported the first time the engine runs it, so a ``check`` without ``--evidence`` never imports the
evidence checkers, and ``rigcheck rules`` and ``rigcheck explain`` import none (docs/performance.md).

Nothing is committed: the rules are declared once, in their modules, and what is kept is derived from
them at run time. An edited module has a new digest, so an entry is never stale; a cache that is off,
unreadable or missing means the module is imported, as it would be without this.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from typing import Any

from rigcheck.core.engine.hookspecs import hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.severity import Severity

#: Bumped when the shape of an entry changes, so that old entries are not read.
FORMAT = 4
#: The engine's class attributes of a checker, kept in an entry (anything else is read from the checker).
ATTRIBUTES = ("needs_workload", "needs_evidence", "timeout_s", "physical_build", "gpu_vendor")
_PLUGINS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "plugins"
)


def source_path(module_name: str) -> str:
    """The source file of a built-in plugin module (``rigcheck.plugins.power.psu_sustained``)."""
    parts = module_name.split(".")[2:]
    return os.path.join(_PLUGINS, *parts) + ".py"


def source_digest(module_name: str) -> str | None:
    try:
        with open(source_path(module_name), "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _key(digest: str) -> str:
    return f"checkers{FORMAT}-{digest}"


def stand_in(module_name: str) -> Any | None:
    """A plugin object that registers the module's checkers as :class:`LazyChecker` without importing
    it, or None when no entry is kept for the module's current source (then import it and
    :func:`remember` it)."""
    from rigcheck.core.catalog import data_cache

    digest = source_digest(module_name)
    checkers = data_cache.get(_key(digest)) if digest is not None else None
    if not isinstance(checkers, list):
        return None
    return _StandIn(module_name, checkers)


def remember(module_name: str, module: Any) -> None:
    """Keep what an imported checker module registers, for the next run's :func:`stand_in`; a module
    with other hooks (formats, evidence parsers) is not kept: it is imported every time."""
    from rigcheck.core.catalog import data_cache

    digest = source_digest(module_name)
    if digest is None or data_cache.cache_dir() is None:
        return
    hooks = [name for name in dir(module) if name.startswith("rigcheck_")]
    if hooks != ["rigcheck_checkers"]:
        return
    data_cache.put(_key(digest), checkers_of(module))


class _StandIn:
    """Stands for a checker module in the plugin manager: same name, same (one) hook."""

    def __init__(self, module_name: str, checkers: list[dict[str, Any]]) -> None:
        self.__name__ = module_name
        self._checkers = checkers

    @hookimpl
    def rigcheck_checkers(self, register: Any) -> None:
        for spec in self._checkers:
            register(LazyChecker(self.__name__, spec))

    def __dir__(self) -> list[str]:
        """The one hook: pluggy looks for hook implementations among ``dir(plugin)``, and looking at
        each of an object's thirty attributes, for 51 modules, was a fifth of ``rigcheck rules``."""
        return ["rigcheck_checkers"]


class LazyChecker:
    """A built-in checker known from its kept entry; its module is imported when it is first run (or
    asked for anything the entry does not hold)."""

    def __init__(self, module_name: str, spec: dict[str, Any]) -> None:
        self._module = module_name
        self._real: Any = None
        self.name: str = spec["name"]
        self.rules: tuple[Rule, ...] = tuple(rule_from_dict(rule) for rule in spec["rules"])
        for attribute, value in spec["attributes"].items():
            setattr(self, attribute, value)

    def check(self, ctx: Any) -> Any:
        return self.load().check(ctx)

    def load(self) -> Any:
        """The checker itself, from its module's ``rigcheck_checkers`` hook."""
        if self._real is None:
            found: list[Any] = []
            importlib.import_module(self._module).rigcheck_checkers(register=found.append)
            matching = [checker for checker in found if checker.name == self.name]
            if not matching:
                raise RuntimeError(f"{self._module} no longer registers checker {self.name!r}")
            self._real = matching[0]
            self.check = self._real.check  # type: ignore[method-assign]  # later runs call it directly
        return self._real

    def __getattr__(self, attribute: str) -> Any:  # only for what the entry does not hold
        if attribute.startswith("__") or attribute in ("_module", "_real"):
            raise AttributeError(attribute)
        return getattr(self.load(), attribute)


def rule_from_dict(data: dict[str, Any]) -> Rule:
    docs = data["docs"]
    return Rule(
        code=data["code"],
        name=data["name"],
        summary=data["summary"],
        severity=Severity(data["severity"]),
        docs=RuleDocs(docs["what"], docs["why"], docs["example"], docs["fix"], tuple(docs["references"])),
        since=data["since"],
        status=data["status"],
        tags=tuple(data["tags"]),
    )


def checkers_of(module: Any) -> list[dict[str, Any]]:
    """What the module's ``rigcheck_checkers`` hook registers, as data."""
    found: list[Any] = []
    module.rigcheck_checkers(register=found.append)
    return [
        {
            "name": checker.name,
            "attributes": {attribute: getattr(checker, attribute) for attribute in ATTRIBUTES},
            "rules": [rule.as_dict(resolved=False) for rule in checker.rules],
        }
        for checker in found
    ]
