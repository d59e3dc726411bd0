"""Read-only dicts and lists for data shared across checkers (rule facts, cached tables).

They are real ``dict`` and ``list`` subclasses, so every reader, ``isinstance`` check and JSON
encoder works as before; only changing them raises, so that a checker cannot alter what the next
checker, or the next rig in a lint run, sees. ``copy.deepcopy`` and ``dict(x)`` give mutable copies.
"""

from __future__ import annotations

from typing import Any, NoReturn


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is read-only: rigcheck's facts are shared by every checker")


class FrozenDict(dict):  # type: ignore[type-arg]
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    __setitem__ = __delitem__ = append = extend = insert = remove = pop = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __iadd__ = __imul__ = _refuse  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        import copy

        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def freeze(value: Any) -> Any:
    """``value`` with every dict and list inside it made read-only."""
    if isinstance(value, dict):
        frozen = FrozenDict()
        for key, item in value.items():
            dict.__setitem__(frozen, key, freeze(item))
        return frozen
    if isinstance(value, list):
        return FrozenList(freeze(item) for item in value)
    return value
