"""Loading plugins with pluggy and collecting what they register into a :class:`Registry`.

Where plugins come from, in order:

1. rigcheck's built-in plugins (``rigcheck.plugins.BUILTIN_PLUGINS``);
2. installed packages, through the ``rigcheck`` entry-point group, unless
   ``RIGCHECK_DISABLE_PLUGIN_AUTOLOAD=1``; ``RIGCHECK_LOAD_PLUGINS=a,b`` loads only those names
   (an empty value loads none), as datasette's ``DATASETTE_LOAD_PLUGINS`` does;
3. modules named with ``-p module`` on the command line.

``-p no:NAME`` blocks a plugin by name. A project config's ``plugins:`` names installed plugins
(entry points of the ``rigcheck`` group, or their distributions), resolved from package metadata
before anything is imported: a config never makes rigcheck import a module by name, and a plugin
whose code lies in the folder being checked is refused before it runs. ``RIGCHECK_TRACE_PLUGINS=1``
logs every hook call to standard error.

An installed plugin (entry point, or named in the config's ``plugins:``) that fails to import, a hook
that raises, or a plugin that tries to end the process while loading (``SystemExit``,
``KeyboardInterrupt``) is recorded as a fault (reported as an ``ENGINE004`` finding that says what it
cost) and the others still load; what plugins print while loading is captured. A module named with
``-p`` that fails to import, a misspelt hook name, a hook with arguments the spec does not have, two
plugins claiming one rule code or one config namespace are errors (exit code 2), one line each, that
name the plugins involved.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from rigcheck.core.engine import hookspecs
from rigcheck.core.engine.errors import PluginError
from rigcheck.core.engine.plugin_env import (
    ENTRY_POINT_GROUP,
    env_flag,
    installed_plugin_names,
    may_have_plugins,
    normalise_name,
    plugin_autoload_allowed,
)
from rigcheck.core.engine.registry import (
    CheckerEntry,
    ConfigSchema,
    FormatEntry,
    PluginFault,
    PluginInfo,
    Registry,
    RuleEntry,
)
from rigcheck.core.engine.sandbox import PluginExit, call_in_child, can_isolate

HOOKS = (
    "rigcheck_catalog",
    "rigcheck_checkers",
    "rigcheck_formats",
    "rigcheck_evidence_parsers",
    "rigcheck_config_schema",
)

#: What a registration hook that raised cost its plugin (the ENGINE004 finding says it).
HOOK_FAULT_EFFECTS = {
    "rigcheck_catalog": "the catalog entries of that call were not added; its checkers ran",
    "rigcheck_checkers": "the checkers of that call were not registered and did not run",
    "rigcheck_formats": "the formats of that call were not added; its checkers ran",
    "rigcheck_evidence_parsers": "the evidence parsers of that call were not added; its checkers ran",
    "rigcheck_config_schema": "its config model was not registered: its checkers ran with "
    "ctx.plugin_config = None and its project config section was not read",
}
IMPORT_FAULT_EFFECT = "its checkers did not run"


_env_flag = env_flag


class PluginHost:
    """Owns the pluggy manager. ``host.load()`` returns the :class:`Registry` of everything registered."""

    def __init__(
        self,
        *,
        extra_modules: Iterable[str] = (),
        blocked: Iterable[str] = (),
        autoload: bool | None = None,
        allowlist: Iterable[str] | None = None,
        trace: bool | None = None,
        builtins: Iterable[str] | None = None,
        extra_plugins: Iterable[tuple[str, Any]] = (),
        config_modules: Iterable[str] = (),
        config_root: str | None = None,
        isolate: bool = False,
    ) -> None:
        from rigcheck.plugins import BUILTIN_PLUGINS

        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.extra_modules = list(extra_modules)
        self.extra_plugins = list(extra_plugins)
        self.config_modules = list(config_modules)
        self.config_root = os.path.realpath(config_root) if config_root else None
        self.isolate = isolate
        self.blocked = set(blocked)
        self.autoload = (not _env_flag("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD")) if autoload is None else autoload
        if allowlist is None and "RIGCHECK_LOAD_PLUGINS" in os.environ:
            allowlist = [
                name.strip() for name in os.environ["RIGCHECK_LOAD_PLUGINS"].split(",") if name.strip()
            ]
        self.allowlist = None if allowlist is None else set(allowlist)
        self.trace = _env_flag("RIGCHECK_TRACE_PLUGINS") if trace is None else trace
        self.builtins = list(BUILTIN_PLUGINS if builtins is None else builtins)
        self._infos: dict[str, PluginInfo] = {}
        self.registry = Registry()

    # -- loading --------------------------------------------------------------------------------

    def load(self) -> Registry:
        with contextlib.redirect_stdout(io.StringIO()):  # plugins printing while they load
            return self._load()

    def _load(self) -> Registry:
        for name in self.blocked:
            self.pm.set_blocked(name)
        from rigcheck.core.engine.lazy_checkers import remember, stand_in

        for module_name in self.builtins:
            if (
                module_name not in self.blocked
            ):  # a checker module known from the cache is imported when it runs
                plugin = stand_in(module_name)
                if plugin is None:
                    plugin = importlib.import_module(module_name)
                    remember(module_name, plugin)
                self._register(plugin, module_name, _rigcheck_version(), True)
        if self.autoload:
            self._load_entry_points()
        for module_name in self.extra_modules:
            if module_name in self.blocked:
                continue
            try:
                module = importlib.import_module(module_name)
            except (Exception, SystemExit, KeyboardInterrupt) as exc:  # asked for by name: a usage error
                detail = " ".join(f"{type(exc).__name__}: {exc}".split())
                raise PluginError(
                    f"cannot import plugin module {module_name!r} (-p): {detail}; a module named with -p "
                    f"must import (exit code 2); an installed plugin that fails is an ENGINE004 finding instead"
                ) from None
            self._register(module, module_name, str(getattr(module, "__version__", "unknown")), False)
        for name in self.config_modules:
            if name in self.blocked or name in self._infos:
                continue
            for entry_point in self._config_entry_points(name):
                if entry_point.name not in self._infos and entry_point.name not in self.blocked:
                    self._load_one(entry_point)
        for name, plugin in self.extra_plugins:
            self._register(plugin, name, str(getattr(plugin, "__version__", "unknown")), False)
        self._check_pending()
        self._add_engine_rules()
        self._collect()
        return self.registry

    def _config_entry_points(self, name: str) -> list[Any]:
        """The installed ``rigcheck`` entry points a config's ``plugins:`` entry names (by entry-point
        or distribution name), found in package metadata without importing anything.

        A config arrives with the specs it configures, in a pull request that may not be trusted, so
        it may not name modules: ``plugins: [venv.__main__]`` would otherwise run that module. An entry
        point whose code resolves inside the folder being checked (``PYTHONPATH=src``, an editable
        install of the repository) is refused before it is imported (yamllint PR #19).
        """
        from importlib.metadata import entry_points

        wanted = _normalise(name)
        found = [
            entry_point
            for entry_point in entry_points(group=ENTRY_POINT_GROUP)
            if _normalise(entry_point.name) == wanted
            or ((dist := getattr(entry_point, "dist", None)) is not None and _normalise(dist.name) == wanted)
        ]
        if not found:
            raise PluginError(
                f"plugins: {name!r} in the project config is not an installed rigcheck plugin (no entry point of "
                f"the 'rigcheck' group by that name or distribution); a config names installed plugins, never "
                f"modules (install it with pip, or load a module on purpose with -p)"
            )
        for entry_point in found:
            location = _module_location(entry_point.value.split(":")[0])
            if self.config_root and location and location.startswith(self.config_root + os.sep):
                raise PluginError(
                    f"plugin {entry_point.name!r} named in the project config resolves to {location}, inside the "
                    f"folder being checked; rigcheck does not run code from the repository it checks (name it "
                    f"with -p to load it on purpose)"
                )
        return found

    def _add_engine_rules(self) -> None:
        from rigcheck.core.engine.engine_rules import ENGINE_RULES
        from rigcheck.core.lint.lint_rules import LINT_RULES

        core = PluginInfo("rigcheck", _rigcheck_version(), True, "rigcheck.core.engine.engine")
        for rule in ENGINE_RULES:
            self.registry.rules[rule.code] = RuleEntry(rule, "engine", core)
        for rule in LINT_RULES:
            self.registry.rules[rule.code] = RuleEntry(rule, "lint", core)
        from rigcheck.core.lint.merge_rules import MERGE_RULES

        for rule in MERGE_RULES:
            self.registry.rules[rule.code] = RuleEntry(rule, "merge", core)

    def _load_entry_points(self) -> None:
        if not may_have_plugins():
            return
        from importlib.metadata import entry_points

        for entry_point in entry_points(group=ENTRY_POINT_GROUP):
            name = entry_point.name
            if name in self.blocked or self.pm.is_blocked(name):
                continue
            if self.allowlist is not None and name not in self.allowlist:
                continue
            self._load_one(entry_point)

    def _load_one(self, entry_point: Any) -> None:
        """Import one entry point; a failure, or an attempt to end the process, is a fault."""
        name = entry_point.name
        dist = getattr(entry_point, "dist", None)
        version = dist.version if dist is not None else "unknown"

        def fault(message: str) -> None:
            self.registry.faults.append(
                PluginFault(
                    name,
                    version,
                    "import",
                    f"{message} (entry point {entry_point.value})",
                    IMPORT_FAULT_EFFECT,
                )
            )

        if self.isolate and can_isolate():
            try:  # first in a child: an import that calls os._exit ends only the child
                call_in_child(lambda: (entry_point.load(), None)[1], 30.0)
            except PluginExit as exc:
                return fault(f"tried to end the process while importing: {exc}")
            except Exception as exc:
                return fault(f"{type(exc).__name__}: {exc}")
        try:
            plugin = entry_point.load()
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            return fault(f"{type(exc).__name__}: {exc}")
        self._register(plugin, name, version, False)

    def _register(self, plugin: Any, name: str, version: str, builtin: bool) -> None:
        try:
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise PluginError(_validation_message(plugin, name, version, exc)) from None
        except ValueError as exc:  # registered twice under one name
            raise PluginError(f"plugin {name!r}: {exc}") from None
        hooks = tuple(
            hook
            for hook in HOOKS
            if any(impl.plugin_name == name for impl in getattr(self.pm.hook, hook).get_hookimpls())
        )
        module = getattr(plugin, "__name__", type(plugin).__module__)
        info = PluginInfo(name, version, builtin, module, hooks)
        self._infos[name] = info
        self.registry.plugins.append(info)

    def _check_pending(self) -> None:
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            plugin_name = self.pm.get_name(exc.plugin) if exc.plugin is not None else "?"
            from rigcheck.core.spec.fields import did_you_mean

            unknown = str(exc).split("'")[1] if "'" in str(exc) else ""
            hint = did_you_mean(unknown, HOOKS) if unknown else ""
            raise PluginError(
                f"plugin {plugin_name!r} implements unknown hook {unknown!r}{hint} "
                f"(known hooks: {', '.join(HOOKS)})"
            ) from None

    # -- registration ---------------------------------------------------------------------------

    def _collect(self) -> None:
        for hook_name in HOOKS:
            caller = getattr(self.pm.hook, hook_name)
            for impl in caller.get_hookimpls():  # in registration order
                info = self._infos[impl.plugin_name]
                pending: list[Callable[[], None]] = []
                register = self._make_register(hook_name, info, pending)
                if self.trace:
                    print(
                        f"rigcheck: calling {hook_name} of plugin {info.name} ({info.version})",
                        file=sys.stderr,
                    )
                try:
                    impl.function(**{argument: register for argument in impl.argnames})
                    for commit in pending:
                        commit()
                except PluginError:
                    raise
                except (Exception, SystemExit, KeyboardInterrupt) as exc:
                    self.registry.faults.append(
                        PluginFault(
                            info.name,
                            info.version,
                            hook_name,
                            f"{type(exc).__name__}: {exc}",
                            HOOK_FAULT_EFFECTS.get(hook_name, ""),
                        )
                    )

    def _make_register(self, hook_name: str, info: PluginInfo, pending: list[Callable[[], None]]) -> Any:
        registry = self.registry
        trace = self.trace

        def log(what: str) -> None:
            if trace:
                print(f"rigcheck:   {info.name} registered {what}", file=sys.stderr)

        if hook_name == "rigcheck_checkers":

            def register_checker(checker: Any) -> None:
                _validate_checker(checker, info)
                pending.append(lambda: self._add_checker(checker, info))
                log(f"checker {checker.name}")

            return register_checker
        if hook_name == "rigcheck_catalog":

            def register_entry(entry: Any, *, override: bool = False) -> None:
                pending.append(lambda: registry.catalog_entries.append((entry, info, override)))
                log("a catalog entry")

            return register_entry
        if hook_name == "rigcheck_formats":

            def register_format(
                name: str, renderer: Any, *, description: str = "", extension: str = ""
            ) -> None:
                entry = FormatEntry(name, renderer, info, description, extension)
                pending.append(lambda: registry.formats.__setitem__(name, entry))
                log(f"format {name}")

            return register_format
        if hook_name == "rigcheck_config_schema":
            declared: list[str] = []

            def register_config(model: Any, *, namespace: str | None = None) -> None:
                if declared:
                    raise ValueError(
                        f"register(...) was called twice; a plugin has one config model (it has {declared[0]})"
                    )
                schema = _config_schema(model, namespace, info)
                declared.append(getattr(model, "__name__", repr(model)))
                pending.append(lambda: self._add_config_schema(schema))
                log(f"config model {schema.model.__name__} (plugins-config.{schema.namespace})")

            return register_config

        def register_parser(parser: Any) -> None:
            pending.append(lambda: registry.evidence_parsers.append((parser, info)))
            log(f"evidence parser {getattr(parser, 'name', parser)!r}")

        return register_parser

    def _add_config_schema(self, schema: ConfigSchema) -> None:
        for other in self.registry.config_schemas.values():
            if _normalise(other.namespace) == _normalise(schema.namespace):
                raise PluginError(
                    f"config namespace {schema.namespace!r} is claimed by plugin {other.plugin.name!r} and by "
                    f"plugin {schema.plugin.name!r}; register(Model, namespace=...) must be unique"
                )
        self.registry.config_schemas[schema.plugin.name] = schema

    def _add_checker(self, checker: Any, info: PluginInfo) -> None:
        registry = self.registry
        for entry in registry.checkers:
            if entry.checker.name == checker.name:
                raise PluginError(
                    f"checker name {checker.name!r} is registered by plugin {entry.plugin.name!r} and by plugin "
                    f"{info.name!r}; checker names must be unique"
                )
        for rule in checker.rules:
            existing = registry.rules.get(rule.code)
            if existing is not None:
                raise PluginError(
                    f"rule code {rule.code} is claimed by plugin {existing.plugin.name!r} (checker "
                    f"{existing.checker!r}) and by plugin {info.name!r} (checker {checker.name!r}); "
                    f"rule codes must be unique"
                )
        for rule in checker.rules:
            registry.rules[rule.code] = RuleEntry(rule, checker.name, info)
        registry.checkers.append(CheckerEntry(checker, info))


def _validate_checker(checker: Any, info: PluginInfo) -> None:
    from rigcheck.core.engine.rules import Rule

    name = getattr(checker, "name", None)
    rules = getattr(checker, "rules", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"a checker needs a non-empty string 'name' (got {name!r})")
    if not callable(getattr(checker, "check", None)):
        raise TypeError(f"checker {name!r} has no check(ctx) method")
    if not isinstance(rules, tuple | list) or not rules or not all(isinstance(rule, Rule) for rule in rules):
        raise TypeError(f"checker {name!r} must list its rigcheck.Rule objects in 'rules'")


_NAMESPACE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def _config_schema(model: Any, namespace: str | None, info: PluginInfo) -> ConfigSchema:
    """Check what ``rigcheck_config_schema`` registers: a pydantic model whose every field has a default,
    and a namespace that is neither dotted nor the name of one of rigcheck's rule files."""
    from pydantic import BaseModel, ValidationError

    from rigcheck.resources import rules_data_file

    if not isinstance(model, type) or not issubclass(model, BaseModel):
        raise TypeError(f"register() takes a pydantic BaseModel subclass, not {_describe(model)}")
    name = info.name if namespace is None else namespace
    if not isinstance(name, str) or not _NAMESPACE.match(name):
        how = "pass namespace='...'" if namespace is None else "use letters, digits, '_' and '-'"
        raise ValueError(f"config namespace {name!r} is not a plain name ({how}; no dots)")
    if rules_data_file(f"{name}.yaml").is_file():
        raise ValueError(
            f"config namespace {name!r} is the name of rigcheck's rule file specs/rules/{name}.yaml (thresholds "
            f"{name}.SECTION.KEY); choose another with register(Model, namespace=...)"
        )
    try:
        default = model()
    except ValidationError as exc:
        missing = [".".join(str(part) for part in error["loc"]) for error in exc.errors()]
        raise ValueError(
            f"config model {model.__name__} needs a default for every field (a project that does not configure "
            f"the plugin runs it with {model.__name__}()); without one: {', '.join(missing)}"
        ) from None
    return ConfigSchema(model, name, info, default)


def _describe(value: Any) -> str:
    try:
        return f"{type(value).__name__} {repr(value)[:60]}"
    except Exception:  # a hostile __repr__
        return type(value).__name__


def _validation_message(plugin: Any, name: str, version: str, exc: pluggy.PluginValidationError) -> str:
    """pluggy's several-line complaint about a hook implementation, as one line naming plugin and hook."""
    text = str(exc)
    hook = re.search(r"for hook '([^']+)'", text)
    hook_name = hook.group(1) if hook else "?"
    spec = getattr(hookspecs, hook_name, None)
    if spec is not None:
        import inspect

        impl = getattr(plugin, hook_name, None)
        expected = list(inspect.signature(spec).parameters)
        try:
            given = [arg for arg in inspect.signature(impl).parameters if arg != "self"] if impl else []
        except (TypeError, ValueError):
            given = []
        unknown = [arg for arg in given if arg not in expected]
        if unknown:
            return (
                f"plugin {name!r} ({version}): its {hook_name}() takes {', '.join(repr(a) for a in unknown)}, "
                f"which the hook does not pass (rigcheck passes: {', '.join(expected)}; plugin API "
                f"{_plugin_api()})"
            )
    return f"plugin {name!r} ({version}): hook {hook_name}: {' '.join(text.split())}"


def _plugin_api() -> str:
    from rigcheck._version import __plugin_api__

    return __plugin_api__


_normalise = normalise_name

__all__ = [
    "ENTRY_POINT_GROUP",
    "HOOKS",
    "PluginHost",
    "installed_plugin_names",
    "normalise_name",
    "plugin_autoload_allowed",
]


def _module_location(module: str) -> str | None:
    """Where the top-level package of ``module`` would be imported from, without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    where = spec.origin if spec.origin not in (None, "built-in", "frozen") else None
    if where is None and spec.submodule_search_locations:
        where = next(iter(spec.submodule_search_locations), None)
    return os.path.realpath(where) if where else None


def _rigcheck_version() -> str:
    from rigcheck._version import __version__

    return __version__
