"""Thresholds and constants that rules use, read from versioned YAML with sources.

Each file under ``specs/rules/`` holds named sections; every section carries ``source`` and
``as_of`` next to its numbers, so a finding can cite where its threshold came from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.spec.frozen import FrozenDict, freeze

#: (file, section, key) of every value read while :func:`record_reads` is active (None: not recording).
_READS: set[tuple[str, str, str]] | None = None


@contextmanager
def record_reads() -> Iterator[set[tuple[str, str, str]]]:
    """Record which values of ``specs/rules/*.yaml`` are read (a test fails on keys nothing reads)."""
    global _READS
    previous, _READS = _READS, set()
    try:
        yield _READS
    finally:
        _READS = previous


class FactSection(Mapping[str, Any]):
    """One section of a rule-facts file: its values plus ``source`` and ``as_of``."""

    def __init__(self, name: str, values: dict[str, Any], path: str) -> None:
        self.name = name
        self.path = path
        self._values = values

    def __getitem__(self, key: str) -> Any:
        if _READS is not None:
            _READS.add((Path(self.path).stem, self.name, key))
        try:
            return self._values[key]
        except KeyError:
            raise KeyError(f"{self.path}: section {self.name!r} has no {key!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def source(self) -> str:
        return str(self._values["source"])

    @property
    def as_of(self) -> str:
        return str(self._values["as_of"])

    def overridden(self, key: str, value: Any, origin: str) -> FactSection:
        """A copy with ``key`` set to ``value`` by a project config; the source says so."""
        values = dict(self._values)
        values[key] = value
        values["source"] = f"{self.source} ; {key} = {value!r} set in {origin} (data: {self._values[key]!r})"
        return FactSection(self.name, freeze(values), self.path)

    def cite(self) -> dict[str, str]:
        """``{"source": ..., "as_of": ...}`` for a finding's evidence."""
        return {"source": self.source, "as_of": self.as_of}


@cache
def load_rule_facts(name: str) -> dict[str, FactSection]:
    """Read ``specs/rules/NAME.yaml`` once per process."""
    from rigcheck.core.catalog import data_cache
    from rigcheck.resources import rules_data_file

    path = str(rules_data_file(f"{name}.yaml"))
    data = data_cache.cached_file(path)  # loaded before: no YAML parsed (rigcheck.core.catalog.data_cache)
    if data is None:
        from rigcheck.core.spec.loader import load_yaml_file

        data = load_yaml_file(path).data
    sections: dict[str, FactSection] = {}
    for key, values in data.items():
        if key == "schema_version":
            continue
        if not isinstance(values, dict) or "source" not in values or "as_of" not in values:
            from rigcheck.core.spec.loader import load_yaml_file

            _, mark = load_yaml_file(path).source_map.locate(f"/{key}")
            raise SpecError(
                Problem(
                    path,
                    f"section {key!r} needs source: and as_of: next to its values",
                    mark.line,
                    mark.column,
                    f"/{key}",
                )
            )
        sections[key] = FactSection(key, freeze(values), path)
    return FrozenDict(sections)
