"""Findings: what a checker says about one rule and one subject, with the numbers behind it."""

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from rigcheck.core.engine.severity import Severity as Severity
from rigcheck.core.engine.severity import worst as worst


class Location(BaseModel):
    """A place in a spec file: 1-based line and column, and the JSON pointer of the field."""

    model_config = ConfigDict(frozen=True)

    file: str | None = Field(None, description="Path of the spec file, as given on the command line.")
    line: int | None = Field(None, ge=1)
    column: int | None = Field(None, ge=1)
    pointer: str = Field("", description="RFC 6901 JSON pointer of the field, '' for the whole document.")


class Suppression(BaseModel):
    """Why a finding does not count: an inline or file-wide comment, a config waiver, or a baseline.

    Suppressed findings stay in the report (SARIF ``suppressions[]``); they do not change the exit code.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["inline", "file", "waiver", "baseline"]
    reason: str = Field(description="The reason written with the suppression (or the baseline file).")
    location: Location | None = Field(None, description="Where the comment or waiver is.")
    expires: str | None = Field(None, description="Waivers: the date after which it stops applying.")


class Finding(BaseModel):
    """One verdict of one rule on one subject."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="Stable rule code, e.g. PLT001.")
    name: str = Field("", description="The rule's kebab-case name.")
    severity: Severity
    message: str = Field(description="One line, with the numbers compared.")
    evidence: dict[str, Any] = Field(
        default_factory=dict, description="The formula's inputs and outputs, and where facts came from."
    )
    fix: str | None = Field(None, description="What to change, concretely.")
    location: Location | None = None
    related: tuple[Location, ...] = Field((), description="Other places the finding involves.")
    checker: str = Field("", description="The checker that produced the finding.")
    plugin: str = Field("", description="The plugin that registered the checker.")
    subject: str | None = Field(
        None, description="What was checked: a node group, a rig, a rig and workload pair."
    )
    suppressions: tuple[Suppression, ...] = Field(
        (), description="Why the finding does not count, if it is suppressed or baselined."
    )
    run: int | None = Field(
        None, description="rigcheck lint: the index in report.runs of the check that found it."
    )

    def with_changes(self, **changes: Any) -> "Finding":
        """A copy with some fields replaced (no re-validation: for rigcheck's own bookkeeping, which
        sets fields of known types; ``model_copy`` costs ten times more and reports stamp many)."""
        return _construct(Finding, {**self.__dict__, **changes}, self.model_fields_set | set(changes))

    @property
    def suppressed(self) -> bool:
        return bool(self.suppressions)

    @property
    def counts(self) -> bool:
        """Whether the finding counts toward the verdict and the exit code (not suppressed)."""
        return not self.suppressions

    @property
    def line(self) -> int | None:
        return self.location.line if self.location else None


_Model = TypeVar("_Model", bound=BaseModel)


def _construct(cls: type[_Model], values: dict[str, Any], fields_set: set[str]) -> _Model:
    """A model from values of the right types, without validation (pydantic's ``model_construct``)."""
    return cls.model_construct(fields_set, **values)


def restore(cls: type[_Model], values: dict[str, Any], fields_set: set[str]) -> _Model:
    """A model again from its field values and set fields, as they were taken apart to be sent between
    processes (``rigcheck lint --jobs``): no validation, the values are the model's own."""
    return _construct(cls, values, fields_set)


_FINDING_FIELDS = tuple(Finding.model_fields)


def new_finding(**values: Any) -> Finding:
    """A finding from values of the right types (for :meth:`rigcheck.Rule.finding`), its fields in the
    model's order (the order JSON output follows)."""
    missing = set(_FINDING_FIELDS) - values.keys()
    if missing:
        raise TypeError(f"new_finding needs {sorted(missing)}")
    return _construct(Finding, {name: values[name] for name in _FINDING_FIELDS}, set(values))


def new_location(file: str | None, line: int | None, column: int | None, pointer: str) -> Location:
    """A location from values of the right types (positions come from the loader)."""
    return _construct(
        Location,
        {"file": file, "line": line, "column": column, "pointer": pointer},
        {"file", "line", "column", "pointer"},
    )
