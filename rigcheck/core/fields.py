"""Field types shared by the spec models: quantities with units, enumerations with aliases,
one-or-many lists, and the strict base model (unknown fields are errors)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from rigcheck.core.units import QUANTITY_PATTERN, UnitError, convert

T = TypeVar("T")


class SpecModel(BaseModel):
    """Base of every spec model: unknown fields are errors, values are validated on assignment."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        str_strip_whitespace=True,
        allow_inf_nan=False,
        validate_assignment=True,
    )


def quantity(
    dimension: str,
    unit: str,
    *,
    description: str = "",
    ge: float | None = 0,
    gt: float | None = None,
    le: float | None = None,
) -> Any:
    """An annotated ``float`` in ``unit``; accepts a bare number or a string with a unit.

    ``quantity("bytes", "GiB")`` accepts ``64``, ``"64 GiB"`` and ``"68.7 GB"``.
    """

    def parse(value: object) -> object:
        if value is None:
            return None
        try:
            return convert(value, dimension, unit)
        except UnitError as exc:
            raise ValueError(str(exc)) from None

    number_schema: dict[str, Any] = {"type": "number"}
    if ge is not None:
        number_schema["minimum"] = ge
    if gt is not None:
        number_schema["exclusiveMinimum"] = gt
    if le is not None:
        number_schema["maximum"] = le
    text = description or f"In {unit}; a string with a unit is converted (e.g. '{_example(unit)}')."
    schema = {"anyOf": [number_schema, {"type": "string", "pattern": QUANTITY_PATTERN}], "description": text}
    return Annotated[float, BeforeValidator(parse), Field(ge=ge, gt=gt, le=le), WithJsonSchema(schema)]


def _example(unit: str) -> str:
    return {"GiB": "64 GiB", "W": "1.6 kW", "mm": "267 mm", "GB": "2 TB", "Gb/s": "400 Gb/s"}.get(
        unit, f"1 {unit}"
    )


def _normal(text: str) -> str:
    return text.strip().lower().replace("_", "-").replace(" ", "-")


def choice(*values: str, aliases: dict[str, str] | None = None, description: str = "") -> Any:
    """An enumerated string: matched case-insensitively, ``_``, ``-`` and spaces alike.

    ``aliases`` maps other spellings to a canonical value (``"bf16" -> "bf16-mixed"``).
    A value that matches nothing is an error listing the choices and the nearest one.
    """
    aliases = aliases or {}
    lookup = {_normal(value): value for value in values}
    lookup.update({_normal(alias): target for alias, target in aliases.items()})

    def parse(value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise ValueError(f"expected one of {_or_list(values)}")
        found = lookup.get(_normal(value))
        if found is None:
            near = difflib.get_close_matches(_normal(value), list(lookup), n=1, cutoff=0.6)
            hint = f"; did you mean {lookup[near[0]]!r}?" if near else ""
            raise ValueError(f"{value!r} is not one of {_or_list(values)}{hint}")
        return found

    schema: dict[str, Any] = {"type": "string", "enum": [*values, *aliases]}
    if description:
        schema["description"] = description
    return Annotated[str, BeforeValidator(parse), WithJsonSchema(schema)]


def one_or_many(item: type[T]) -> Any:
    """A list of ``item`` that may be written as a single mapping (``gpus: {...}``)."""

    def wrap(value: object) -> object:
        return [value] if isinstance(value, dict) else value

    schema_input = Union[item, list[item]]  # noqa: UP007 - a runtime type expression
    return Annotated[list[item], BeforeValidator(wrap, json_schema_input_type=schema_input)]


def string_map() -> Any:
    """A mapping of names to strings; numbers and booleans are written back as YAML text."""

    def coerce(value: object) -> object:
        if not isinstance(value, dict):
            return value
        out: dict[object, object] = {}
        for key, item in value.items():
            if isinstance(item, bool):
                item = "true" if item else "false"
            elif isinstance(item, int | float):
                item = str(item)
            out[key] = item
        return out

    schema = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}
    return Annotated[dict[str, str], BeforeValidator(coerce), WithJsonSchema(schema)]


def version_string() -> Any:
    """A version such as ``"535.104.05"`` or ``"12.4"``; a YAML number (``12.4``) is read as its text."""

    def coerce(value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    schema = {"type": ["string", "number"]}
    return Annotated[str, BeforeValidator(coerce), WithJsonSchema(schema)]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'memory_gib'?"`` for the closest candidate, or ``""``."""
    pool = list(candidates)
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in pool}
        matches = [
            lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
        ]
    return f"; did you mean {matches[0]!r}?" if matches else ""


def _or_list(values: Iterable[str]) -> str:
    items = [repr(value) for value in values]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


Count = Annotated[int, Field(ge=1, description="How many; at least 1.")]
Port = Annotated[int, Field(ge=1, le=65535)]
ApiVersion = Literal["rigcheck/v1"]
