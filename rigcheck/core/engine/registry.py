"""What plugins registered: checkers, rules, catalog entries, formats, evidence parsers.

Each record keeps the plugin it came from, so that reports, ``rigcheck plugins`` and fault
findings name the right plugin. Registration problems (a plugin that fails to import, a hook that
raises, a duplicate rule code) are kept as :class:`PluginFault` records and reported as findings.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.rules import Rule


class PluginInfo(NamedTuple):
    """A loaded plugin: its name, the distribution version, and whether rigcheck ships it."""

    name: str
    version: str
    builtin: bool
    module: str = ""
    hooks: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "builtin": self.builtin,
            "module": self.module,
            "hooks": list(self.hooks),
        }


class CheckerEntry(NamedTuple):
    """A registered checker and the plugin that registered it."""

    checker: Checker
    plugin: PluginInfo


class RuleEntry(NamedTuple):
    """A rule code's rule, the checker that reports it and the plugin that registered it."""

    rule: Rule
    checker: str
    plugin: PluginInfo


class FormatEntry(NamedTuple):
    """An output format: its renderer (a callable, or ``module:function`` loaded when first used) and plugin."""

    name: str
    renderer: Any  # a callable, or "module:function"
    plugin: PluginInfo
    description: str = ""
    extension: str = ""

    def load(self) -> Any:
        if callable(self.renderer):
            return self.renderer
        module_name, _, attribute = str(self.renderer).partition(":")
        return getattr(importlib.import_module(module_name), attribute)


class ConfigSchema(NamedTuple):
    """A plugin's config model (``rigcheck_config_schema``), the namespace of its section of the project
    config, and the instance its checkers get when the project does not configure it."""

    model: type[Any]
    namespace: str
    plugin: PluginInfo
    default: Any


class PluginFault(NamedTuple):
    """A plugin that could not be loaded or whose registration failed.

    ``effect`` says what the fault cost (``"its checkers did not run"``); the report's finding says it,
    so a bad catalog entry does not claim that checkers which ran did not.
    """

    plugin: str
    version: str
    stage: str
    message: str
    effect: str = ""


@dataclass
class Registry:
    """Everything the loaded plugins registered: checkers, rules, formats, evidence parsers, catalog
    entries and config schemas, with the faults of the plugins that failed to load."""

    plugins: list[PluginInfo] = field(default_factory=list)
    checkers: list[CheckerEntry] = field(default_factory=list)
    rules: dict[str, RuleEntry] = field(default_factory=dict)
    formats: dict[str, FormatEntry] = field(default_factory=dict)
    evidence_parsers: list[tuple[Any, PluginInfo]] = field(default_factory=list)
    catalog_entries: list[tuple[Any, PluginInfo, bool]] = field(default_factory=list)
    #: Plugin name -> its config model (``rigcheck_config_schema``).
    config_schemas: dict[str, ConfigSchema] = field(default_factory=dict)
    faults: list[PluginFault] = field(default_factory=list)

    def rule(self, code: str) -> RuleEntry | None:
        return self.rules.get(code.upper())

    def sorted_rules(self) -> list[RuleEntry]:
        return sorted(self.rules.values(), key=lambda entry: (entry.rule.prefix, entry.rule.code))
