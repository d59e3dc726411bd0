"""Facts about a job's network shared by the NET checkers: which nodes it spans, the interfaces a node
declares, NCCL's interface-list syntax, and firewall port lists (docs/research/rules_facts.md NET-1, NET-2).

NCCL's ``NCCL_SOCKET_IFNAME`` and ``NCCL_IB_HCA`` take a comma-separated list: each entry is a
prefix (``eth`` matches ``eth0``), ``=`` before the list makes every entry exact, ``^`` before the
list excludes the entries instead (``^docker,lo``); HCA entries may end in ``:port``
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rigcheck.core.engine.views import NodeView

#: Link kinds NCCL reaches through its IB verbs transport (or, for EFA, the aws-ofi-nccl plugin).
RDMA_KINDS = ("infiniband", "roce", "efa", "omni-path")


def link_names(link: Any) -> list[str]:
    """The interface or HCA names one network link declares (``interface: "mlx5_0,mlx5_1"``)."""
    return [part.strip() for part in (link.interface or "").split(",") if part.strip()]


def carries_gpu_traffic(link: Any) -> bool:
    """A port for GPU traffic: role compute, any, or unstated (not management, storage or frontend)."""
    return link.role in (None, "compute", "any")


def declared_interfaces(node: NodeView) -> list[str]:
    """Interface and HCA names the node's network links declare."""
    return [name for link in node.spec.network or () for name in link_names(link)]


class InterfaceList(NamedTuple):
    """A parsed ``NCCL_SOCKET_IFNAME`` / ``NCCL_IB_HCA`` value."""

    entries: tuple[str, ...]
    exact: bool
    exclude: bool

    @classmethod
    def parse(cls, value: str) -> InterfaceList:
        """NCCL reads ``^`` and then ``=``, once each, before the list (``ncclOsFindInterfaces``)."""
        text = value.strip()
        exclude = text.startswith("^")
        text = text[1:] if exclude else text
        exact = text.startswith("=")
        text = text[1:] if exact else text
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


def _selected(links: list[Any], value: str | None) -> list[Any]:
    """The links an interface list selects: a link matches when one of its declared names does (a link
    that names each of its ports keeps the ports named); where no link declares a name, the list cannot
    be read against them and every link counts."""
    if not value or len(value.strip()) <= 1:  # NCCL ignores a value of one character
        return links
    if not any(link_names(link) for link in links):
        return links
    parsed = InterfaceList.parse(value)
    chosen = []
    for link in links:
        names = link_names(link)
        hits = sum(parsed.matches(name) for name in names)
        if not hits:
            continue
        if len(names) == link.count and hits < link.count:  # one name per port: the ports it names
            link = link.model_copy(update={"count": hits})
        chosen.append(link)
    return chosen


class NcclChoice(NamedTuple):
    """The links NCCL's traffic between nodes takes, as NCCL picks them (NVIDIA/nccl src/plugin/net.cc:
    the IB transport first, sockets when it finds no device), and why."""

    transport: str  # ib | socket
    links: tuple[Any, ...]  # the rig's network links carrying it
    why: str

    @property
    def management(self) -> list[Any]:
        """Chosen links the rig marks as management, storage or frontend ports."""
        return [link for link in self.links if not carries_gpu_traffic(link)]


def nccl_choice(node: NodeView) -> NcclChoice:
    """What NCCL uses between this node and the others. The IB verbs transport takes the RDMA ports
    (InfiniBand, RoCE, EFA) that ``NCCL_IB_HCA`` selects, unless ``NCCL_IB_DISABLE=1`` or
    ``NCCL_NET=Socket``; with none it falls back to TCP sockets on the interfaces ``NCCL_SOCKET_IFNAME``
    selects, whatever the rig calls them (a management port included), else on the node's ports for
    GPU traffic. Among the socket interfaces NCCL spreads its channels over the fastest
    (``ncclTopoGetLocalNetType``). Lists follow :class:`InterfaceList` (NVIDIA/nccl src/misc/utils.cc
    ``matchIfList``, src/transport/net_ib/init.cc, src/misc/socket.cc)."""
    env = node.env
    links = [link for link in node.spec.network or ()]
    net = str(env.get("NCCL_NET", "")).strip().lower()
    ib_off = str(env.get("NCCL_IB_DISABLE", "")).strip() not in ("", "0") or net == "socket"
    rdma = [link for link in links if link.kind in RDMA_KINDS and carries_gpu_traffic(link)]
    if rdma and not ib_off:
        hca = env.get("NCCL_IB_HCA")
        chosen = _selected(rdma, str(hca) if hca else None)
        if chosen:
            why = f"NCCL_IB_HCA={hca}" if len(chosen) < len(rdma) else "the RDMA ports"
            return NcclChoice("ib", tuple(chosen), why)
        reason = f"NCCL_IB_HCA={hca} selects none of the RDMA ports"
    else:
        reason = "NCCL_IB_DISABLE" if rdma and ib_off else ""
    ifname = env.get("NCCL_SOCKET_IFNAME")
    # the default takes the Ethernet ports for GPU traffic (IPoIB over RDMA ports, which NCCL would try
    # first by its "ib" prefix, runs TCP at rates rigcheck has no figure for)
    default = _fastest([link for link in links if carries_gpu_traffic(link) and link.kind not in RDMA_KINDS])
    if not default:
        default = _fastest([link for link in links if carries_gpu_traffic(link)])
    chosen, why = default, "the node's ports for GPU traffic"
    if ifname and len(str(ifname).strip()) > 1:
        selected = _fastest(_selected(links, str(ifname)))
        if selected != default:
            chosen, why = selected, f"NCCL_SOCKET_IFNAME={ifname}"
    return NcclChoice("socket", tuple(chosen), "sockets on " + why + (f" ({reason})" if reason else ""))


def _fastest(links: list[Any]) -> list[Any]:
    """NCCL spreads its channels over the fastest of the socket interfaces it may use."""
    fastest = max((_rate(link) for link in links), default=0.0)
    return [link for link in links if _rate(link) == fastest]


def _rate(link: Any) -> float:
    from rigcheck.core.estimate.links import link_gbit_per_s

    return link_gbit_per_s(link) or 0.0
