"""Facts about a job's network shared by the NET checkers: which nodes it spans, the interfaces a node
declares, NCCL's interface-list syntax, and firewall port lists (docs/research/rules_facts.md NET-1, NET-2).

NCCL's ``NCCL_SOCKET_IFNAME`` and ``NCCL_IB_HCA`` take a comma-separated list: each entry is a
prefix (``eth`` matches ``eth0``), ``=`` before the list makes every entry exact, ``^`` before the
list excludes the entries instead (``^docker,lo``); HCA entries may end in ``:port``
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.engine.views import NodeView


def declared_interfaces(node: NodeView) -> list[str]:
    """Interface and HCA names the node's network links declare (``interface: "mlx5_0,mlx5_1"``)."""
    names: list[str] = []
    for link in node.spec.network or ():
        if link.interface:
            names.extend(part.strip() for part in link.interface.split(",") if part.strip())
    return names


@dataclass(frozen=True)
class InterfaceList:
    """A parsed ``NCCL_SOCKET_IFNAME`` / ``NCCL_IB_HCA`` value."""

    entries: tuple[str, ...]
    exact: bool
    exclude: bool

    @classmethod
    def parse(cls, value: str) -> InterfaceList:
        text = value.strip()
        exclude = text.startswith("^")
        text = text.lstrip("^")
        exact = text.startswith("=")
        text = text.lstrip("=")
        entries = tuple(part.strip().split(":")[0] for part in text.split(",") if part.strip())
        return cls(entries, exact, exclude)

    def matches(self, name: str) -> bool:
        """Whether NCCL would use ``name`` (before excluding ``lo`` and ``docker*`` by default)."""
        hit = any(name == entry if self.exact else name.startswith(entry) for entry in self.entries)
        return not hit if self.exclude else hit

    def unmatched_entries(self, names: list[str]) -> list[str]:
        """Entries (of an include list) that select none of ``names``."""
        if self.exclude:
            return []
        return [
            entry
            for entry in self.entries
            if not any(name == entry if self.exact else name.startswith(entry) for name in names)
        ]


def open_ports(entries: list[str | int]) -> list[tuple[int, int]]:
    """``[29500, "50000-51000"]`` -> ``[(29500, 29500), (50000, 51000)]``; unreadable entries are skipped."""
    ranges: list[tuple[int, int]] = []
    for entry in entries:
        text = str(entry).strip().split("/")[0]
        low, _, high = text.partition("-")
        try:
            start, end = int(low), int(high or low)
        except ValueError:
            continue
        ranges.append((min(start, end), max(start, end)))
    return ranges


def port_open(port: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= port <= end for start, end in ranges)
