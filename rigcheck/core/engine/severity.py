"""A finding's severity, apart from the finding models so that rules and their docs (``rigcheck rules``,
``rigcheck explain``) load without pydantic. :mod:`rigcheck.core.engine.findings` re-exports it."""

from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    """How a finding came out. ``skip`` means the rule could not be checked (a fact is missing)."""

    PASS = "pass"
    SKIP = "skip"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def __str__(self) -> str:
        return self.value


_RANK = {Severity.PASS: 0, Severity.SKIP: 1, Severity.WARN: 2, Severity.FAIL: 3}


def worst(severities: list[Severity] | tuple[Severity, ...]) -> Severity:
    return max(severities, key=_RANK.__getitem__, default=Severity.PASS)
