"""``@dataclass`` as the standard library's, for less start-up: ``__eq__``, ``__hash__``, ``__repr__`` and a
frozen class's ``__setattr__`` and ``__delattr__`` are shared functions instead of generated code.

The standard decorator writes each method it adds as Python source and compiles it with ``exec``: six
for a frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``). rigcheck
defines about 110 dataclasses and a cold ``rigcheck check`` imports some 80 of them, so that compiling took
about 40 ms, a sixth of the run (issue 20, docs/performance.md). Here the standard decorator still makes
``__init__`` (the code that runs for every instance stays generated), and the three comparison and display
methods, and a frozen class's ``__setattr__`` and ``__delattr__``, are closures over the fields' names, which
behave as the generated ones do. A frozen class's ``__init__`` stores each field straight into the instance's
``__dict__``, which is all ``object.__setattr__`` does there, at half the cost (a memory estimate makes some
25 frozen components, and MEM001's search for fixes makes 40 estimates); not for a class with slots or a
field behind a data descriptor. Otherwise:

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
import inspect  # imported by dataclasses already
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import Field, field
from threading import RLock, get_ident
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
    # a frozen class's __setattr__ and __delattr__ made by _frozen_methods instead of compiled (2 of the 3
    # exec calls left for a frozen class; about 9 ms of a cold check), and its __init__ storing each field
    # straight into the instance's __dict__ where that is all object.__setattr__ does (_stores_in_dict)
    direct = frozen and not slots and _stores_in_dict(cls)
    with (
        _replacing("_frozen_get_del_attr", _frozen_methods, _GENERATE_FROZEN) if frozen else nullcontext(),
        _replacing("_field_assign", _assign_into_dict, _FIELD_ASSIGN) if direct else nullcontext(),
    ):
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
_PATCHING = RLock()  # the two patches below are nested


@contextmanager
def _replacing(name: str, replacement: Any, known: Any) -> Iterator[None]:
    """``dataclasses.<name>`` is ``replacement`` while the standard decorator runs, where ``known`` (the
    standard library's private helper as this module knows it) is not None, and is put back after;
    otherwise (another Python version) nothing is replaced and the standard decorator does as usual."""
    if known is None:
        yield
        return
    with _PATCHING:
        setattr(dataclasses, name, replacement)
        try:
            yield
        finally:
            setattr(dataclasses, name, known)


#: The standard library's writer of one field's assignment in ``__init__`` (Python 3.10 to 3.12:
#: ``_field_assign(frozen, name, value, self_name)``), or None where it is not that function.
_FIELD_ASSIGN: Any = getattr(dataclasses, "_field_assign", None)
if getattr(getattr(_FIELD_ASSIGN, "__code__", None), "co_varnames", ())[:4] != (
    "frozen",
    "name",
    "value",
    "self_name",
):
    _FIELD_ASSIGN = None


def _stores_in_dict(cls: Any) -> bool:
    """Whether ``object.__setattr__`` on an instance would only store each field in its ``__dict__``: the
    class has a ``__dict__`` (no ``__slots__`` of its own) and no field's class attribute is a descriptor
    that would take the assignment."""
    if "__slots__" in cls.__dict__:
        return False
    names = {name for klass in cls.__mro__ for name in inspect.get_annotations(klass)}
    for base in cls.__mro__:
        for name in names:
            attribute = base.__dict__.get(name)
            if attribute is not None and hasattr(type(attribute), "__set__"):
                return False
    return True


def _assign_into_dict(frozen: bool, name: str, value: str, self_name: str) -> str:
    """A frozen field's assignment in ``__init__``, written into the instance's ``__dict__`` instead of through
    ``object.__setattr__`` (a call per field: about half of a seven-field class's ``__init__``)."""
    if frozen:
        return f"{self_name}.__dict__[{name!r}]={value}"
    assert _FIELD_ASSIGN is not None
    return str(_FIELD_ASSIGN(frozen, name, value, self_name))


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
