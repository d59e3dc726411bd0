"""rigcheck.core.engine.findings makes findings and locations without validation (pydantic's ``model_construct``,
behind ``new_finding``, ``new_location`` and ``restore``): the fields in the model's order, the fields
set as given, and the behaviour of a validated model."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from rigcheck.core.engine.findings import (
    Finding,
    Location,
    Severity,
    Suppression,
    new_finding,
    new_location,
    restore,
)

SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


def state(model: BaseModel) -> tuple[Any, ...]:
    return tuple(object.__getattribute__(model, slot) for slot in SLOTS)


def finding_values() -> dict[str, Any]:
    """A value for every field of a finding, in the model's order."""
    location = Location.model_construct(file="rig.yaml", line=3, column=5, pointer="/nodes/0")
    values = {
        "code": "PWR002",
        "name": "psu-headroom",
        "severity": Severity.FAIL,
        "message": "2,304 W against 2,000 W",
        "evidence": {"need_w": 2304, "psu_w": 2000},
        "fix": "a 2,400 W PSU",
        "location": location,
        "related": (location,),
        "checker": "power.psu-headroom",
        "plugin": "rigcheck.plugins.power.psu_headroom",
        "subject": "rig r",
        "suppressions": (),
        "run": None,
    }
    assert list(values) == list(Finding.model_fields)
    return values


def test_a_location_is_the_one_model_construct_makes() -> None:
    made = new_location("rig.yaml", 3, 5, "/nodes/0")
    theirs = Location.model_construct(file="rig.yaml", line=3, column=5, pointer="/nodes/0")
    assert state(made) == state(theirs)
    assert made == theirs and hash(made) == hash(theirs) and repr(made) == repr(theirs)
    assert made.model_dump() == theirs.model_dump()
    with pytest.raises(Exception, match="frozen"):
        made.line = 4  # type: ignore[misc]


def test_a_finding_is_the_one_model_construct_makes() -> None:
    values = finding_values()
    made = new_finding(**values)
    theirs = Finding.model_construct(**values)
    assert state(made) == state(theirs)
    assert list(made.__dict__) == list(Finding.model_fields)  # JSON output follows the fields' order
    assert made == theirs and made.model_dump(mode="json") == theirs.model_dump(mode="json")
    assert made.model_dump_json() == theirs.model_dump_json()
    changed = made.with_changes(run=7)
    assert changed.run == 7 and "run" in changed.model_fields_set and made.run is None


def test_restore_keeps_the_fields_set() -> None:
    values = finding_values()
    fields_set = set(values) - {"run", "suppressions"}
    made = restore(Finding, dict(values), set(fields_set))
    theirs = Finding.model_construct(_fields_set=set(fields_set), **values)
    assert state(made) == state(theirs)
    assert made.model_fields_set == fields_set
    assert made.model_dump(exclude_unset=True) == theirs.model_dump(exclude_unset=True)
    suppression = restore(
        Suppression, {"kind": "inline", "reason": "r", "location": None, "expires": None}, {"kind", "reason"}
    )
    assert state(suppression) == state(
        Suppression.model_construct(_fields_set={"kind", "reason"}, kind="inline", reason="r")
    )
