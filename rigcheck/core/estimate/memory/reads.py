"""A result kept by the inputs it read (issue 20): MEM001's fix search re-estimates the workload with one,
two or three settings changed, and most parts of a training estimate read none of them. The model
states do not read the micro-batch, the saved activations do not read the optimizer, so a pair of
changes finds each part made already by the single changes it is made of.

Which inputs a part reads is not declared but recorded: the part is worked out on a stand-in for the
inputs that notes the first read of each attribute, and the result is kept under the values read,
beside the sequence of names read (a part has a handful of such sequences, one per branch). A lookup
reads each sequence's names from the new inputs and finds a result only where every value is the same
(and of the same type: 1, 1.0 and True are equal, but a formula prints them differently). The parts
are pure functions of their inputs and the rule facts, and deterministic: inputs that read the same
values read by read take the same branch, read the same names and make the same result. This is the
dynamic dependency tracking of build systems (Mokhov, Mitchell and Peyton Jones, "Build systems à la
carte", ICFP 2018: verifying traces).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, Generic, TypeVar

from rigcheck.core.estimate.memory.inputs import MemoryInputs

Result = TypeVar("Result")


class _Reading:
    """Stands in for a :class:`MemoryInputs`, noting the first read of each attribute, in order (the
    value is then kept on the stand-in, so later reads of it cost what a plain attribute does)."""

    def __init__(self, inputs: MemoryInputs) -> None:
        self._inputs = inputs
        self._reads: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:  # only the first read of each name comes here
        value = getattr(self._inputs, name)
        self._reads.append((name, value))
        vars(self)[name] = value
        return value


class _Path:
    """One sequence of reads (``names``) and the results kept on it, by the values read: (their
    types, the result)."""

    __slots__ = ("names", "read", "results")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.read: Callable[[Any], tuple[Any, ...]] = (
            attrgetter(*names) if len(names) > 1 else lambda inputs: tuple(getattr(inputs, n) for n in names)
        )
        self.results: dict[tuple[Any, ...], tuple[tuple[type, ...], Any]] = {}


class ReadMemo(Generic[Result]):
    """``make(inputs, facts)``, kept by what it reads of ``inputs`` (for one facts mapping at a time;
    the facts are read-only data). At most ``most`` results; then it starts again, so memory stays flat.

    The results are kept per sequence of names read (a part reads a handful of sequences, one per
    branch it can take): a lookup reads each sequence's names from the new inputs, most recently
    found first, and takes the result kept for those values. Equal values read mean the same branch
    taken, read by read, so any sequence whose values match gives the part's result."""

    def __init__(self, make: Callable[[Any, Mapping[str, Any]], Result], most: int = 8192) -> None:
        self._make = make
        self._most = most
        self._facts: Mapping[str, Any] | None = None
        self._paths: list[_Path] = []
        self._size = 0

    def __call__(self, inputs: MemoryInputs, facts: Mapping[str, Any]) -> Result:
        if facts is not self._facts:
            self.clear()
            self._facts = facts
        paths = self._paths
        try:
            for index, path in enumerate(paths):
                values = path.read(inputs)
                known = path.results.get(values)
                if known is not None and known[0] == tuple(map(type, values)):
                    if index:  # the next inputs most likely take this branch too
                        paths.insert(0, paths.pop(index))
                    return known[1]  # type: ignore[no-any-return]
        except TypeError:  # a value that cannot be hashed (a list where a tuple belongs): not kept
            return self._make(inputs, facts)
        reading = _Reading(inputs)
        result = self._make(reading, facts)
        self._keep(reading._reads, result)
        return result

    def clear(self) -> None:
        self._paths, self._size, self._facts = [], 0, None

    def __len__(self) -> int:
        return self._size

    def _keep(self, reads: list[tuple[str, Any]], result: Any) -> None:
        if self._size >= self._most:
            for kept in self._paths:
                kept.results.clear()
            self._size = 0
        names = tuple(name for name, _ in reads)
        values = tuple(value for _, value in reads)
        path = next((kept for kept in self._paths if kept.names == names), None)
        if path is None:
            path = _Path(names)
            self._paths.insert(0, path)
        try:
            path.results[values] = (tuple(map(type, values)), result)
        except TypeError:
            return
        self._size += 1
