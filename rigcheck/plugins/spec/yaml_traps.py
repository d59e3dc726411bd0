"""SPEC: the YAML traps the loader found in each spec file, reported as findings (the rules themselves
are the core's, :mod:`rigcheck.core.spec.spec_rules`), so that they can be selected, ignored and documented
like any other rule; this plugin registers every SPEC rule so that ``rigcheck explain`` knows them."""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import Checker
from rigcheck.core.engine.context import CheckContext
from rigcheck.core.engine.findings import Finding, Location
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.spec.spec_rules import (
    DECIMAL_MEMORY_SIZE,
    DUPLICATE_KEY,
    OCTAL_LOOKING_NUMBER,
    SPEC_RULES,
    YAML11_BOOLEAN,
)

_TRAP_RULES = {
    rule.code: rule for rule in (DUPLICATE_KEY, YAML11_BOOLEAN, OCTAL_LOOKING_NUMBER, DECIMAL_MEMORY_SIZE)
}
_PASS_TEXT = {
    DUPLICATE_KEY.code: "no duplicate keys",
    YAML11_BOOLEAN.code: "no unquoted yes/no/on/off",
    OCTAL_LOOKING_NUMBER.code: "no numbers with a leading zero",
}


class YamlTrapChecker(Checker):
    """Reports the YAML traps the loader recorded in each spec file (it walks the files, not the rig, so a
    plain Checker)."""

    name = "spec"
    rules = SPEC_RULES

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        documents = ctx.documents
        for code, rule in _TRAP_RULES.items():
            found = False
            for document in documents:
                for trap in document.traps:
                    if trap.code != code:
                        continue
                    found = True
                    location = Location(
                        file=document.path, line=trap.mark.line, column=trap.mark.column, pointer=trap.pointer
                    )
                    yield rule.finding(
                        rule.severity,
                        trap.message,
                        location=location,
                        fix=trap.fix,
                        evidence={"file": document.path, **trap.evidence},
                        subject=document.name,
                    )
            if not found and code in _PASS_TEXT:  # SPEC006 is reported only where found
                files = ", ".join(document.path for document in documents)
                yield rule.passed(
                    f"{_PASS_TEXT[code]} in {files}",
                    location=documents[0].locate(""),
                    evidence={"files": [document.path for document in documents]},
                    subject=ctx.subject,
                )


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(YamlTrapChecker())
