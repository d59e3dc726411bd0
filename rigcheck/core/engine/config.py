"""Project configuration: ``.rigcheck.yaml`` (or ``.rigcheck.yml``, or ``[tool.rigcheck]`` in
``pyproject.toml``), found from the scanned path upward, validated, and merged with the command line.

Keys are kebab-case as in ruff's and Checkov's files (snake_case is accepted too). Every value keeps
where it came from (default, the file, or the command line), which ``--show-config`` prints. The
schema is ``schemas/config.schema.json``.

``plugins-config: {NAMESPACE: {...}}`` (and ``thresholds`` keys that start with a plugin's namespace)
configure plugins: they are read with the file but validated once the plugins are loaded, against the
model each registered with ``rigcheck_config_schema`` (:func:`bind_plugin_configs`).
"""

import datetime as _dt
import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rigcheck.core.engine.errors import Problem, SpecError, UsageError, clip
from rigcheck.core.spec.positions import join_pointer, pointer_from_path

if TYPE_CHECKING:
    from rigcheck.core.engine.registry import ConfigSchema, Registry

CONFIG_NAMES = (".rigcheck.yaml", ".rigcheck.yml")
_CODE = re.compile(r"^(ALL|[A-Z][A-Z0-9]*)$")


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class _ConfigModel(BaseModel):
    """Base of the ``.rigcheck.yaml`` models. Built when first used (``defer_build``): a check with no
    config file never validates one, and building the five models cost 2-3 ms of its start (issue 20)."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=_kebab, populate_by_name=True, frozen=True, defer_build=True
    )


class Waiver(_ConfigModel):
    """A finding accepted without editing the spec file (vendored or generated specs)."""

    rule: str = Field(description="Rule code or prefix: PWR005, PWR.")
    path: str | None = Field(
        None, description="Glob of spec files, relative to the config file: specs/rigs/dgx-*.yaml."
    )
    spec: str | None = Field(None, description="Or the name: of the rig or workload.")
    pointer: str | None = Field(None, description="JSON pointer of the field (and everything under it).")
    reason: str = Field(min_length=1, description="Why the finding is accepted (required).")
    expires: _dt.date | None = Field(None, description="After this date the waiver stops applying.")

    @field_validator("rule")
    @classmethod
    def _rule(cls, value: str) -> str:
        value = value.strip().upper()
        if not _CODE.match(value):
            raise ValueError(f"{value!r} is not a rule code or prefix")
        return value

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a waiver needs a reason")
        return value.strip()

    def matches(self, code: str, file: str | None, spec_name: str | None, pointer: str, base: Path) -> bool:
        if not code.startswith(self.rule) and self.rule != "ALL":
            return False
        if self.path is not None:
            if file is None:
                return False
            relative = _relative(file, base)
            if not fnmatch.fnmatch(relative, self.path) and not fnmatch.fnmatch(
                file.replace(os.sep, "/"), self.path
            ):
                return False
        if self.spec is not None and self.spec != spec_name:
            return False
        return self.pointer is None or pointer == self.pointer or pointer.startswith(self.pointer + "/")

    @model_validator(mode="after")
    def _scoped(self) -> "Waiver":
        if self.path is None and self.spec is None:
            raise ValueError("a waiver names the files it covers: path (a glob) or spec (a name)")
        return self


class Pair(_ConfigModel):
    rig: str = Field(description="Rig file (relative to the config file) or name.")
    workload: str = Field(description="Workload file (relative to the config file) or name.")


class Matrix(_ConfigModel):
    """Every rig against every workload; entries are globs relative to the config file, or names."""

    rigs: list[str] = Field(min_length=1)
    workloads: list[str] = Field(min_length=1)


class ConfigFile(_ConfigModel):
    """What a project config may set."""

    select: list[str] | None = Field(
        None,
        description="Rule codes or prefixes to run (default: all). Warnings and failures of SPEC, "
        "ENGINE, CONFIG, LINT and SUP are reported whatever the selection.",
    )
    ignore: list[str] | None = Field(
        None, description="Rule codes or prefixes not to run (SPEC, ENGINE, CONFIG, LINT, SUP: always run)."
    )
    fail_on: Literal["warn", "fail"] | None = Field(None, description="Exit 1 at this severity.")
    severity: dict[str, Literal["fail", "warn", "off"]] | None = Field(
        None,
        description="Per-rule (or prefix) severity of its warnings and failures; off turns it off. "
        "SPEC, ENGINE, CONFIG, LINT and SUP findings keep theirs.",
    )
    thresholds: dict[str, float | int | str | bool] | None = Field(
        None,
        description="Rule thresholds from specs/rules/*.yaml, as file.section.key: "
        "{power.sustained.warn_above_fraction: 0.85}.",
    )
    pairs: list[Pair] | None = Field(None, description="Workloads to check against rigs (rigcheck lint).")
    matrix: Matrix | None = None
    waivers: list[Waiver] | None = None
    plugins: list[str] | None = Field(
        None,
        description="Installed plugins to require, by entry-point or distribution name (never a module).",
    )
    plugins_config: dict[str, dict[str, Any]] | None = Field(
        None,
        description="Settings of plugins, by the namespace each declares (rigcheck_config_schema; by default "
        "its plugin name): {site_policy: {warn_fraction: 0.8}}. Validated against the plugin's model.",
    )
    exclude: list[str] | None = Field(None, description="Globs of paths rigcheck lint does not read.")
    baseline: str | None = Field(None, description="Baseline file (relative to the config file).")

    @field_validator("select", "ignore")
    @classmethod
    def _codes(cls, values: list[str] | None) -> list[str] | None:
        if values is None:
            return None
        cleaned = [value.strip().upper() for value in values]
        for value in cleaned:
            if not _CODE.match(value):
                raise ValueError(f"{value!r} is not a rule code or prefix")
        return cleaned

    @field_validator("severity")
    @classmethod
    def _severity_keys(cls, values: dict[str, str] | None) -> dict[str, str] | None:
        if values is None:
            return None
        out = {}
        for key, value in values.items():
            code = key.strip().upper()
            if not _CODE.match(code):
                raise ValueError(f"{key!r} is not a rule code or prefix")
            out[code] = value
        return out


class Setting(NamedTuple):
    """One effective setting: its value and where it came from."""

    value: Any
    origin: str  # "default", a config file path, or "command line"


class PluginConfig(NamedTuple):
    """A plugin's validated settings: the model instance its checkers read as ``ctx.plugin_config``, and
    where each top-level field came from (``FILE:LINE`` or ``"default"``)."""

    plugin: str
    version: str
    namespace: str
    value: Any
    origins: dict[str, str]


@dataclass
class Settings:
    """The effective configuration with the origin of every value."""

    values: dict[str, Setting] = field(default_factory=dict)
    path: str | None = None  # the config file, if one was used
    waivers: list[tuple[Waiver, Problem]] = field(default_factory=list)  # each with its position
    locate: Any = None  # JSON pointer in the config file -> (line, column)
    #: ``plugins-config`` as written: namespace -> (its mapping, its JSON pointer in the file).
    plugin_sections: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    #: ``thresholds`` keys that name no rule file: a plugin namespace's (checked by bind_plugin_configs).
    plugin_thresholds: list[str] = field(default_factory=list)
    #: Plugin name -> its validated settings (filled by :func:`bind_plugin_configs`).
    plugin_configs: dict[str, PluginConfig] = field(default_factory=dict)
    #: Sections for installed plugins that are not loaded in this run (not validated): (namespace, origin).
    unloaded_sections: list[tuple[str, str]] = field(default_factory=list)

    def location(self, pointer: str) -> tuple[int, int]:
        return self.locate(pointer) if self.locate is not None else (1, 1)

    def __getitem__(self, key: str) -> Any:
        return self.values[key].value

    @property
    def base(self) -> Path:
        """Paths in the config are relative to its folder (else to the working directory)."""
        return Path(self.path).resolve().parent if self.path else Path.cwd()

    def show(self) -> str:
        width = max(len(key) for key in self.values)
        lines = [f"# config file: {self.path or 'none found'}"]
        for key, setting in self.values.items():
            lines.append(f"{key:<{width}} = {_show(setting.value):<40} # {setting.origin}")
        lines += self._show_plugins()
        for waiver, where in self.waivers:
            expires = f", expires {waiver.expires}" if waiver.expires else ""
            lines.append(
                f"waiver: {waiver.rule} {waiver.path or waiver.spec or ''}{waiver.pointer or ''}: "
                f"{waiver.reason}{expires}  # {where.file}:{where.line}"
            )
        return "\n".join(lines) + "\n"

    def _show_plugins(self) -> list[str]:
        """``plugins-config.NAMESPACE.FIELD = value  # origin`` for every field of every plugin's model."""
        rows = []
        for bound in self.plugin_configs.values():
            dumped = bound.value.model_dump(mode="json", by_alias=True)
            for name, value in dumped.items():
                origin = bound.origins.get(name, "default")
                rows.append((f"plugins-config.{bound.namespace}.{name}", _show(value), origin))
        for namespace, origin in self.unloaded_sections:
            rows.append((f"plugins-config.{namespace}", "(plugin not loaded; not validated)", origin))
        if not rows:
            return []
        width = max(len(row[0]) for row in rows)
        return [f"{key:<{width}} = {value:<20} # {origin}" for key, value, origin in rows]


DEFAULTS: dict[str, Any] = {
    "select": [],
    "ignore": [],
    "fail-on": "fail",
    "severity": {},
    "thresholds": {},
    "pairs": [],
    "matrix": None,
    "plugins": [],
    "exclude": [],
    "baseline": None,
}


#: ``[tool.rigcheck]``, or a table under it (``[tool.rigcheck.plugins-config.site_policy]``).
_TOOL_TABLE = re.compile(r"^\s*\[tool\.rigcheck[\].]", re.MULTILINE)


def find_config(start: Sequence[str]) -> Path | None:
    """The first ``.rigcheck.yaml``/``.yml``, or ``pyproject.toml`` with ``[tool.rigcheck]`` (or a table
    under it), in the folder of the first scanned path or any folder above it."""
    origin = Path(start[0] if start else ".").resolve()
    folder = origin if origin.is_dir() else origin.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if path.is_file():
                return path
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _TOOL_TABLE.search(_config_text(pyproject)):
            return pyproject
    return None


def load_settings(
    paths: Sequence[str],
    *,
    config_path: str | None = None,
    isolated: bool = False,
    cli: Mapping[str, Any] | None = None,
) -> Settings:
    """Defaults, then the config file (``config_path``, or the one found from ``paths``), then the
    command line (``cli``: only the keys the user gave)."""
    settings = Settings({key: Setting(value, "default") for key, value in DEFAULTS.items()})
    path: Path | None = None
    if config_path:
        path = Path(config_path)
        if not path.is_file():
            raise UsageError(f"--config {config_path}: no such file")
    elif not isolated:
        path = find_config(paths)
    if path is not None:
        _apply_file(settings, path)
    _apply_cli(settings, cli)
    return settings


def settings_from(config: Mapping[str, Any] | str, *, cli: Mapping[str, Any] | None = None) -> Settings:
    """Settings from a project config given as data or as YAML text (the test kit's ``run(config=...)``),
    validated as a ``.rigcheck.yaml`` is; its problems name the file ``rigcheck.yaml`` (from text, with
    the lines of the text)."""
    settings = Settings({key: Setting(value, "default") for key, value in DEFAULTS.items()})
    display = "rigcheck.yaml"
    if isinstance(config, str):
        import textwrap

        from rigcheck.core.spec.loader import load_yaml_text

        document = load_yaml_text(textwrap.dedent(config), display)
        data = document.data if document.data is not None else {}

        def locate(pointer: str) -> tuple[int, int]:
            _, mark = document.source_map.locate(pointer)
            return mark.line, mark.column

    else:
        data, locate = dict(config), (lambda pointer: (1, 1))
    if not isinstance(data, dict):
        raise SpecError(Problem(display, "a config file is a mapping of settings", 1, 1, "", "CONFIG001"))
    _apply_data(settings, data, locate, display)
    _apply_cli(settings, cli)
    return settings


def _apply_cli(settings: Settings, cli: Mapping[str, Any] | None) -> None:
    for key, value in (cli or {}).items():
        if key in ("exclude", "extend-exclude"):  # typed relative to the working folder
            value = _from_working_folder(value, settings.base)
        if key == "extend-exclude":  # --extend-exclude adds to the config's exclude
            chosen = settings.values["exclude"]
            origin = f"{chosen.origin} + command line" if chosen.value else "command line"
            settings.values["exclude"] = Setting([*chosen.value, *value], origin)
            continue
        if key == "extend-select":  # --extend-select adds to the selection (an empty one selects every rule)
            chosen = settings.values["select"]
            if chosen.value:
                settings.values["select"] = Setting(
                    [*chosen.value, *value], f"{chosen.origin} + command line"
                )
            continue
        if key == "ignore" and settings.values["ignore"].value:  # --ignore adds to the file's list
            value = [*settings.values["ignore"].value, *value]
            origin = f"{settings.values['ignore'].origin} + command line"
        else:
            origin = "command line"
        settings.values[key] = Setting(value, origin)


def _from_working_folder(patterns: Sequence[str], base: Path) -> list[str]:
    """Command-line ``--exclude`` globs, typed relative to the working folder, as the config's are written:
    relative to ``base`` (the config's folder). A glob without a slash matches a name anywhere and is kept."""
    offset = os.path.relpath(Path.cwd(), base).replace(os.sep, "/")
    if offset in (".", "") or offset.startswith(".."):
        return list(patterns)
    return [pattern if "/" not in pattern.rstrip("/") else f"{offset}/{pattern}" for pattern in patterns]


def _apply_file(settings: Settings, path: Path) -> None:
    data, locate = _read(path)
    _apply_data(settings, data, locate, _display(path))


def _apply_data(settings: Settings, data: dict[str, Any], locate: Any, display: str) -> None:
    try:
        parsed = ConfigFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = [
                part for part in error["loc"] if not isinstance(part, str) or not part.startswith("function")
            ]
            pointer = "".join(f"/{part}" for part in loc)
            line, column = locate(pointer)
            message = error["msg"]
            if error["type"] == "extra_forbidden":
                from rigcheck.core.spec.fields import did_you_mean

                names = [_kebab(name) for name in ConfigFile.model_fields]
                message = f"unknown key {loc[-1]!r}{did_you_mean(str(loc[-1]), names)}"
            problems.append(Problem(display, message, line, column, pointer, "CONFIG001"))
        raise SpecError(problems) from None
    settings.path = display
    settings.locate = locate
    explicit = parsed.model_dump(by_alias=True, exclude_none=True)
    for key, value in explicit.items():
        if key in ("waivers", "plugins-config"):
            continue
        settings.values[key] = Setting(value, display)
    written = "plugins-config" if "plugins-config" in data else "plugins_config"
    for namespace, section in (parsed.plugins_config or {}).items():
        settings.plugin_sections[namespace] = (section, pointer_from_path((written, namespace)))
    for index, waiver in enumerate(parsed.waivers or ()):
        line, column = locate(f"/waivers/{index}")
        settings.waivers.append((waiver, Problem(display, "", line, column, f"/waivers/{index}", "SUP003")))
    _check_thresholds(settings, locate, display)


def _read(path: Path) -> tuple[Any, Any]:
    """The config data, and a function from a JSON pointer to (line, column)."""
    if path.name == "pyproject.toml":
        try:
            import tomllib  # type: ignore[import-not-found,unused-ignore]
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
        try:
            data = tomllib.loads(_config_text(path))
        except SpecError:
            raise
        except Exception as exc:
            raise SpecError(
                Problem(_display(path), f"not valid TOML: {exc}", 1, 1, "", "CONFIG001")
            ) from None
        section = data.get("tool", {}).get("rigcheck", {})
        header = _toml_header_line(path)
        return section, lambda pointer: (header, 1)
    from rigcheck.core.spec.loader import load_yaml_text

    document = load_yaml_text(_config_text(path), _display(path))
    data = document.data if document.data is not None else {}
    if not isinstance(data, dict):
        raise SpecError(
            Problem(_display(path), "a config file is a mapping of settings", 1, 1, "", "CONFIG001")
        )

    def locate(pointer: str) -> tuple[int, int]:
        _, mark = document.source_map.locate(pointer)
        return mark.line, mark.column

    return data, locate


#: The most of a project config rigcheck reads (the largest real one is a few KiB).
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def _config_text(path: Path) -> str:
    """A config file's text, read through the boundary (:func:`rigcheck.core.spec.boundary.read_named`: a
    link out of the repository, a device, a FIFO or a file over :data:`MAX_CONFIG_BYTES` is a
    one-line CONFIG001 error, never read)."""
    from rigcheck.core.spec.boundary import BoundaryError, read_named

    try:
        data = read_named(path, MAX_CONFIG_BYTES)
    except BoundaryError as exc:
        raise SpecError(Problem(_display(path), exc.reason, 1, 1, "", "CONFIG001")) from None
    except OSError as exc:
        raise SpecError(
            Problem(_display(path), f"cannot read the file: {exc.strerror or exc}", 1, 1, "", "CONFIG001")
        ) from None
    return data.decode("utf-8-sig", errors="replace")


def _toml_header_line(path: Path) -> int:
    for number, line in enumerate(_config_text(path).splitlines(), start=1):
        if line.strip().startswith("[tool.rigcheck"):
            return number
    return 1


#: No threshold in specs/rules/*.yaml is negative or above 1e15 (the largest is a byte count of 2^30);
#: an override outside [0, MAX_THRESHOLD] (or a fraction outside [0, 1]) is a typo or an attack.
MAX_THRESHOLD = 1e15


def _threshold_out_of_range(key: str, name: str, value: float) -> str | None:
    """Why a numeric override cannot be a threshold: not finite, negative, or past its bound."""
    import math

    top = 1.0 if "fraction" in name else MAX_THRESHOLD
    if isinstance(value, float) and not math.isfinite(value):
        return f"threshold {key!r} must be a finite number, not {value!r}"
    if not 0 <= value <= top:
        return f"threshold {key!r} must be between 0 and {top:g}; {value!r} is not"
    return None


def _check_thresholds(settings: Settings, locate: Any, display: str) -> None:
    """Every threshold names an existing number (or flag) in specs/rules/*.yaml, of the same type."""
    from rigcheck.core.catalog.facts import load_rule_facts
    from rigcheck.core.spec.fields import did_you_mean
    from rigcheck.resources import rules_data_file

    for key, value in settings["thresholds"].items():
        pointer = f"/thresholds/{key}"
        parts = key.split(".")
        problem = None
        if len(parts) >= 2 and all(parts) and not rules_data_file(f"{parts[0]}.yaml").is_file():
            settings.plugin_thresholds.append(key)  # a plugin's, checked once plugins are loaded
            continue
        if len(parts) != 3:
            problem = f"threshold {key!r}: write file.section.key, e.g. power.sustained.warn_above_fraction"
        elif not rules_data_file(f"{parts[0]}.yaml").is_file():
            names = sorted(p.stem for p in rules_data_file("x").parent.glob("*.yaml"))
            problem = f"threshold {key!r}: no rule file {parts[0]!r}{did_you_mean(parts[0], names)}"
        else:
            sections = load_rule_facts(parts[0])
            section = sections.get(parts[1])
            if section is None:
                problem = f"threshold {key!r}: no section {parts[1]!r}{did_you_mean(parts[1], sections)}"
            elif parts[2] not in section or parts[2] in ("source", "as_of", "confidence"):
                keys = [k for k in section if k not in ("source", "as_of", "confidence")]
                problem = f"threshold {key!r}: no value {parts[2]!r}{did_you_mean(parts[2], keys)}"
            else:
                current = section[parts[2]]
                if isinstance(current, bool) != isinstance(value, bool) or (
                    isinstance(current, (int, float)) and not isinstance(value, (int, float))
                ):
                    problem = f"threshold {key!r} is {current!r} in the data; {value!r} is not the same kind of value"
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    problem = _threshold_out_of_range(key, parts[2], value)
        if problem:
            line, column = locate(pointer)
            raise SpecError(Problem(display, problem, line, column, pointer, "CONFIG001"))


def fact_overrides(settings: Settings) -> dict[str, tuple[Any, str]]:
    """``{"power.sustained.warn_above_fraction": (0.85, ".rigcheck.yaml")}`` for CheckContext.facts."""
    origin = settings.values["thresholds"].origin
    plugin_keys = set(settings.plugin_thresholds)
    return {key: (value, origin) for key, value in settings["thresholds"].items() if key not in plugin_keys}


def bind_plugin_configs(settings: Settings, registry: "Registry") -> dict[str, Any]:
    """Validate ``plugins-config`` and the plugins' ``thresholds`` against the models the loaded plugins
    registered (``rigcheck_config_schema``); fills ``settings.plugin_configs`` and returns
    ``{plugin name: model instance}`` for the run. A bad value, an unknown key or a section that names
    no plugin is a :class:`SpecError` at its file, line and field (exit code 2, ``CONFIG001``)."""
    import copy

    from rigcheck.core.engine.plugin_manager import normalise_name

    by_namespace = {normalise_name(schema.namespace): schema for schema in registry.config_schemas.values()}
    data: dict[str, dict[str, Any]] = {}  # plugin -> the mapping to validate
    origins: dict[str, dict[str, str]] = {}  # plugin -> top-level key -> JSON pointer of what set it
    sections: dict[str, str] = {}  # plugin -> pointer of its plugins-config section
    for namespace, (section, pointer) in settings.plugin_sections.items():
        schema = by_namespace.get(normalise_name(namespace))
        if schema is None:
            _unclaimed_section(settings, registry, namespace, pointer, list(by_namespace.values()))
            continue
        name = schema.plugin.name
        if name in data:
            _fail(settings, pointer, f"plugins-config: {namespace!r} names plugin {name!r} a second time")
        data[name] = copy.deepcopy(section)
        sections[name] = pointer
        origins[name] = {key: join_pointer(pointer, key) for key in section}
    for key in settings.plugin_thresholds:
        pointer = join_pointer("/thresholds", key)
        first, *path = key.split(".")
        schema = by_namespace.get(normalise_name(first))
        if schema is None:
            from rigcheck.core.spec.fields import did_you_mean
            from rigcheck.resources import rules_data_file

            names = [p.stem for p in rules_data_file("x").parent.glob("*.yaml")]
            names += [schema.namespace for schema in by_namespace.values()]
            hint = did_you_mean(first, names)
            _fail(
                settings,
                pointer,
                f"threshold {key!r}: no rule file or plugin config namespace {first!r}{hint}",
            )
            continue
        name = schema.plugin.name
        target = data.setdefault(name, {})
        for step in path[:-1]:
            target = target.setdefault(step, {})
            if not isinstance(target, dict):
                _fail(
                    settings,
                    pointer,
                    f"threshold {key!r}: {step!r} of plugin {name!r} is not a group of settings",
                )
        if path[-1] in target:
            _fail(
                settings, pointer, f"threshold {key!r} sets a value that plugins-config sets too; set it once"
            )
        target[path[-1]] = settings["thresholds"][key]
        origins.setdefault(name, {}).setdefault(path[0], pointer)
    out: dict[str, Any] = {}
    for schema in registry.config_schemas.values():
        name = schema.plugin.name
        given = data.get(name)
        value = schema.default
        if given is not None:
            value = _validate_section(
                settings, schema, given, origins[name], sections.get(name, "/thresholds")
            )
        shown = {
            key: f"{settings.path or 'config'}:{settings.location(pointer)[0]}"
            + (" (thresholds)" if pointer.startswith("/thresholds/") else "")
            for key, pointer in origins.get(name, {}).items()
        }
        settings.plugin_configs[name] = PluginConfig(
            name, schema.plugin.version, schema.namespace, value, shown
        )
        out[name] = value
    return out


def _fail(settings: Settings, pointer: str, message: str) -> None:
    line, column = settings.location(pointer)
    raise SpecError(Problem(settings.path or "config", message, line, column, pointer, "CONFIG001"))


def _validate_section(
    settings: Settings, schema: "ConfigSchema", given: dict[str, Any], origins: dict[str, str], section: str
) -> Any:
    """The plugin's model built from ``given``. Each unknown key (unless the model allows extra keys) and
    each value the model refuses is a problem at the line that set it."""
    from pydantic import ValidationError

    from rigcheck.core.spec.fields import did_you_mean
    from rigcheck.core.spec.positions import split_pointer

    model = schema.model
    label = f"plugins-config.{schema.namespace} (plugin {schema.plugin.name}, {model.__name__})"
    display = settings.path or "config"

    def problem(pointer: str, message: str) -> Problem:
        line, column = settings.location(pointer)
        return Problem(display, f"{label}: {message}", line, column, pointer, "CONFIG001")

    known = [info.alias or name for name, info in model.model_fields.items()]
    accepted = set(known) | set(model.model_fields)
    problems = []
    if model.model_config.get("extra") != "allow":
        problems = [
            problem(origins[key], f"unknown key {key!r}{did_you_mean(key, known)}")
            for key in given
            if key not in accepted
        ]
    try:
        value = model.model_validate(
            {key: item for key, item in given.items() if key in accepted or not problems}
        )
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            loc = [str(part) for part in error["loc"]]
            pointer = origins.get(loc[0], section) if loc else section
            if loc and not pointer.startswith("/thresholds"):
                pointer = pointer_from_path([*split_pointer(pointer), *loc[1:]])
            got = "" if error["type"] == "missing" else f" (got {clip(repr(error.get('input')), 80)})"
            problems.append(problem(pointer, f"{'.'.join(loc) or '(settings)'}: {error['msg']}{got}"))
    except Exception as exc:  # the plugin's validator crashed: say so in one line, no traceback
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        problems.append(
            problem(section, f"the plugin's model raised {clip(detail, 300)} (a bug of the plugin)")
        )
    if problems:
        raise SpecError(problems)
    return value


def _unclaimed_section(
    settings: Settings, registry: "Registry", namespace: str, pointer: str, schemas: "list[ConfigSchema]"
) -> None:
    """A ``plugins-config`` section that no loaded plugin's model claims: one for an installed plugin that
    is not loaded in this run (blocked, autoload off) is left unread and shown; anything else is an error."""
    from rigcheck.core.engine.plugin_manager import installed_plugin_names, normalise_name
    from rigcheck.core.spec.fields import did_you_mean

    wanted = normalise_name(namespace)
    loaded = {normalise_name(info.name): info.name for info in registry.plugins}
    if wanted in loaded:
        _fail(
            settings,
            pointer,
            f"plugins-config: plugin {loaded[wanted]!r} has no settings (it registers no model with "
            f"rigcheck_config_schema)",
        )
    if wanted in {normalise_name(name) for name in installed_plugin_names()}:
        line = settings.location(pointer)[0]
        settings.unloaded_sections.append((namespace, f"{settings.path or 'config'}:{line}"))
        return
    hint = did_you_mean(namespace, [schema.namespace for schema in schemas])
    _fail(
        settings,
        pointer,
        f"plugins-config: {namespace!r} is the settings namespace of no loaded plugin{hint} (a plugin's "
        f"namespace is its name unless it declares one; rigcheck plugins lists the loaded plugins)",
    )


def _relative(file: str, base: Path) -> str:
    try:
        return os.path.relpath(Path(file).resolve(), base).replace(os.sep, "/")
    except ValueError:
        return file.replace(os.sep, "/")


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_show(item)}" for key, item in value.items()) + "}"
    return "null" if value is None else str(value)
