"""What could run a job: cloud instance sizes (several nodes where one is not enough), rigs built from a
GPU, a count and a platform template, the shipped reference rigs, and rigs the user gives. A candidate
is a rig spec (plain data, checked like any other) plus what it costs to rent or buy."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rigcheck.core.plan.prices import InstanceOffer, Price, PriceBook

Kind = Literal["rent", "buy", "reference", "given"]

#: Node counts tried for an 8-GPU cloud size whose one node does not pass on memory (planner._more_nodes).
MULTI_NODE_COUNTS = (2, 4, 8, 16)
#: Local disk kinds of the instance data as rig storage kinds (GCP's Local SSD on GPU machine types is
#: NVMe-attached: https://cloud.google.com/compute/docs/disks/local-ssd).
#: An "SSD" of unstated interface (Lambda) is read at SATA's rate, the lower bound of what it can be.
LOCAL_DISK_KINDS = {"local-ssd": "nvme", "ssd": "sata-ssd"}
#: GPU counts a rig is built with.
BUILD_COUNTS = (1, 2, 4, 8)


@dataclass
class Candidate:
    """A rig to check, and its prices: ``hourly`` for a rented one (all its nodes), ``parts`` for a
    bought one (each part with its price, ``None`` for a part without a sourced price)."""

    name: str
    kind: Kind
    rig: dict[str, Any]
    gpu_name: str
    gpus: int
    nodes: int = 1
    hourly: Price | None = None
    parts: list[tuple[str, Price | None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    offer: InstanceOffer | None = None

    @property
    def gpu_label(self) -> str:
        per_node = self.gpus // self.nodes
        node = f"{per_node}x {self.gpu_name}"
        return node if self.nodes == 1 else f"{self.nodes} nodes x {node}"

    @property
    def purchase_known(self) -> bool:
        return bool(self.parts) and all(price is not None for _, price in self.parts)


def slug(text: str) -> str:
    """A spec name from free text (letters, digits, '.', '_', '-')."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "candidate"


def cloud_rig(offer: InstanceOffer, nodes: int = 1) -> dict[str, Any]:
    """The rig spec of ``nodes`` instances of ``offer``: what the provider states, nothing assumed."""
    node: dict[str, Any] = {
        "name": slug(offer.name),
        "instance": f"{offer.provider} {offer.name}",
        "count": nodes,
        "gpus": {"model": offer.gpu, "count": offer.gpus},
        "memory_gib": offer.memory_gib,
        "cpu": {"cores": max(1, offer.vcpus // 2), "threads": offer.vcpus},
    }
    if offer.gpus > 1 and offer.gpu_interconnect:
        node["gpu_interconnect"] = {"kind": offer.gpu_interconnect}
    storage = offer.local_storage
    if storage:
        kind = str(storage.get("kind", "nvme"))
        device: dict[str, Any] = {"name": "local", "kind": LOCAL_DISK_KINDS.get(kind, kind)}
        device["count"] = int(storage.get("count", 1))
        if storage.get("capacity_gb"):
            device["capacity_gb"] = storage["capacity_gb"]
        elif storage.get("total_gb"):
            device["capacity_gb"] = storage["total_gb"] / device["count"]
        device["roles"] = ["data", "scratch", "checkpoints"]
        node["storage"] = [device]
    if offer.network_gbps:
        node["network"] = [{"kind": offer.network_kind, "gbps": offer.network_gbps, "role": "compute"}]
    return {"apiVersion": "rigcheck/v1", "kind": "Rig", "name": slug(offer.name), "nodes": [node]}


def cloud_candidates(book: PriceBook, gpu_filter: set[str] | None) -> Iterator[Candidate]:
    """One candidate per cloud size (of the GPUs asked for), priced or not."""
    for offer in book.instances:
        if gpu_filter is not None and offer.gpu not in gpu_filter:
            continue
        yield cloud_candidate(offer, 1)


def cloud_candidate(offer: InstanceOffer, nodes: int) -> Candidate:
    hourly = offer.price.times(nodes) if offer.price is not None else None
    name = offer.label if nodes == 1 else f"{nodes} x {offer.label}"
    notes = [] if offer.price is not None else ["no sourced on-demand price"]
    return Candidate(
        name=name,
        kind="rent",
        rig=cloud_rig(offer, nodes),
        gpu_name=offer.gpu_name,
        gpus=offer.gpus * nodes,
        nodes=nodes,
        hourly=hourly,
        notes=notes,
        offer=offer,
    )


def reference_candidates(book: PriceBook) -> Iterator[Candidate]:
    """The shipped reference rigs; a cloud one is priced from its instance size."""
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.core.spec.specs_index import shipped_specs

    by_name = {offer.name: offer for offer in book.instances}
    seen: set[str] = set()
    for path in shipped_specs("Rig").values():
        if str(path) in seen:
            continue
        seen.add(str(path))
        data = load_yaml_file(str(path)).data
        yield _given(data, "reference", f"reference {data['name']}", by_name)


def given_candidates(documents: list[Any], book: PriceBook) -> Iterator[Candidate]:
    by_name = {offer.name: offer for offer in book.instances}
    for document in documents:
        yield _given(document.yaml.data, "given", document.path, by_name)


def _given(data: Mapping[str, Any], kind: Kind, name: str, by_name: Mapping[str, InstanceOffer]) -> Candidate:
    from copy import deepcopy

    rig = deepcopy(dict(data))
    nodes = [node for node in rig.get("nodes") or () if node.get("gpus")]
    gpus, gpu_name, count, hourly = 0, "no GPU", 0, None
    for node in nodes:
        items = node["gpus"] if isinstance(node["gpus"], list) else [node["gpus"]]
        count += int(node.get("count", 1))
        gpus += int(node.get("count", 1)) * sum(int(item.get("count", 1)) for item in items)
        gpu_name = str(items[0].get("model"))
    candidate = Candidate(name=name, kind=kind, rig=rig, gpu_name=gpu_name, gpus=gpus, nodes=max(1, count))
    instance = nodes[0].get("instance") if len(nodes) == 1 else None
    offer = by_name.get(str(instance).split()[-1].lower()) if instance else None
    if offer is not None and offer.price is not None:
        hourly = offer.price.times(candidate.nodes)
        candidate.kind = "rent" if kind == "reference" else kind
        candidate.hourly, candidate.offer = hourly, offer
    elif data.get("price"):  # the rig's own price: (a quote, a receipt)
        given = data["price"]
        candidate.parts = [
            (
                f"{data.get('name', name)} (its price:)",
                Price(
                    float(given["amount"]),
                    str(given.get("currency", "USD")),
                    "the rig's price:",
                    str(given.get("source") or f"{name}, price:"),
                    str(given.get("as_of") or ""),  # no date: not counted in the prices' age
                ),
            )
        ]
    elif kind == "reference":
        candidate.notes.append("a reference rig: no purchase price recorded")
    return candidate
