"""Cloud instance sizes from ``specs/hardware/instances.yaml``, for fixes that name a size to move to."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple


class InstanceSize(NamedTuple):
    """A cloud instance type's shape: GPUs, vCPUs and memory, with its source."""

    name: str
    gpus: int
    vcpus: int
    memory_gib: float
    source: str

    @property
    def cores(self) -> int:
        """Physical cores: one per two vCPUs on these x86 families."""
        return self.vcpus // 2


@cache
def _families() -> tuple[Mapping[str, Any], ...]:
    from rigcheck.core.spec.frozen import freeze
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.resources import hardware_file

    return tuple(freeze(load_yaml_file(str(hardware_file("instances.yaml"))).data["families"]))


def _type_name(instance: str) -> str:
    """``"aws g5.xlarge"`` -> ``"g5.xlarge"`` (a provider word in front is optional)."""
    return instance.strip().split()[-1].lower()


def family_sizes(instance: str) -> list[InstanceSize]:
    """The sizes of the instance's family, smallest first; [] for an instance rigcheck does not list."""
    name = _type_name(instance)
    for family in _families():
        sizes = [
            InstanceSize(
                row["name"], int(row["gpus"]), int(row["vcpus"]), float(row["memory_gib"]), family["source"]
            )
            for row in family["sizes"]
        ]
        if any(size.name == name for size in sizes):
            return sizes
    return []


def next_size(instance: str, *, gpus: int, cores: int = 0, memory_gib: float = 0.0) -> InstanceSize | None:
    """The smallest size of the same family with the same GPU count, at least ``cores`` physical cores
    and ``memory_gib`` of RAM, larger than the current one; None when the family has none."""
    name = _type_name(instance)
    sizes = family_sizes(instance)
    current = next((size for size in sizes if size.name == name), None)
    if current is None:
        return None
    fitting = [
        size
        for size in sizes
        if size.gpus == gpus
        and size.cores >= cores
        and size.memory_gib >= memory_gib
        and size.vcpus > current.vcpus
    ]
    return min(fitting, key=lambda size: size.vcpus) if fitting else None
