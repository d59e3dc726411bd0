"""The index of the built-in checkers (``rigcheck/plugins/builtin_index.json``): what each checker module
registers (checker names, their engine attributes and their rules), so that loading the built-in plugins
imports no checker module. A checker's module is imported the first time the engine runs it, so a
``check`` without ``--evidence`` never imports the evidence checkers, and ``rigcheck rules`` and
``rigcheck explain`` import none (docs/performance.md).

Each module's entry carries the SHA-256 of its source: a module edited since the index was written is
imported as before, so the index can be out of date but never wrong. ``tests/test_builtin_index.py`` fails
until it is regenerated: ``python -m rigcheck.core.builtin_index``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from typing import Any

from rigcheck.core.hookspecs import hookimpl
from rigcheck.core.rules import Rule, RuleDocs
from rigcheck.core.severity import Severity

FORMAT = 1
#: The engine's class attributes of a checker, kept in the index (anything else is read from the checker).
ATTRIBUTES = ("needs_workload", "needs_evidence", "reads_workload", "timeout_s", "physical_build")
_PLUGINS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plugins")
INDEX_PATH = os.path.join(_PLUGINS, "builtin_index.json")

_INDEX: dict[str, Any] | None = None


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


def _index() -> dict[str, Any]:
    global _INDEX
    if _INDEX is None:
        try:
            with open(INDEX_PATH, encoding="utf-8") as handle:
                stored = json.load(handle)
        except (OSError, ValueError):
            stored = {}
        modules = (
            stored.get("modules", []) if isinstance(stored, dict) and stored.get("format") == FORMAT else []
        )
        _INDEX = {entry["module"]: entry for entry in modules}
    return _INDEX


def stand_in(module_name: str) -> Any | None:
    """A plugin object that registers the module's checkers as :class:`LazyChecker` without importing
    it, or None when the index has no current entry for the module (then import it)."""
    entry = _index().get(module_name)
    if entry is None or entry.get("sha256") != source_digest(module_name):
        return None
    return _StandIn(module_name, entry["checkers"])


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
    """A built-in checker known from the index; its module is imported when it is first run (or asked
    for anything the index does not hold)."""

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

    def __getattr__(self, attribute: str) -> Any:  # only for what the index does not hold
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


def build_index() -> dict[str, Any]:
    """The index, from the checker modules themselves (imports every one)."""
    from rigcheck.plugins import BUILTIN_PLUGINS

    modules = []
    for module_name in BUILTIN_PLUGINS:
        module = importlib.import_module(module_name)
        hooks = [name for name in dir(module) if name.startswith("rigcheck_")]
        if hooks != ["rigcheck_checkers"]:
            continue  # formats, evidence parsers: imported as before
        found: list[Any] = []
        module.rigcheck_checkers(register=found.append)
        checkers = [
            {
                "name": checker.name,
                "attributes": {attribute: getattr(checker, attribute) for attribute in ATTRIBUTES},
                "rules": [rule.as_dict(resolved=False) for rule in checker.rules],
            }
            for checker in found
        ]
        modules.append({"module": module_name, "sha256": source_digest(module_name), "checkers": checkers})
    return {"format": FORMAT, "modules": modules}


def index_text() -> str:
    return json.dumps(build_index(), indent=1, ensure_ascii=False, sort_keys=False) + "\n"


if __name__ == "__main__":  # python -m rigcheck.core.builtin_index
    with open(INDEX_PATH, "w", encoding="utf-8") as handle:
        handle.write(index_text())
    print(f"wrote {INDEX_PATH}", file=sys.stderr)
