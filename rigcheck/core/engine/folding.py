"""What a report lists: at most :data:`~rigcheck.core.lint.lint_rules.FOLD_AFTER` findings of one rule at one
severity in one file; the rest are folded into one LINT003 finding that says how many there are and
stands for them in the counts (:func:`rigcheck.core.engine.finding_store.folded_count`).

Without it a report grows with the input, not with what a reviewer can read: 20,000 identical nodes made
340,000 findings and a 250 MB JSON report (issue 44). The summary, verdict and exit code are the same
folded or not; only the list is shorter (tests/test_folding.py checks both against an unfolded run).
"""

from __future__ import annotations

from typing import Any

from rigcheck.core.engine.finding_store import FindingStore, Row, row_group, unpack_one
from rigcheck.core.engine.findings import Finding
from rigcheck.core.lint.lint_rules import FINDINGS_FOLDED, FOLD_AFTER

#: (file, rule, severity, suppressed): the findings one LINT003 finding may stand for.
_Group = tuple[str | None, str, str, bool]


class Folder:
    """Adds findings to their stores until their group has :data:`FOLD_AFTER`, then counts the rest
    (``limit`` None: lists every finding, as ``--create-baseline`` needs)."""

    def __init__(self, limit: int | None = FOLD_AFTER) -> None:
        self.limit = limit
        self._listed: dict[_Group, int] = {}
        self._folded: dict[_Group, tuple[int, Row]] = {}  # group -> (count, the first folded finding)

    def add(self, row: Row, store: FindingStore) -> None:
        """Add ``row`` to ``store``, or fold it when its group is full."""
        if self.limit is None:
            store.add_row(row)
            return
        group = row_group(row)
        listed = self._listed.get(group, 0)
        if listed < self.limit:
            self._listed[group] = listed + 1
            store.add_row(row)
            return
        count, first = self._folded.get(group, (0, row))
        self._folded[group] = (count + 1, first)

    def notices(self) -> list[Finding]:
        """One LINT003 finding per folded group, at its first folded finding, with its severity and
        suppressions: it stands for ``count`` findings in the counts."""
        out = []
        for (file, code, severity, _), (count, first) in self._folded.items():
            folded = unpack_one(first)
            where = folded.location
            at = f" (the first at line {where.line})" if where is not None and where.line else ""
            evidence: dict[str, Any] = {"rule": code, "folded": count, "listed": self.limit, "file": file}
            out.append(
                FINDINGS_FOLDED.finding(
                    severity,
                    f"{count:,} more {severity} findings of {code} in {file or 'the run'}{at} are not "
                    f"listed (a report lists {self.limit} of one rule at one severity per file); the "
                    "summary counts them",
                    location=where,
                    subject=folded.subject,
                    evidence=evidence,
                    fix=None
                    if severity in ("pass", "skip")
                    else f"fix the listed {code} findings and run again: the folded ones are the same rule "
                    "in the same file",
                ).with_changes(
                    checker="lint", plugin="rigcheck", suppressions=folded.suppressions, run=folded.run
                )
            )
        return out
