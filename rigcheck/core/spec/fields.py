"""Field types shared by the spec models: quantities with units, bounded numbers, enumerations with
aliases, one-or-many lists, and the strict base model (unknown fields are errors).

Each is an ``Annotated`` type, so mypy sees the plain type and pydantic the constraints:
``Annotated[float, Quantity("watts", "W", le=100_000)]`` is a ``float``; the metadata classes (:class:`Quantity`,
:class:`Whole`, :class:`Number`, :class:`Choice`, :class:`OneOrMany`) are ``annotated_types.GroupedMetadata``,
which pydantic unpacks into the constraints, validators and JSON schema they hold.

Every number a spec holds is finite and bounded (issue 15: a pull request is hostile input): each
quantity and count has a maximum no real rig reaches, so no arithmetic downstream overflows, and a
number too long to convert is refused before Python's ``int()`` or ``float()`` sees it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator
from types import GenericAlias
from typing import Annotated, Any, ClassVar, Literal

import annotated_types as at
from annotated_types import GroupedMetadata
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, GetCoreSchemaHandler, WithJsonSchema
from pydantic_core import CoreSchema, core_schema

from rigcheck.core.engine.errors import clip
from rigcheck.core.spec.numbers import fmt
from rigcheck.core.spec.units import (
    MAX_DIGITS,
    QUANTITY_PATTERN,
    TooLarge,
    UnitError,
    convert,
    digits,
    many_digits,
)

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


class Before:
    """``Annotated[T, Before(function)]``: ``function(value)`` runs before pydantic validates ``T``, as with
    pydantic's ``BeforeValidator``, for a function of the value alone.

    ``BeforeValidator`` inspects the function's signature at every field it annotates, to learn whether it
    also takes a validation-info argument; these never do. That inspection was 184 signature calls while
    the spec models are built at the start of every run (issue 20)."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self.function, handler(source))


class Quantity(GroupedMetadata):
    """``Annotated[float, Quantity(...)]``: a ``float`` in ``unit``, at most ``le``; a bare number or a string
    with a unit.

    ``Annotated[float, Quantity("bytes", "GiB", le=2**20)]`` accepts ``64``, ``"64 GiB"`` and ``"68.7 GB"``.
    """

    def __init__(
        self,
        dimension: str,
        unit: str,
        *,
        le: float,
        description: str = "",
        ge: float | None = 0,
        gt: float | None = None,
    ) -> None:
        self.dimension, self.unit, self.le, self.ge, self.gt = dimension, unit, le, ge, gt
        number_schema: dict[str, Any] = {"type": "number", "maximum": le}
        if ge is not None:
            number_schema["minimum"] = ge
        if gt is not None:
            number_schema["exclusiveMinimum"] = gt
        text = description or f"In {unit}; a string with a unit is converted (e.g. '{_example(unit)}')."
        schema = {
            "anyOf": [number_schema, {"type": "string", "pattern": QUANTITY_PATTERN}],
            "description": text,
        }
        self._metadata = (*_bounds(ge=ge, gt=gt, le=le), Before(self.parse), WithJsonSchema(schema))

    def parse(self, value: object) -> object:
        """The value in ``unit`` (pydantic's before-validator; the name shows in a union's error location)."""
        if value is None:
            return None
        try:
            number = convert(value, self.dimension, self.unit)
        except TooLarge as exc:
            raise _out_of_range(exc.shown, exc.negative, self.ge, self.gt, self.le, self.unit) from None
        except UnitError as exc:
            raise ValueError(str(exc)) from None
        _refuse_extreme(number, self.ge, self.gt, self.le, self.unit)
        return number

    def __iter__(self) -> Iterator[object]:
        return iter(self._metadata)

    def __repr__(self) -> str:
        return f"Quantity({self.dimension!r}, {self.unit!r}, le={self.le!r}, ge={self.ge!r}, gt={self.gt!r})"


class Whole(GroupedMetadata):
    """``Annotated[int, Whole(le=...)]``: an ``int`` from ``ge`` to ``le``; a longer or larger number is a one-line
    error. (A field's description goes in its ``Field``.)"""

    def __init__(self, *, le: int, ge: int | None = 1) -> None:
        self.le, self.ge = le, ge
        self._metadata = (*_bounds(ge=ge, le=le), Before(self.parse))

    def parse(self, value: object) -> object:
        """The value, unless too long or past ``le`` (pydantic checks it is an int within the bounds)."""
        _refuse_extreme(value, self.ge, None, self.le)
        return value

    def __iter__(self) -> Iterator[object]:
        return iter(self._metadata)

    def __repr__(self) -> str:
        return f"Whole(le={self.le!r}, ge={self.ge!r})"


class Number(GroupedMetadata):
    """``Annotated[float, Number(...)]``: a finite ``float`` at most ``le`` (or below ``lt``), from ``ge`` (or above
    ``gt``)."""

    def __init__(
        self,
        *,
        le: float | None = None,
        lt: float | None = None,
        ge: float | None = None,
        gt: float | None = None,
    ) -> None:
        bound = le if le is not None else lt
        if bound is None:
            raise TypeError("Number() needs an upper bound, le or lt")
        self.le, self.lt, self.ge, self.gt, self._bound = le, lt, ge, gt, bound
        self._metadata = (*_bounds(ge=ge, gt=gt, le=le, lt=lt), Before(self.parse))

    def parse(self, value: object) -> object:
        """The value, unless too long, not finite or past the upper bound (pydantic checks the rest)."""
        _refuse_extreme(value, self.ge, self.gt, self._bound)
        return value

    def __iter__(self) -> Iterator[object]:
        return iter(self._metadata)

    def __repr__(self) -> str:
        return f"Number(le={self.le!r}, lt={self.lt!r}, ge={self.ge!r}, gt={self.gt!r})"


def _bounds(
    *, ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None
) -> list[at.BaseMetadata]:
    """The bounds given, as the constraints ``Field(gt=..., ge=..., lt=..., le=...)`` holds."""
    given = [(at.Gt, gt), (at.Ge, ge), (at.Lt, lt), (at.Le, le)]
    return [constraint(bound) for constraint, bound in given if bound is not None]


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


#: Characters a regular expression treats specially (ECMA-262 and Python alike); others stand for themselves.
_REGEX_SYNTAX = frozenset("^$\\.*+?()[]{}|/")


@functools.cache  # some 40 characters spell every choice; a cold run asks for one 2,000 times
def _char_pattern(char: str) -> str:
    """The character class that matches what :func:`_normal` turns into ``char``: ``-`` is any of ``-_`` and
    a space, a letter either case (``k`` also the Kelvin sign, whose ``lower()`` is ``k``)."""
    if char == "-":
        return "[-_ ]"
    upper = char.upper()
    spellings = [upper, char] if len(upper) == 1 and upper != char and upper.lower() == char else [char]
    if char == "k":
        spellings.append("\u212a")
    if len(spellings) > 1:
        return "[" + "".join(spellings) + "]"
    return "\\" + char if char in _REGEX_SYNTAX else char


def choice_pattern(keys: Iterable[str]) -> str:
    """A JSON Schema ``pattern`` (ECMA-262 and Python ``re`` alike: no ``(?i)``) matching exactly the strings
    that :func:`_normal` turns into one of ``keys``: either case, ``-``, ``_`` and a space alike, white space
    around (``\\s``, in Python's ``re`` what ``str.strip()`` removes)."""
    alternatives = ["".join(_char_pattern(char) for char in key) for key in dict.fromkeys(keys)]
    return "^\\s*(?:" + "|".join(alternatives) + ")\\s*$"


def _numbers_among(keys: Iterable[str]) -> list[int]:
    """The keys that a YAML whole number spells (``precision: 16``), as numbers."""
    return [int(key) for key in keys if key.isascii() and key.isdigit()]


class Choice(GroupedMetadata):
    """``Annotated[str, Choice(...)]``: an enumerated string, matched case-insensitively, ``_``, ``-`` and spaces alike.

    ``aliases`` maps other spellings to a canonical value (``"bf16" -> "bf16-mixed"``).
    A value that matches nothing is an error listing the choices and the nearest one.
    The JSON schema accepts the same spellings (a generated ``pattern``) and offers the canonical
    values as ``examples`` for editor completion.
    """

    #: Every choice by its schema pattern, so that a JSON Schema error can be said as the loader says it.
    by_pattern: ClassVar[dict[str, Choice]] = {}

    def __init__(self, *values: str, aliases: dict[str, str] | None = None, description: str = "") -> None:
        aliases = aliases or {}
        self.values = values
        self.aliases = dict(aliases)
        self.description = description
        self._lookup = {_normal(value): value for value in values}
        self._lookup.update({_normal(alias): target for alias, target in aliases.items()})
        self.pattern = choice_pattern(self._lookup)
        self._metadata = (Before(self.parse), WithJsonSchema(self._json_schema(description)))
        Choice.by_pattern.setdefault(self.pattern, self)

    def _json_schema(self, description: str) -> dict[str, Any]:
        text: dict[str, Any] = {"type": "string", "pattern": self.pattern}
        numbers = _numbers_among(self._lookup)
        schema: dict[str, Any] = {"anyOf": [text, {"enum": numbers}]} if numbers else text
        schema["examples"] = list(self.values)
        if description:
            schema["description"] = description
        return schema

    def parse(self, value: object) -> object:
        """The canonical value that ``value`` spells."""
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value)  # 16.0 is the number 16, as JSON Schema sees it
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = _text_of(value)
        if not isinstance(value, str):
            raise ValueError(f"expected one of {_or_list(self.values)}")
        found = self._lookup.get(_normal(value))
        if found is None:
            raise ValueError(self.refusal(value))
        return found

    def refusal(self, value: object) -> str:
        """``"'adamx' is not one of 'adamw', ... or 'none'; did you mean 'adam'?"``."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                value = _text_of(value)
            except ValueError as exc:
                return str(exc)
        if not isinstance(value, str):
            return f"expected one of {_or_list(self.values)}, got {clip(repr(value), 120)}"
        near = _close(_normal(value), list(self._lookup)) if len(value) <= 100 else []
        hint = f"; did you mean {self._lookup[near[0]]!r}?" if near else ""
        return f"{clip(repr(value), 120)} is not one of {_or_list(self.values)}{hint}"

    def __iter__(self) -> Iterator[object]:
        return iter(self._metadata)

    def __repr__(self) -> str:
        return f"Choice({', '.join(map(repr, self.values))})"


class OneOrMany(GroupedMetadata):
    """``Annotated[list[Item], OneOrMany(Item)]``: a list of ``Item`` that may be written as a single mapping
    (``gpus: {...}``)."""

    def __init__(self, item: type[BaseModel]) -> None:
        self.item = item
        # The JSON schema takes one item or a list (list[item], spelt so for a runtime type).
        self._metadata = (
            BeforeValidator(_wrap_one, json_schema_input_type=item | GenericAlias(list, (item,))),
        )

    def __iter__(self) -> Iterator[object]:
        return iter(self._metadata)

    def __repr__(self) -> str:
        return f"OneOrMany({self.item.__name__})"


def _wrap_one(value: object) -> object:
    return [value] if isinstance(value, dict) else value


def _string_map(value: object) -> object:
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


def _version_text(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _text_of(value)
    return value


#: A mapping of names to strings; numbers and booleans are written back as YAML text.
StringMap = Annotated[
    dict[str, str],
    Before(_string_map),
    WithJsonSchema({"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}),
]
#: A version such as ``"535.104.05"`` or ``"12.4"``; a YAML number (``12.4``) is read as its text.
VersionString = Annotated[str, Before(_version_text), WithJsonSchema({"type": ["string", "number"]})]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'memory_gib'?"`` for the closest candidate, or ``""`` (also for a word too long
    to be a misspelling: fuzzy matching a long value costs seconds)."""
    if len(word) > 100:
        return ""
    pool = list(candidates)
    matches = _close(word, pool)
    if not matches:
        lowered = {c.lower(): c for c in pool}
        matches = [lowered[m] for m in _close(word.lower(), list(lowered))]
    return f"; did you mean {matches[0]!r}?" if matches else ""


def _close(word: str, pool: list[str]) -> list[str]:
    """The closest of ``pool`` to ``word``, if any is close (difflib, imported only for a misspelling)."""
    import difflib

    return difflib.get_close_matches(word, pool, n=1, cutoff=0.6)


def _or_list(values: Iterable[str]) -> str:
    items = [repr(value) for value in values]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


#: Nodes of a group, devices of a kind: at most a million.
Count = Annotated[int, Whole(le=1_000_000), Field(description="How many; from 1 to 1,000,000.")]
Port = Annotated[int, Whole(le=65535)]
ApiVersion = Literal["rigcheck/v1"]


def spec_name_field(kind: str) -> Any:
    """The ``name:`` of a spec: letters, digits, '.', '_' and '-', at most :data:`MAX_NAME` characters."""
    return Field(
        description=f"The {kind}'s name: letters, digits, '.', '_' and '-'.",
        min_length=1,
        max_length=MAX_NAME,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
    )
