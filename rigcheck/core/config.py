"""Project configuration: ``.rigcheck.yaml`` (or ``.rigcheck.yml``, or ``[tool.rigcheck]`` in
``pyproject.toml``), found from the scanned path upward, validated, and merged with the command line.

Keys are kebab-case as in ruff's and Checkov's files (snake_case is accepted too). Every value keeps
where it came from (default, the file, or the command line), which ``--show-config`` prints. The
schema is ``schemas/config.schema.json``.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rigcheck.core.errors import Problem, SpecError, UsageError

CONFIG_NAMES = (".rigcheck.yaml", ".rigcheck.yml")
_CODE = re.compile(r"^(ALL|[A-Z][A-Z0-9]*)$")


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class _ConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=_kebab, populate_by_name=True, frozen=True)


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
    def _scoped(self) -> Waiver:
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

    select: list[str] | None = Field(None, description="Rule codes or prefixes to run (default: all).")
    ignore: list[str] | None = Field(None, description="Rule codes or prefixes not to run.")
    fail_on: Literal["warn", "fail"] | None = Field(None, description="Exit 1 at this severity.")
    severity: dict[str, Literal["fail", "warn", "off"]] | None = Field(
        None, description="Per-rule (or prefix) severity of its warnings and failures; off turns it off."
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


@dataclass(frozen=True)
class Setting:
    value: Any
    origin: str  # "default", a config file path, or "command line"


@dataclass
class Settings:
    """The effective configuration with the origin of every value."""

    values: dict[str, Setting] = field(default_factory=dict)
    path: str | None = None  # the config file, if one was used
    waivers: list[tuple[Waiver, Problem]] = field(default_factory=list)  # each with its position
    locate: Any = None  # JSON pointer in the config file -> (line, column)

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
        for waiver, where in self.waivers:
            expires = f", expires {waiver.expires}" if waiver.expires else ""
            lines.append(
                f"waiver: {waiver.rule} {waiver.path or waiver.spec or ''}{waiver.pointer or ''}: "
                f"{waiver.reason}{expires}  # {where.file}:{where.line}"
            )
        return "\n".join(lines) + "\n"


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


def find_config(start: Sequence[str]) -> Path | None:
    """The first ``.rigcheck.yaml``/``.yml``, or ``pyproject.toml`` with ``[tool.rigcheck]``, in the
    folder of the first scanned path or any folder above it."""
    origin = Path(start[0] if start else ".").resolve()
    folder = origin if origin.is_dir() else origin.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if path.is_file():
                return path
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and "[tool.rigcheck]" in pyproject.read_text(
            encoding="utf-8", errors="replace"
        ):
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
    for key, value in (cli or {}).items():
        if key == "ignore" and settings.values["ignore"].value:  # --ignore adds to the file's list
            value = [*settings.values["ignore"].value, *value]
            origin = f"{settings.values['ignore'].origin} + command line"
        else:
            origin = "command line"
        settings.values[key] = Setting(value, origin)
    return settings


def _apply_file(settings: Settings, path: Path) -> None:
    data, locate = _read(path)
    display = _display(path)
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
                from rigcheck.core.fields import did_you_mean

                names = [_kebab(name) for name in ConfigFile.model_fields]
                message = f"unknown key {loc[-1]!r}{did_you_mean(str(loc[-1]), names)}"
            problems.append(Problem(display, message, line, column, pointer, "CONFIG001"))
        raise SpecError(problems) from None
    settings.path = display
    settings.locate = locate
    explicit = parsed.model_dump(by_alias=True, exclude_none=True)
    for key, value in explicit.items():
        if key == "waivers":
            continue
        settings.values[key] = Setting(value, display)
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
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except Exception as exc:
            raise SpecError(
                Problem(_display(path), f"not valid TOML: {exc}", 1, 1, "", "CONFIG001")
            ) from None
        section = data.get("tool", {}).get("rigcheck", {})
        header = _toml_header_line(path)
        return section, lambda pointer: (header, 1)
    from rigcheck.core.loader import load_yaml_file

    document = load_yaml_file(str(path))
    data = document.data if document.data is not None else {}
    if not isinstance(data, dict):
        raise SpecError(
            Problem(_display(path), "a config file is a mapping of settings", 1, 1, "", "CONFIG001")
        )

    def locate(pointer: str) -> tuple[int, int]:
        _, mark = document.source_map.locate(pointer)
        return mark.line, mark.column

    return data, locate


def _toml_header_line(path: Path) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
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
    from rigcheck._resources import rules_data_file
    from rigcheck.core.facts import load_rule_facts
    from rigcheck.core.fields import did_you_mean

    for key, value in settings["thresholds"].items():
        pointer = f"/thresholds/{key}"
        parts = key.split(".")
        problem = None
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
    return {key: (value, origin) for key, value in settings["thresholds"].items()}


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
