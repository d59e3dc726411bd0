"""Field types shared by the spec models: quantities with units, bounded numbers, enumerations with
aliases, one-or-many lists, and the strict base model (unknown fields are errors).

Every number a spec holds is finite and bounded (issue 15: a pull request is hostile input): each
quantity and count has a maximum no real rig reaches, so no arithmetic downstream overflows, and a
number too long to convert is refused before Python's ``int()`` or ``float()`` sees it.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from rigcheck.core.errors import clip
from rigcheck.core.numbers import fmt
from rigcheck.core.units import (
    MAX_DIGITS,
    QUANTITY_PATTERN,
    TooLarge,
    UnitError,
    convert,
    digits,
    many_digits,
)

T = TypeVar("T")


#: The longest string any spec field takes (a note, an NCCL setting, a path); a name is at most
#: :data:`MAX_NAME` (a DNS name's limit, RFC 1035 section 2.3.4). A pull request's 20 MB name was
#: otherwise copied into every finding of the rig (1.5 GB of JSON report).
MAX_STRING = 4096
MAX_NAME = 253


class SpecModel(BaseModel):
    """Base of every spec model: unknown fields are errors, values are validated on assignment,
    strings are at most :data:`MAX_STRING` characters."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        str_strip_whitespace=True,
        str_max_length=MAX_STRING,
        allow_inf_nan=False,
        validate_assignment=True,
    )


def _shown(number: float, unit: str = "") -> str:
    text = f"{number:.3g}" if abs(number) >= 1e15 else fmt(number, 4)
    return f"{text} {unit}" if unit else text


def _out_of_range(
    shown: str, negative: bool, ge: float | None, gt: float | None, le: float, unit: str
) -> ValueError:
    """The one-line error for a number past a field's bounds, in the field's unit."""
    u = f" {unit}" if unit else ""
    if not negative:
        return ValueError(f"must be at most {fmt(le)}{u}, got {shown}")
    if gt is not None:
        return ValueError(f"must be greater than {fmt(gt)}{u}, got {shown}")
    if ge is not None:
        return ValueError(f"must be at least {fmt(ge)}{u}, got {shown}")
    return ValueError(f"expected a number of at most {MAX_DIGITS} digits, got {shown}")


def _refuse_extreme(value: object, ge: float | None, gt: float | None, le: float, unit: str = "") -> None:
    """Refuse, before pydantic converts it, a number above ``le``, a non-finite one, and one too long to
    convert (a huge negative too: its lower bound is named). Lower bounds are otherwise pydantic's."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if digits(value) > MAX_DIGITS:
            raise _out_of_range(many_digits(value), value < 0, ge, gt, le, unit)
        if value > le:
            raise _out_of_range(_shown(value, unit), False, ge, gt, le, unit)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"expected a finite number, got {value}")
        if value > le:
            raise _out_of_range(_shown(value, unit), False, ge, gt, le, unit)
    elif isinstance(value, str):
        text = value.strip().replace("_", "").lstrip("+-")
        if len(text) > MAX_DIGITS and text.replace(".", "", 1).isdigit():
            raise _out_of_range(
                f"a {len(text):,}-digit number", value.strip().startswith("-"), ge, gt, le, unit
            )


def quantity(
    dimension: str,
    unit: str,
    *,
    le: float,
    description: str = "",
    ge: float | None = 0,
    gt: float | None = None,
) -> Any:
    """An annotated ``float`` in ``unit``, at most ``le``; accepts a bare number or a string with a unit.

    ``quantity("bytes", "GiB", le=2**20)`` accepts ``64``, ``"64 GiB"`` and ``"68.7 GB"``.
    """

    def parse(value: object) -> object:
        if value is None:
            return None
        try:
            number = convert(value, dimension, unit)
        except TooLarge as exc:
            raise _out_of_range(exc.shown, exc.negative, ge, gt, le, unit) from None
        except UnitError as exc:
            raise ValueError(str(exc)) from None
        _refuse_extreme(number, ge, gt, le, unit)
        return number

    number_schema: dict[str, Any] = {"type": "number", "maximum": le}
    if ge is not None:
        number_schema["minimum"] = ge
    if gt is not None:
        number_schema["exclusiveMinimum"] = gt
    text = description or f"In {unit}; a string with a unit is converted (e.g. '{_example(unit)}')."
    schema = {"anyOf": [number_schema, {"type": "string", "pattern": QUANTITY_PATTERN}], "description": text}
    return Annotated[float, Field(ge=ge, gt=gt, le=le), BeforeValidator(parse), WithJsonSchema(schema)]


def whole(*, le: int, ge: int | None = 1, description: str | None = None) -> Any:
    """An annotated ``int`` from ``ge`` to ``le``; a longer or larger number is a one-line error."""

    def parse(value: object) -> object:
        _refuse_extreme(value, ge, None, le)
        return value

    return Annotated[int, Field(ge=ge, le=le, description=description), BeforeValidator(parse)]


def number(
    *,
    le: float | None = None,
    lt: float | None = None,
    ge: float | None = None,
    gt: float | None = None,
    description: str | None = None,
) -> Any:
    """An annotated finite ``float`` at most ``le`` (or below ``lt``), from ``ge`` (or above ``gt``)."""
    bound = le if le is not None else lt
    if bound is None:
        raise TypeError("number() needs an upper bound, le or lt")

    def parse(value: object) -> object:
        _refuse_extreme(value, ge, gt, bound)
        return value

    return Annotated[
        float, Field(ge=ge, gt=gt, le=le, lt=lt, description=description), BeforeValidator(parse)
    ]


def _example(unit: str) -> str:
    return {"GiB": "64 GiB", "W": "1.6 kW", "mm": "267 mm", "GB": "2 TB", "Gb/s": "400 Gb/s"}.get(
        unit, f"1 {unit}"
    )


def _text_of(value: float) -> str:
    """A YAML number read as text (``12.4`` -> ``"12.4"``); refused past :data:`MAX_DIGITS` digits (``str()``
    of a 4,300-digit int raises)."""
    if isinstance(value, int) and digits(value) > MAX_DIGITS:
        raise ValueError(f"expected text, got {many_digits(value)}")
    return str(value)


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
            value = _text_of(value)
        if not isinstance(value, str):
            raise ValueError(f"expected one of {_or_list(values)}")
        found = lookup.get(_normal(value))
        if found is None:
            near = (
                difflib.get_close_matches(_normal(value), list(lookup), n=1, cutoff=0.6)
                if len(value) <= 100
                else []
            )
            hint = f"; did you mean {lookup[near[0]]!r}?" if near else ""
            raise ValueError(f"{clip(repr(value), 120)} is not one of {_or_list(values)}{hint}")
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
                item = _text_of(item)
            out[key] = item
        return out

    schema = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}
    return Annotated[dict[str, str], BeforeValidator(coerce), WithJsonSchema(schema)]


def version_string() -> Any:
    """A version such as ``"535.104.05"`` or ``"12.4"``; a YAML number (``12.4``) is read as its text."""

    def coerce(value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _text_of(value)
        return value

    schema = {"type": ["string", "number"]}
    return Annotated[str, BeforeValidator(coerce), WithJsonSchema(schema)]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'memory_gib'?"`` for the closest candidate, or ``""`` (also for a word too long
    to be a misspelling: fuzzy matching a long value costs seconds)."""
    if len(word) > 100:
        return ""
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


def count(le: int) -> Any:
    """How many of something: at least 1, at most ``le``."""
    return whole(le=le, description=f"How many; from 1 to {le:,}.")


#: Nodes of a group, devices of a kind: at most a million.
Count = count(1_000_000)
Port = whole(le=65535)
ApiVersion = Literal["rigcheck/v1"]
