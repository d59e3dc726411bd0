"""Where things are in a spec file: JSON pointers (RFC 6901) mapped to line and column.

The loader records, for every key and value it builds, the 1-based line and column of the key
(for mapping members) and of the value. Findings and validation errors resolve a field path
through :class:`SourceMap`, so that every message can name ``file:line:column``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple


class Mark(NamedTuple):
    """A 1-based position in a text file."""

    line: int
    column: int


def escape_token(token: str | int) -> str:
    """Escape one reference token for a JSON pointer (RFC 6901 section 3)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join_pointer(parent: str, token: str | int) -> str:
    return f"{parent}/{escape_token(token)}"


def pointer_from_path(path: Iterable[str | int]) -> str:
    """``("nodes", 0, "gpus")`` -> ``"/nodes/0/gpus"``."""
    return "".join("/" + escape_token(token) for token in path)


def split_pointer(pointer: str) -> list[str]:
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"a JSON pointer starts with '/': {pointer!r}")
    return [unescape_token(token) for token in pointer[1:].split("/")]


def parent_pointer(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0] if pointer else ""


def pointer_for_data_path(data: Any, path: Iterable[str | int]) -> str:
    """Turn a model field path into a pointer into the raw document ``data``.

    Models accept some fields in two shapes (``gpus: {...}`` or ``gpus: [{...}, ...]``) and see
    the single mapping as a one-item list. A path such as ``("nodes", 0, "gpus", 0, "model")``
    therefore has an index that does not exist in the file; it is dropped where the document
    holds a mapping, so that the pointer names what the user wrote.
    """
    tokens: list[str | int] = []
    current = data
    for step in path:
        if isinstance(step, int) and isinstance(current, dict):
            continue  # the one-or-many case: a mapping stood for a one-item list
        tokens.append(step)
        if isinstance(current, dict):
            current = current.get(step) if isinstance(step, str) else None
        elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
            current = current[step]
        else:
            current = None
    return pointer_from_path(tokens)


class SourceMap:
    """Positions of the keys and values of one YAML document, by JSON pointer."""

    __slots__ = ("_keys", "_values", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._keys: dict[str, Mark] = {}
        self._values: dict[str, Mark] = {}

    def add(self, pointer: str, value: Mark, key: Mark | None = None) -> None:
        self._values[pointer] = value
        if key is not None:
            self._keys[pointer] = key

    def __contains__(self, pointer: str) -> bool:
        return pointer in self._values

    def __len__(self) -> int:
        return len(self._values)

    def key_mark(self, pointer: str) -> Mark | None:
        return self._keys.get(pointer)

    def entries(self) -> Iterator[tuple[str, Mark, Mark | None]]:
        """Each recorded pointer with its value's and key's positions, in the order recorded."""
        keys = self._keys
        for pointer, value in self._values.items():
            yield pointer, value, keys.get(pointer)

    def value_mark(self, pointer: str) -> Mark | None:
        return self._values.get(pointer)

    def pointers_on_line(self, line: int) -> list[str]:
        """The pointers whose key (or, for sequence items and the root, value) starts on ``line``,
        shortest first."""
        found = {pointer for pointer, mark in self._keys.items() if mark.line == line}
        found |= {
            pointer
            for pointer, mark in self._values.items()
            if mark.line == line and pointer not in self._keys
        }
        return sorted(found, key=lambda pointer: (pointer.count("/"), pointer))

    def locate(self, pointer: str) -> tuple[str, Mark]:
        """The nearest recorded position for ``pointer``: its key, else its value, else an ancestor's.

        Returns the pointer actually found with its mark. A field that is absent from the file
        (a default, or a required field that is missing) resolves to the mapping that should
        hold it; the document root resolves to line 1.
        """
        current = pointer
        while True:
            mark = self._keys.get(current) or self._values.get(current)
            if mark is not None:
                return current, mark
            if not current:
                return "", Mark(1, 1)
            current = parent_pointer(current)
