"""Rules: the stable code, name, summary, default severity and documentation of one check.

One :class:`Rule` record feeds everything: ``rigcheck rules``, ``rigcheck explain CODE``, the pages
under ``docs/rules/`` and the rule metadata of machine-readable reports (after ruff's rule docs).
Checkers build findings through their rules, so every finding carries its code and name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rigcheck.core.engine.severity import Severity

if TYPE_CHECKING:
    from rigcheck.core.engine.findings import Finding, Location

#: :mod:`rigcheck.core.engine.findings`, once a rule made a finding (``rigcheck rules`` and ``explain`` need
#: no pydantic).
_findings: Any = None

#: The checker the engine is running, so that findings are born stamped with it (``engine.py``).
CURRENT_CHECKER: ContextVar[tuple[str, str]] = ContextVar("rigcheck_current_checker", default=("", ""))

CODE_PATTERN = re.compile(r"^[A-Z][A-Z0-9]{1,7}[0-9]{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


#: ``{facts:power.sustained.warn_above_fraction:.0%}``: a value of specs/rules/FILE.yaml in rule docs.
FACT_PLACEHOLDER = re.compile(r"\{facts:([a-z0-9_]+)\.([a-z0-9_-]+)\.([a-z0-9_-]+)(?::([^{}]*))?\}")


@dataclass(frozen=True)
class RuleDocs:
    """The documentation sections every rule has (Markdown).

    A threshold is written as a placeholder, ``{facts:FILE.SECTION.KEY}`` or with a format spec
    ``{facts:power.sustained.warn_above_fraction:.0%}``, so that the page, ``rigcheck explain`` and
    SARIF help show the number the checker uses (the shipped data, or a project's override):
    :meth:`resolved` fills them in.
    """

    what: str
    why: str
    example: str
    fix: str
    references: tuple[str, ...] = ()

    def resolved(self, facts: Callable[[str], Mapping[str, Any]] | None = None) -> RuleDocs:
        """These docs with every ``{facts:...}`` placeholder replaced by its value (``facts(FILE)``
        gives the sections; default: the shipped specs/rules data); unchanged when there are none."""
        texts = (self.what, self.why, self.example, self.fix, *self.references)
        if not any("{facts:" in text for text in texts):
            return self
        if facts is None:
            from rigcheck.core.catalog.facts import load_rule_facts

            facts = load_rule_facts

        def value(match: re.Match[str]) -> str:
            file, section, key, spec = match.groups()
            number = facts(file)[section][key]
            return (
                format(number, spec) if spec else (f"{number:,}" if isinstance(number, int) else str(number))
            )

        def fill(text: str) -> str:
            return FACT_PLACEHOLDER.sub(value, text)

        return RuleDocs(
            fill(self.what),
            fill(self.why),
            fill(self.example),
            fill(self.fix),
            tuple(fill(reference) for reference in self.references),
        )


@dataclass(frozen=True)
class Rule:
    """A rule's identity and documentation.

    ``severity`` is the default verdict when the rule is broken; a checker may report ``warn``
    for a near miss and ``fail`` past the limit, as the rule's docs explain.
    """

    code: str
    name: str
    summary: str
    severity: Severity
    docs: RuleDocs
    since: str = "0.1.0"
    status: Literal["stable", "preview", "deprecated"] = "stable"
    tags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not CODE_PATTERN.match(self.code):
            raise ValueError(
                f"rule code {self.code!r} must be a prefix of capitals and three digits, e.g. PLT001"
            )
        if not NAME_PATTERN.match(self.name):
            raise ValueError(f"rule name {self.name!r} must be kebab-case, e.g. system-ram-below-vram")
        if not isinstance(self.severity, Severity):
            object.__setattr__(self, "severity", Severity(self.severity))

    @property
    def prefix(self) -> str:
        return self.code.rstrip("0123456789")

    def finding(
        self,
        severity: Severity | str,
        message: str,
        *,
        location: Location | None = None,
        evidence: dict[str, Any] | None = None,
        fix: str | None = None,
        subject: str | None = None,
        related: tuple[Location, ...] | list[Location] = (),
    ) -> Finding:
        """A finding of this rule; the engine fills in the checker and plugin names."""
        global _findings
        if _findings is None:  # pydantic is imported when the first finding is made, not with the rules
            from rigcheck.core.engine import findings as _findings
        Location, new_finding = _findings.Location, _findings.new_finding
        if not isinstance(message, str) or not (location is None or isinstance(location, Location)):
            raise TypeError(f"{self.code}: a finding needs a message string and a rigcheck.Location")
        return new_finding(  # the fields are this method's typed arguments: no re-validation
            code=self.code,
            name=self.name,
            severity=severity if isinstance(severity, Severity) else Severity(severity),
            message=message,
            evidence=evidence or {},
            fix=fix,
            location=location,
            related=tuple(related),
            subject=subject,
            checker=CURRENT_CHECKER.get()[0],
            plugin=CURRENT_CHECKER.get()[1],
            suppressions=(),
            run=None,
        )

    def graded(
        self,
        value: float,
        *,
        warn_at: float | None,
        fail_at: float | None = None,
        higher_is_worse: bool = True,
        inclusive: bool = False,
    ) -> Severity:
        """The verdict of ``value`` against a warn and a fail threshold (either may be ``None``).

        With ``higher_is_worse`` (the default), FAIL above ``fail_at``, else WARN above ``warn_at``,
        else PASS; otherwise FAIL below ``fail_at``, else WARN below ``warn_at``. ``inclusive``: a value
        equal to a threshold already reaches it (``>=``/``<=`` instead of ``>``/``<``).
        """

        def past(limit: float | None) -> bool:
            if limit is None:
                return False
            if higher_is_worse:
                return value >= limit if inclusive else value > limit
            return value <= limit if inclusive else value < limit

        if past(fail_at):
            return Severity.FAIL
        if past(warn_at):
            return Severity.WARN
        return Severity.PASS

    def judged(self, severity: Severity, message: str, *, fix: str | None = None, **details: Any) -> Finding:
        """A finding at ``severity`` (e.g. from :meth:`graded`); a pass carries no ``fix``."""
        return self.finding(severity, message, fix=None if severity is Severity.PASS else fix, **details)

    def passed(self, message: str, **details: Any) -> Finding:
        return self.finding(Severity.PASS, message, **details)

    def skipped(self, message: str, **details: Any) -> Finding:
        return self.finding(Severity.SKIP, message, **details)

    def warned(self, message: str, **details: Any) -> Finding:
        return self.finding(Severity.WARN, message, **details)

    def failed(self, message: str, **details: Any) -> Finding:
        return self.finding(Severity.FAIL, message, **details)

    def as_dict(self, *, resolved: bool = True) -> dict[str, Any]:
        """The rule as data; its docs with their ``{facts:...}`` placeholders filled from the data, or
        as written (``resolved=False``: the built-in checker index)."""
        docs = self.docs.resolved() if resolved else self.docs
        return {
            "code": self.code,
            "name": self.name,
            "summary": self.summary,
            "severity": self.severity.value,
            "since": self.since,
            "status": self.status,
            "tags": list(self.tags),
            "docs": {
                "what": docs.what,
                "why": docs.why,
                "example": docs.example,
                "fix": docs.fix,
                "references": list(docs.references),
            },
        }


def matches(code: str, selectors: list[str] | tuple[str, ...]) -> bool:
    """Whether ``code`` is picked by any selector: a full code (``PLT001``), a prefix (``PLT``,
    ``PLT0``) or ``ALL``, as ruff's ``--select`` reads them."""
    return any(selector == "ALL" or code.startswith(selector) for selector in selectors)


#: The families of the findings about the input itself (a spec that cannot be read or checked, a
#: checker that crashed, a bad config, lint's pairing, suppressions): like ruff's syntax errors, no
#: selection, ignore, severity override or suppression hides them, and they always count.
STRUCTURAL_FAMILIES = frozenset({"SPEC", "ENGINE", "CONFIG", "LINT", "SUP"})


def structural(code: str) -> bool:
    """Whether ``code`` (``SPEC013``) is in one of :data:`STRUCTURAL_FAMILIES`."""
    return code.rstrip("0123456789") in STRUCTURAL_FAMILIES
