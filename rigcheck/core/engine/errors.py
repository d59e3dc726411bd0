"""Errors that stop a run: bad input (exit code 2), each naming file, line, column and field."""

from __future__ import annotations

from dataclasses import dataclass, field

from rigcheck.core.spec import spec_codes

#: The longest message and JSON pointer a problem keeps; the rest is cut (a 20 MB value is not echoed).
MAX_MESSAGE = 1000
MAX_POINTER = 300


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 40]}... ({len(text) - limit + 40:,} characters cut)"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input file, at a position.

    ``code`` is a rule code (``SPEC010``, ...) so that ``rigcheck explain CODE`` tells more. ``max_message``
    raises the clip for a message whose length rigcheck's own data bounds (every card a name matches).
    """

    file: str
    message: str
    line: int = 1
    column: int = 1
    pointer: str = ""
    code: str = spec_codes.INVALID_VALUE
    max_message: int = field(default=MAX_MESSAGE, compare=False, repr=False)

    def __post_init__(self) -> None:  # what a hostile file makes rigcheck echo is bounded
        object.__setattr__(self, "message", clip(self.message, max(MAX_MESSAGE, self.max_message)))
        object.__setattr__(self, "pointer", clip(self.pointer, MAX_POINTER))

    def format(self) -> str:
        """One line, as compilers print errors (a message with line breaks is joined)."""
        where = f"{self.file}:{self.line}:{self.column}"
        field = f" {self.pointer}:" if self.pointer else ""
        message = " ".join(self.message.split())
        return f"{where}: error:{field} {message} [{self.code}]"

    def as_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "location": {
                "file": self.file,
                "line": self.line,
                "column": self.column,
                "pointer": self.pointer,
            },
        }


class RigcheckError(Exception):
    """Base class of the errors rigcheck reports to the user without a traceback."""

    exit_code = 2


class SpecError(RigcheckError):
    """An input file that cannot be read, parsed or validated. Carries one or more problems."""

    def __init__(self, problems: list[Problem] | Problem) -> None:
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(problem.format() for problem in self.problems))


class UsageError(RigcheckError):
    """A command line or configuration that rigcheck cannot act on."""


class PluginError(RigcheckError):
    """A plugin that cannot be used at all: a misspelt hook, a duplicate rule code."""
