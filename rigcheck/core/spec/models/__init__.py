"""Pydantic models of the two spec kinds, ``Rig`` and ``Workload``."""

from rigcheck.core.spec.models.rig import Rig
from rigcheck.core.spec.models.workload import Workload

SPEC_KINDS: dict[str, type[Rig] | type[Workload]] = {"Rig": Rig, "Workload": Workload}

__all__ = ["SPEC_KINDS", "Rig", "Workload"]
