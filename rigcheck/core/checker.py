"""The base class of checkers: a name, the rules it owns, and ``check(ctx)`` yielding findings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from rigcheck.core.rules import Rule

if TYPE_CHECKING:
    from rigcheck.core.context import CheckContext
    from rigcheck.core.findings import Finding


class Checker:
    """Subclass and set ``name`` and ``rules``; implement :meth:`check`.

    Checkers never read files, print or exit: they read the resolved context and yield findings
    built with their own rules (``RULE.failed(...)``). They report what passed and what could not
    be checked as well as what failed, so that a report reads as a complete checklist.
    """

    #: Unique, kebab-case; shown in reports (``"platform.system-ram"``).
    name: ClassVar[str] = ""
    #: The rules whose findings this checker yields.
    rules: ClassVar[tuple[Rule, ...]] = ()
    #: True when the checker compares a workload with the rig (skipped for a rig alone).
    needs_workload: ClassVar[bool] = False
    #: True when the checker compares measured evidence (``--evidence``) with the rig (skipped without).
    needs_evidence: ClassVar[bool] = False
    #: False when the checker never reads the workload: ``rigcheck lint`` then runs it once per rig, not
    #: again for every workload paired with the rig (its findings would be the same).
    reads_workload: ClassVar[bool] = True
    #: Seconds before the engine gives up on this checker (``None``: the engine's default).
    timeout_s: ClassVar[float | None] = None

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        raise NotImplementedError(f"{type(self).__name__}.check")
