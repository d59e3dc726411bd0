"""EVD007: fio results against the storage the rig declares (docs/research/rules_facts.md STO-2, STO-3).

A job is matched to a declared device by its file name (``/dev/nvme0n1``, ``/mnt/data/...``
against the device's ``name`` or ``mount``); otherwise to the data device the STO rules use.
"""

from __future__ import annotations

from collections.abc import Iterator

from rigcheck.core.engine.checker import EvidenceChecker
from rigcheck.core.engine.context import CheckContext, NodeView
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.hookspecs import RegisterChecker, hookimpl
from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.estimate.storage import device_rates, pick_device
from rigcheck.core.spec.models.rig import StorageDevice
from rigcheck.core.spec.numbers import fmt
from rigcheck.evidence.match import where
from rigcheck.evidence.model import Evidence

STORAGE = Rule(
    code="EVD007",
    name="measured-storage-below-declared",
    summary="Measured storage (fio) is slower than the rig declares for the device",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Matches each fio job to a declared storage device (by file name or mount, else the data device) and "
        "compares read IOPS with `random_read_iops` (random jobs) and read bandwidth with `read_mb_s` "
        "(sequential jobs): warn below {facts:evidence.storage.warn_below_fraction:.0%} of the declared "
        "figure. Cloud volumes are compared with their "
        "provisioned or baseline limits.",
        why="The STO rules (data loading, checkpoint time) trust the declared numbers; a device that measures lower "
        "(a gp3 volume at baseline, an NVMe behind a chipset link, a RAID set degraded) makes them optimistic.",
        example="```yaml\nstorage: [{name: nvme0n1, kind: nvme, random_read_iops: 1000000}]\n"
        "# fio randread 4k: 85,139 IOPS: EVD007\n```",
        fix="Correct the declared figures to what the device measures (and re-check STO), or find what slows it "
        "(queue depth, the PCIe link, provisioned IOPS, thermal throttling).",
        references=(
            "https://fio.readthedocs.io/en/latest/fio_doc.html#json-output",
            "docs/research/rules_facts.md STO-2",
        ),
    ),
)


class EvidenceStorageChecker(EvidenceChecker):
    name = "evidence.storage"
    rules = (STORAGE,)

    def check_evidence(
        self, ctx: CheckContext, evidence: Evidence, node: NodeView | None
    ) -> Iterator[Finding]:
        if node is None or not evidence.storage or not node.spec.storage:
            return
        facts = ctx.facts("evidence")["storage"]
        warn = float(facts["warn_below_fraction"])
        for job in evidence.storage:
            picked = self._device(node, job.filename)
            if picked is None:
                continue
            rates = device_rates(node, *picked, ctx.facts("storage"))
            location = ctx.rig_at(rates.pointer)
            random = "rand" in (job.rw or "")
            if random and job.read_iops:
                declared, measured, unit = rates.random_read_iops, job.read_iops, "IOPS"
            elif job.read_bw_bytes_per_s:
                declared, measured, unit = rates.read_mb_s, job.read_bw_bytes_per_s / 1e6, "MB/s"
            else:
                continue
            label = (
                f"{node.label}: fio {job.name or ''} ({job.rw}, bs {job.block_size}, QD {job.iodepth}) on "
                f"{rates.label} in {where(evidence)}"
            )
            detail = {
                "evidence": evidence.source,
                "job": job.name,
                "measured": measured,
                "declared": declared,
                "unit": unit,
                "declared_from": rates.how,
                **facts.cite(),
            }
            if declared is None:
                yield STORAGE.passed(
                    f"{label}: {fmt(measured, 0)} {unit}; the rig declares none",
                    location=location,
                    evidence=detail,
                )
            elif STORAGE.graded(measured, warn_at=warn * declared, higher_is_worse=False) is Severity.WARN:
                yield STORAGE.warned(
                    f"{label}: {fmt(measured, 0)} {unit} against {fmt(declared, 0)} declared "
                    f"({measured / declared:.0%})",
                    location=location,
                    evidence=detail,
                    fix=f"declare {fmt(measured, 0)} {unit} (and re-check STO), or find what slows the device",
                )
            else:
                yield STORAGE.passed(
                    f"{label}: {fmt(measured, 0)} {unit} against {fmt(declared, 0)} declared",
                    location=location,
                    evidence=detail,
                )

    @staticmethod
    def _device(node: NodeView, filename: str | None) -> tuple[int, StorageDevice] | None:
        """The declared device a fio job ran on: by file name or mount, else the data device."""
        if filename:
            for index, device in enumerate(node.spec.storage or ()):
                keys = [key for key in (device.name, device.mount) if key]
                if any(key in filename for key in keys):
                    return index, device
        return pick_device(node, None, "data")


@hookimpl
def rigcheck_checkers(register: RegisterChecker) -> None:
    register(EvidenceStorageChecker())
