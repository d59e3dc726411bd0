"""How long NCCL's collectives take: the bandwidth term of nccl-tests' model plus a latency term.

For ``n`` ranks moving a buffer of ``S`` bytes (the whole, unsharded buffer) at bus bandwidth ``B``
(NVIDIA/nccl-tests doc/PERFORMANCE.md, where ``busbw = algbw x factor``)::

    all-reduce       t = 2 (n - 1) / n x S / B
    all-gather       t =   (n - 1) / n x S / B
    reduce-scatter   t =   (n - 1) / n x S / B
    all-to-all       t =   (n - 1) / n x S / B      (each rank keeps 1/n of what it holds)
    send / recv      t = S / B

plus, for every call, a latency that does not shrink with the size (a ring all-reduce takes
``2 (n - 1)`` steps; ``latency_us`` is the whole call's floor, as nccl-tests measures it at small sizes).
"""

from __future__ import annotations

from typing import NamedTuple

FACTORS = {
    "all-reduce": lambda n: 2 * (n - 1) / n,
    "all-gather": lambda n: (n - 1) / n,
    "reduce-scatter": lambda n: (n - 1) / n,
    "all-to-all": lambda n: (n - 1) / n,
    "send": lambda n: 1.0,
}


class Collective(NamedTuple):
    """One kind of collective call, made ``calls`` times per optimizer step."""

    kind: str  # all-reduce | all-gather | reduce-scatter | all-to-all | send
    ranks: int
    bytes_per_call: float  # S: the whole buffer (for all-gather: the gathered result)
    calls: float
    busbw_gbps: float  # GB/s
    latency_us: float
    what: str  # "FSDP all-gather of the 16-bit parameters (forward)"
    over: str  # the path: "NVLink ...", "2 x 100 Gb/s Ethernet (TCP) per node"
    overlappable: bool  # hidden behind compute when there is enough of it
    group: str = "data"  # data | tensor | pipeline | context | expert: the parallelism it serves
    inter_node: bool = False  # its path crosses nodes
    every_micro_batch: bool = True  # False: once per optimizer step, in the last micro-batch's backward

    @property
    def factor(self) -> float:
        return FACTORS[self.kind](max(1, self.ranks))

    @property
    def seconds_per_call(self) -> float:
        if (self.ranks <= 1 and self.kind != "send") or not self.known:
            return 0.0
        return self.factor * self.bytes_per_call / (self.busbw_gbps * 1e9) + self.latency_us * 1e-6

    @property
    def known(self) -> bool:
        """False when the path has no bandwidth (ranks beyond a node with no network declared): the
        collective is then not timed, and the estimate says so."""
        return self.busbw_gbps > 0

    @property
    def seconds(self) -> float:
        return self.calls * self.seconds_per_call

    @property
    def bytes_per_gpu(self) -> float:
        """Bytes each rank sends per optimizer step (the factor x S of every call)."""
        return self.calls * self.factor * self.bytes_per_call

    def describe(self) -> str:
        calls = f"{self.calls:g} x " if self.calls != 1 else ""
        return (
            f"{self.what}: {calls}{self.factor:.3g} x {self.bytes_per_call / 1e9:.3g} GB over {self.over} "
            f"({self.busbw_gbps:.3g} GB/s) = {self.seconds:.3g} s"
        )
