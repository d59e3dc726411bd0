"""STO001, STO002, STO005: can the data's storage feed the GPUs (docs/research/rules_facts.md STO-1..STO-3)?

The GPUs consume tokens (or samples) at the optimistic end of the throughput estimate; the data
device must read that many bytes per second with a 1.2x margin, and, for random access, serve one
random read per sequence (sample). Data sets that fit in half the RAM are served from the page cache
after the first epoch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from rigcheck.core.catalog.facts import FactSection
from rigcheck.core.engine.checker import WorkloadOnRigChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Location, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.storage import DeviceRates, device_rates, pick_device
from rigcheck.core.spec.models.workload import Data, Workload
from rigcheck.core.spec.numbers import fmt

_STO = (
    "docs/research/rules_facts.md STO-1..STO-3",
    "https://docs.aws.amazon.com/prescriptive-guidance/latest/"
    "sql-server-ec2-ha-dr/ebs-storage-types.html (gp3 baseline 3,000 IOPS, 125 MiB/s)",
)

READ_RATE = Rule(
    code="STO001",
    name="data-read-bandwidth-too-low",
    summary="The data's storage cannot read as fast as the GPUs consume data",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Computes the read rate the job needs, `tokens/s x bytes per token` (or samples/s x bytes per "
        "sample) at the optimistic end of the throughput estimate, x {facts:storage.read_bandwidth.margin:g} "
        "margin, and compares it with the "
        "data device's sequential read rate (the rig's `read_mb_s` x count; HDD/SATA defaults; cloud "
        "volumes at their provisioned or baseline throughput: gp3 125 MiB/s unless provisioned). Fail "
        "above the device's rate, warn above {facts:storage.read_bandwidth.warn_above_fraction:.0%} of it. A "
        "shared file system serves all nodes. A multi-epoch run "
        "whose data set fits the page cache (half the RAM) reads the device in epoch 1 only: it is judged on "
        "how much longer that makes the run (warn above "
        "{facts:storage.page_cache.run_stretch_warn_above:.0%}, fail above "
        "{facts:storage.page_cache.run_stretch_fail_above:.0%}).",
        why="A starved data loader leaves the GPUs idle; image and audio sets at hundreds of KB per sample need "
        "GB/s (ResNet-50 on a DGX A100: 1.8 GB/s), while pre-tokenised text needs KB/s.",
        example="```yaml\nstorage: [{kind: cloud-volume, volume_type: gp3}]   # 125 MiB/s\ndata: {samples: 1.3e6, "
        "bytes_per_sample: 110000}   # 8 GPUs at 2,000 img/s each: STO001\n```",
        fix="Faster storage (local NVMe, provisioned gp3/io2 throughput, a parallel file system), caching the "
        "data set on local NVMe, or a smaller on-disk format.",
        references=_STO,
    ),
)

RANDOM_IOPS = Rule(
    code="STO002",
    name="random-read-iops-too-low",
    summary="Random access to the data needs more IOPS than the device serves",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="For `data.access: random`, one random read per sequence (or sample): sequences/s at the "
        "optimistic end of the throughput estimate x {facts:storage.read_bandwidth.margin:g}, against the "
        "device's random-read IOPS (a 7,200 "
        "rpm HDD about 80; gp3 3,000 unless provisioned). Fail above, warn above "
        "{facts:storage.read_bandwidth.warn_above_fraction:.0%}.",
        why="Shuffled reads of small records turn a disk's MB/s into IOPS: an HDD's 80 IOPS feed 80 samples a "
        "second, whatever its sequential rate.",
        example="```yaml\nstorage: [{kind: hdd}]\ndata: {access: random}   # STO002 for anything faster than 80/s\n```",
        fix="Pack the data into large shards read sequentially (WebDataset, MosaicML StreamingDataset), move it to "
        "SSD/NVMe, or provision IOPS.",
        references=_STO,
    ),
)

PAGE_CACHE = Rule(
    code="STO005",
    name="data-set-larger-than-page-cache",
    summary="A random-access data set too big for RAM is read from slow storage every epoch",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Compares the data set's size with half the node's RAM: a set that fits is served from the page "
        "cache after the first epoch; one that does not, read at random from an HDD, a cloud volume or a "
        "network file system, hits the device every epoch (warn).",
        why="Repeated epochs over a set larger than RAM are bounded by the device, not by the first epoch's "
        "read; the first two rules assume nothing is cached.",
        example="```yaml\nmemory_gib: 64\ndata: {size_gb: 500, access: random}   # on gp3: STO005\n```",
        fix="More RAM, local NVMe for the data set, or sequential shards.",
        references=("https://github.com/stas00/ml-engineering/blob/master/compute/cpu-memory/README.md",),
    ),
)


class _Reading(NamedTuple):
    """What the three rules share: the data, the device that holds it and the rate the GPUs read at."""

    data: Data
    node: NodeView
    rates: DeviceRates
    tokens_per_s: float
    seq: int
    where: Location
    related: list[Location]
    subject: str
    facts: Mapping[str, FactSection]

    @property
    def margin(self) -> float:
        return float(self.facts["read_bandwidth"]["margin"])

    @property
    def warn(self) -> float:
        return float(self.facts["read_bandwidth"]["warn_above_fraction"])

    @property
    def data_gb(self) -> float | None:
        data = self.data
        if data.size_gb:
            return float(data.size_gb)
        if data.tokens and data.bytes_per_token:
            return data.tokens * data.bytes_per_token / 1e9
        if data.samples and data.bytes_per_sample:
            return data.samples * data.bytes_per_sample / 1e9
        return None

    @property
    def cacheable_gb(self) -> float | None:
        """The page cache: a fraction of the node's RAM, in GB."""
        ram = self.node.spec.memory_gib
        if ram is None:
            return None
        return ram * 2**30 / 1e9 * float(self.facts["page_cache"]["cacheable_fraction_of_ram"])

    @property
    def cached_epochs(self) -> float | None:
        """Epochs of a run whose data set fits the page cache (the device then feeds epoch 1 only)."""
        size, cacheable, epochs = self.data_gb, self.cacheable_gb, self.data.epochs
        if size is None or cacheable is None or not epochs or epochs <= 1:
            return None
        return float(epochs) if size <= cacheable else None

    def bytes_per_token(self) -> tuple[float | None, str]:
        data, seq = self.data, self.seq
        if data.bytes_per_sample:
            return data.bytes_per_sample / seq, f"{fmt(data.bytes_per_sample)} B per sample / {seq} tokens"
        if data.bytes_per_token:
            return data.bytes_per_token, f"{fmt(data.bytes_per_token)} B per token"
        if data.size_gb and data.tokens:
            return data.size_gb * 1e9 / data.tokens, "size_gb / tokens"
        return None, ""


class DataLoadingChecker(WorkloadOnRigChecker):
    name = "storage.data-loading"
    rules = (READ_RATE, RANDOM_IOPS, PAGE_CACHE)

    def check_workload(
        self, ctx: CheckContext, workload: Workload, node: NodeView | None
    ) -> Iterator[Finding]:
        data = workload.data
        where = ctx.workload_at("/data")
        if workload.task == "inference" or data is None or node is None:
            yield READ_RATE.passed(
                "no training data to read (inference, or no data section)",
                location=where,
                subject=ctx.subject,
            )
            return
        facts = ctx.facts("storage")
        picked = pick_device(node, data.storage, "data")
        if picked is None:
            yield READ_RATE.skipped(
                f"{node.label}: no storage declared",
                location=ctx.rig_at(node.pointer),
                subject=ctx.subject,
                fix="add the storage that holds the data set",
            )
            return
        rates = device_rates(node, *picked, facts)
        estimate = ctx.estimate_for(node, node.gpus[0])
        assert estimate is not None  # needs_workload
        speed = estimate.training
        if speed is None:
            yield READ_RATE.skipped(
                "no throughput estimate for this GPU", location=where, subject=ctx.subject
            )
            return
        tokens_per_s = speed.tokens_per_second.high
        if not rates.shared:  # each node reads its own copy: the rate one node needs
            tokens_per_s /= max(1, -(-estimate.inputs.world // node.gpus_per_node))
        reading = _Reading(
            data=data,
            node=node,
            rates=rates,
            tokens_per_s=tokens_per_s,
            seq=estimate.inputs.seq_len,
            where=where,
            related=[ctx.rig_at(rates.pointer)],
            subject=ctx.subject,
            facts=facts,
        )
        yield self._bandwidth(reading)
        yield self._iops(reading)
        yield self._page_cache(reading)

    def _bandwidth(self, reading: _Reading) -> Finding:
        """STO001: the sequential read rate the GPUs need against the device's."""
        per_token, how = reading.bytes_per_token()
        where, related, subject, rates = reading.where, reading.related, reading.subject, reading.rates
        if per_token is None:
            return READ_RATE.skipped(
                "bytes per token or per sample not given (data.bytes_per_token, "
                "data.bytes_per_sample or data.size_gb with data.tokens)",
                location=where,
                subject=subject,
                fix="add data.bytes_per_token (2 for uint16 token files)",
            )
        margin, tokens_per_s = reading.margin, reading.tokens_per_s
        need = tokens_per_s * per_token * margin / 1e6
        available = rates.read_mb_s
        evidence = {
            "tokens_per_s": round(tokens_per_s),
            "bytes_per_token": round(per_token, 4),
            "bytes_from": how,
            "margin": margin,
            "need_mb_s": round(need, 3),
            "device": rates.label,
            "read_mb_s": available,
            "rates_from": rates.how,
            **reading.facts["read_bandwidth"].cite(),
        }
        told = (
            f"reading {fmt(need, 2)} MB/s ({fmt(tokens_per_s, 0)} tokens/s x {fmt(per_token, 2)} B x {margin:g}) "
            f"from {rates.label}"
        )
        if available is None or available <= 0:  # 0: a derived figure (the schema refuses a stated 0)
            return READ_RATE.skipped(
                f"{told}: the device's read rate is unknown" + ("" if available is None else " (0 MB/s)"),
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix="add read_mb_s to the storage entry",
            )
        told += f" at {fmt(available, 0)} MB/s ({need / available:.1%})"
        fix = (
            "local NVMe, provisioned throughput, a parallel file system, or cache the data set on local disk"
        )
        severity = READ_RATE.graded(need, warn_at=reading.warn * available, fail_at=available)
        epochs = reading.cached_epochs
        if epochs is not None and severity is not Severity.PASS:
            severity, told = self._first_epoch(reading, told, need / available, epochs, evidence)
        return READ_RATE.judged(
            severity, told, location=where, related=related, evidence=evidence, fix=fix, subject=subject
        )

    @staticmethod
    def _first_epoch(
        reading: _Reading, told: str, ratio: float, epochs: float, evidence: dict[str, Any]
    ) -> tuple[Severity, str]:
        """A data set in the page cache: only epoch 1 waits on the device; judge the run's stretch."""
        cache = reading.facts["page_cache"]
        stretch = (max(1.0, ratio) - 1) / epochs
        evidence.update(
            epochs=epochs,
            first_epoch_stretch=round(max(1.0, ratio), 3),
            run_stretch=round(stretch, 4),
            formula="run stretch = (need / device rate - 1) / epochs (epochs 2+ from the page cache)",
        )
        told += (
            f"; the data set fits the page cache, so only epoch 1 of {fmt(epochs)} reads the device: it takes "
            f"{fmt(max(1.0, ratio), 2)}x as long, the run {stretch:.0%} longer"
        )
        severity = READ_RATE.graded(
            stretch,
            warn_at=float(cache["run_stretch_warn_above"]),
            fail_at=float(cache["run_stretch_fail_above"]),
        )
        return severity, told

    @staticmethod
    def _iops(reading: _Reading) -> Finding:
        """STO002: one random read per sequence against the device's random-read IOPS."""
        where, related, subject, rates = reading.where, reading.related, reading.subject, reading.rates
        if reading.data.access != "random":
            return RANDOM_IOPS.passed(
                f"data read {reading.data.access or 'in an unspecified order'}: no random-read demand assumed",
                location=where,
                subject=subject,
            )
        sequences_per_s = reading.tokens_per_s / reading.seq
        need = sequences_per_s * reading.margin
        available = rates.random_read_iops
        evidence = {
            "sequences_per_s": round(sequences_per_s, 2),
            "need_iops": round(need, 1),
            "device": rates.label,
            "random_read_iops": available,
            "rates_from": rates.how,
        }
        told = (
            f"{fmt(need, 0)} random reads/s (one per {reading.seq}-token sequence, x {reading.margin:g}) "
            f"from {rates.label}"
        )
        if available is None or available <= 0:  # 0: a derived figure (the schema refuses a stated 0)
            return RANDOM_IOPS.skipped(
                f"{told}: the device's random-read IOPS are unknown" + ("" if available is None else " (0)"),
                location=where,
                related=related,
                evidence=evidence,
                subject=subject,
                fix="add random_read_iops to the storage entry",
            )
        told += f" at {fmt(available, 0)} IOPS"
        return RANDOM_IOPS.judged(
            RANDOM_IOPS.graded(need, warn_at=reading.warn * available, fail_at=available),
            told,
            location=where,
            related=related,
            evidence=evidence,
            fix="sequential shards (WebDataset, StreamingDataset), SSD/NVMe, or provisioned IOPS",
            subject=subject,
        )

    @staticmethod
    def _page_cache(reading: _Reading) -> Finding:
        """STO005: a random-access data set larger than the page cache, on a slow device."""
        where, subject, rates = reading.where, reading.subject, reading.rates
        size, cacheable, ram = reading.data_gb, reading.cacheable_gb, reading.node.spec.memory_gib
        if size is None or cacheable is None or ram is None:
            return PAGE_CACHE.skipped("data set size or RAM unknown", location=where, subject=subject)
        told = (
            f"{fmt(size, 1)} GB data set against {fmt(cacheable, 0)} GB of page cache "
            f"(half of {fmt(ram)} GiB RAM)"
        )
        slow = rates.device.kind in ("hdd", "cloud-volume", "network-fs", "object-store")
        evidence = {
            "data_gb": size,
            "cacheable_gb": round(cacheable, 1),
            "device_kind": rates.device.kind,
            **reading.facts["page_cache"].cite(),
        }
        if size > cacheable and reading.data.access == "random" and slow:
            return PAGE_CACHE.warned(
                f"{told}: random reads hit the {rates.device.kind} every epoch",
                location=where,
                related=reading.related,
                evidence=evidence,
                subject=subject,
                fix="copy the data set to local NVMe, add RAM, or use sequential shards",
            )
        return PAGE_CACHE.passed(told, location=where, evidence=evidence, subject=subject)


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(DataLoadingChecker())
