"""Pydantic models of the two spec kinds, ``Rig`` and ``Workload``."""

from rigcheck.core.models.rig import Rig
from rigcheck.core.models.workload import Workload

SPEC_KINDS: dict[str, type[Rig] | type[Workload]] = {"Rig": Rig, "Workload": Workload}

__all__ = ["SPEC_KINDS", "Rig", "Workload"]
