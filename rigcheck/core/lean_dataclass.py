"""``@dataclass`` as the standard library's, for less start-up: ``__eq__``, ``__hash__``, ``__repr__`` and a
frozen class's ``__setattr__`` and ``__delattr__`` are shared functions instead of generated code.

The standard decorator writes each method it adds as Python source and compiles it with ``exec``: six
for a frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``). rigcheck
defines about 110 dataclasses and a cold ``rigcheck check`` imports some 80 of them, so that compiling took
about 40 ms, a sixth of the run (issue 20, docs/performance.md). Here the standard decorator still makes
``__init__`` (the code that runs for every instance stays generated), and the three comparison and display
methods, and a frozen class's ``__setattr__`` and ``__delattr__``, are closures over the fields' names, which
behave as the generated ones do:

- ``a == b`` compares the fields with ``compare=True`` as a tuple when both are of the same class, else
  ``NotImplemented``; ``hash(a)`` hashes that tuple (frozen classes; an unfrozen one with ``eq`` is
  unhashable), as https://docs.python.org/3/library/dataclasses.html#dataclasses.dataclass says;
- ``repr(a)`` is ``Name(field=value, ...)`` over the fields with ``repr=True``, and ``...`` for a value
  that contains the instance itself;
- assigning or deleting a field of a frozen instance, or any attribute of an instance of the frozen class
  itself, raises ``FrozenInstanceError`` (where the standard library's private helper for those two methods
  is not the one this module knows, Python 3.13 on, they are compiled as usual);
- a method the class body defines is kept, as the standard decorator keeps it.

``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work unchanged: the result is a
dataclass. ``order=True`` and ``unsafe_hash=True`` go to the standard decorator as they are.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import Field, field
from threading import Lock, get_ident
from typing import Any, TypeVar, overload

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pydantic's dependency
    from typing_extensions import dataclass_transform

__all__ = ["dataclass", "field"]

T = TypeVar("T", bound=type)


@overload
def dataclass(cls: T, /) -> T: ...


@overload
def dataclass(
    cls: None = None, /, *, frozen: bool = False, slots: bool = False, **options: Any
) -> Callable[[T], T]: ...


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: Any = None, /, *, frozen: bool = False, slots: bool = False, **options: Any) -> Any:
    """``dataclasses.dataclass`` with the same arguments and behaviour; see the module's docstring."""

    def wrap(cls: Any) -> Any:
        return _lean(cls, frozen=frozen, slots=slots, **options)

    return wrap if cls is None else wrap(cls)


def _lean(cls: Any, *, frozen: bool, slots: bool, **options: Any) -> Any:
    if options.get("order") or options.get("unsafe_hash"):  # rare: let the standard decorator do it all
        return dataclasses.dataclass(cls, frozen=frozen, slots=slots, **options)
    eq, shown = options.pop("eq", True), options.pop("repr", True)
    body = dict(cls.__dict__)
    with _frozen_without_exec(frozen):
        made = dataclasses.dataclass(cls, frozen=frozen, slots=slots, eq=False, repr=False, **options)
    every = dataclasses.fields(made)
    if shown and "__repr__" not in body:
        made.__repr__ = _repr([f.name for f in every if f.repr])
    if eq:
        compared = tuple(f.name for f in every if f.compare)
        key = _key(compared)
        if "__eq__" not in body:
            made.__eq__ = _eq(key)
        own_hash = body.get("__hash__", dataclasses.MISSING)
        explicit = not (own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in body))
        if not explicit:
            hashed = tuple(f.name for f in every if (f.compare if f.hash is None else f.hash))
            made.__hash__ = _hash(_key(hashed)) if frozen else None
    return made


#: The standard library's maker of a frozen class's ``__setattr__`` and ``__delattr__`` (Python 3.10 to 3.12:
#: ``_frozen_get_del_attr(cls, fields, globals)``), or None where it is not that function.
_GENERATE_FROZEN: Any = getattr(dataclasses, "_frozen_get_del_attr", None)
if getattr(getattr(_GENERATE_FROZEN, "__code__", None), "co_varnames", ())[:3] != (
    "cls",
    "fields",
    "globals",
):
    _GENERATE_FROZEN = None
_PATCHING = Lock()


@contextmanager
def _frozen_without_exec(frozen: bool) -> Iterator[None]:
    """While the standard decorator runs: a frozen class's ``__setattr__`` and ``__delattr__`` made by
    :func:`_frozen_methods` instead of compiled (2 of the 3 ``exec`` calls left for a frozen class; about 9 ms
    of a cold check). Where the standard library's private helper is not the one known here (another Python
    version), nothing is replaced and the standard decorator compiles them as usual."""
    if not frozen or _GENERATE_FROZEN is None:
        yield
        return
    with _PATCHING:
        dataclasses._frozen_get_del_attr = _frozen_methods  # type: ignore[attr-defined]
        try:
            yield
        finally:
            dataclasses._frozen_get_del_attr = _GENERATE_FROZEN  # type: ignore[attr-defined]


def _frozen_methods(cls: Any, fields: list[Field[Any]], globals: dict[str, Any]) -> tuple[Any, Any]:
    """What ``dataclasses._frozen_get_del_attr`` compiles, as closures: assigning or deleting a field, or any
    attribute of the frozen class itself, raises ``FrozenInstanceError`` with the standard message."""
    names = tuple(f.name for f in fields)
    frozen_error = dataclasses.FrozenInstanceError

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise frozen_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    __setattr__.__qualname__ = f"{cls.__qualname__}.__setattr__"
    __delattr__.__qualname__ = f"{cls.__qualname__}.__delattr__"
    return __setattr__, __delattr__


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The instance's values of ``names`` as a tuple (what the generated methods compare and hash)."""
    if len(names) == 1:
        (name,) = names
        return lambda self: (getattr(self, name),)
    if not names:
        return lambda self: ()
    from operator import attrgetter

    return attrgetter(*names)


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _repr(names: list[str]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__
