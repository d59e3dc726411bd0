"""STO001-STO005 with numbers worked by hand from docs/research/rules_facts.md STO-1..STO-6.

The checkpoint examples train Llama-2-7B (6,738,415,616 parameters) on one 8 x H100 node: a full
restartable checkpoint is 14 B/param = 94,337,818,624 B; a gp3 volume at its baseline writes
125 MiB/s = 131,072,000 B/s, so one checkpoint takes 719.73 s.
"""

from __future__ import annotations

import pytest

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.engine.findings import Severity
from rigcheck.core.estimate.architecture import resolve_architecture
from rigcheck.core.estimate.estimate import estimate_workload
from rigcheck.core.estimate.storage import checkpoint_bytes
from rigcheck.core.spec.models.workload import ModelSpec

LLAMA2_7B = 6_738_415_616
CKPT_BYTES = LLAMA2_7B * 14
GP3_BASELINE = 125 * 2**20  # B/s
WRITE_S = CKPT_BYTES / GP3_BASELINE  # 719.73 s


def rig(storage: str, memory_gib: int = 2048) -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n    gpus: {model: H100 SXM, count: 8}\n"
        f"    memory_gib: {memory_gib}\n    storage: {storage}\n"
    )


def workload(
    run: str = "{}",
    data: str = "{tokens: 1.0e9, bytes_per_token: 2}",
    batch: str = "{micro: 1, seq_len: 4096}",
) -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: llama-2-7b}\ntask: full_finetune\n"
        f"precision: bf16\noptimizer: adamw\nattention: flash\nactivation_checkpointing: true\nbatch: {batch}\n"
        f"parallelism: {{dp: 8, zero: 3}}\ndata: {data}\nrun: {run}\n"
    )


def one(report, code):  # type: ignore[no-untyped-def]
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


GP3 = "[{name: ckpt, kind: cloud-volume, volume_type: gp3, capacity_gb: 500}]"


class TestCheckpointWrite:
    def test_seven_billion_to_gp3_baseline_takes_twelve_and_a_half_minutes(self) -> None:
        size, _ = checkpoint_bytes(7e9, 7e9, "full", load_rule_facts("storage"))
        assert size == 98e9  # 7B x 14 B
        assert size / GP3_BASELINE == pytest.approx(747.68, abs=0.01)  # 12.46 min (STO-5: "12.5 min")

    def test_write_time_on_gp3(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(
            check(rig(GP3), workload("{checkpoint_interval_min: 600}"), select=("STO004",)), "STO004"
        )
        assert finding.evidence["checkpoint_bytes"] == CKPT_BYTES
        assert finding.evidence["write_mb_s"] == pytest.approx(131.072)
        assert finding.evidence["write_seconds"] == pytest.approx(719.7, abs=0.05)
        assert "12 min" in finding.message

    @pytest.mark.parametrize(
        ("interval", "severity"),
        # warn above 2%: 719.73 s / 0.02 = 599.78 min; fail above 10%: 119.96 min
        [(600, Severity.PASS), (599, Severity.WARN), (120, Severity.WARN), (119, Severity.FAIL)],
    )
    def test_thresholds(self, check, interval: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        report = check(rig(GP3), workload(f"{{checkpoint_interval_min: {interval}}}"), select=("STO004",))
        finding = one(report, "STO004")
        assert finding.severity is severity
        assert finding.evidence["overhead"] == pytest.approx(WRITE_S / (interval * 60), abs=1e-4)

    def test_provisioned_throughput_and_weights_only(self, check) -> None:  # type: ignore[no-untyped-def]
        fast = "[{name: ckpt, kind: cloud-volume, volume_type: gp3, provisioned_mb_s: 1000}]"
        finding = one(
            check(rig(fast), workload("{checkpoint_interval_min: 60}"), select=("STO004",)), "STO004"
        )
        assert finding.evidence["write_seconds"] == pytest.approx(CKPT_BYTES / 1e9, abs=0.05)  # 94.3 s: 2.6%
        assert finding.severity is Severity.WARN
        light = workload("{checkpoint_interval_min: 60, checkpoint: {kind: weights-only}}")
        finding = one(check(rig(fast), light, select=("STO004",)), "STO004")
        assert finding.evidence["checkpoint_bytes"] == LLAMA2_7B * 2 and finding.severity is Severity.PASS

    def test_lora_saves_only_the_adapters(self, check) -> None:  # type: ignore[no-untyped-def]
        lora = workload("{checkpoint_interval_min: 30}").replace(
            "task: full_finetune", "task: lora\nlora: {rank: 16}"
        )
        finding = one(check(rig(GP3), lora, select=("STO004",)), "STO004")
        # q and v projections by default: 32 layers x 16 x (4096 + 4096) x 2 = 8,388,608 params x 12 B
        assert finding.evidence["checkpoint_bytes"] == 8_388_608 * 12

    def test_inference_writes_no_checkpoints(self, check) -> None:  # type: ignore[no-untyped-def]
        serving = workload().replace("task: full_finetune", "task: inference")
        assert one(check(rig(GP3), serving, select=("STO004",)), "STO004").severity is Severity.PASS


class TestCapacity:
    @pytest.mark.parametrize(
        ("capacity", "severity"),
        # 3 kept x 94.34 GB + 100 GB of data = 383.01 GB; warn above 90% of the room
        [
            (500, Severity.PASS),
            (426, Severity.PASS),
            (425, Severity.WARN),
            (384, Severity.WARN),
            (383, Severity.FAIL),
        ],
    )
    def test_thresholds(self, check, capacity: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        storage = f"[{{name: ckpt, kind: nvme, capacity_gb: {capacity}, write_mb_s: 5000}}]"
        report = check(
            rig(storage), workload("{checkpoint_interval_min: 60}", "{size_gb: 100}"), select=("STO003",)
        )
        finding = one(report, "STO003")
        assert finding.evidence["need_gb"] == pytest.approx(3 * CKPT_BYTES / 1e9 + 100, abs=0.01)
        assert finding.severity is severity

    def test_shared_file_system_counts_eighty_percent(self, check) -> None:  # type: ignore[no-untyped-def]
        storage = "[{name: lustre, kind: network-fs, capacity_gb: 1000, write_mb_s: 20000}]"
        report = check(
            rig(storage), workload("{checkpoint: {keep: 5}}", "{size_gb: 100}"), select=("STO003",)
        )
        finding = one(report, "STO003")
        # 5 x 94.34 + 100 = 571.7 GB against 800 GB
        assert finding.evidence["room_gb"] == 800 and finding.severity is Severity.PASS


def tokens_per_second_high(catalog) -> float:  # type: ignore[no-untyped-def]
    """The optimistic end of the throughput estimate for the test workload, as STO001 uses it."""
    from rigcheck.core.spec.documents import parse_spec

    doc = parse_spec(workload(), "w.yaml")
    gpu = catalog.lookup("H100 SXM")
    arch = resolve_architecture(ModelSpec(preset="llama-2-7b"))
    return estimate_workload(doc.model, gpu=gpu, gpus_per_node=8, arch=arch).training.tokens_per_second.high


class TestReadBandwidth:
    IMAGES = "{samples: 1.3e6, bytes_per_sample: 110000}"  # ImageNet-sized samples: 110 kB / 4,096 tokens

    @pytest.mark.parametrize(
        ("share", "severity"), [(0.79, Severity.PASS), (0.81, Severity.WARN), (1.01, Severity.FAIL)]
    )
    def test_thresholds(self, check, catalog, share: float, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        need = tokens_per_second_high(catalog) * (110000 / 4096) * 1.2 / 1e6  # MB/s
        storage = f"[{{name: data, kind: nvme, read_mb_s: {need / share:.6f}}}]"
        finding = one(check(rig(storage), workload(data=self.IMAGES), select=("STO001",)), "STO001")
        assert finding.evidence["need_mb_s"] == pytest.approx(need, rel=1e-3)
        assert finding.severity is severity

    def test_gp3_baseline_rate(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(GP3), workload(data=self.IMAGES), select=("STO001",)), "STO001")
        assert finding.evidence["read_mb_s"] == pytest.approx(131.072)

    def test_pretokenised_text_needs_little(self, check, catalog) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(GP3), workload(), select=("STO001",)), "STO001")
        need = tokens_per_second_high(catalog) * 2 * 1.2 / 1e6
        assert finding.evidence["need_mb_s"] == pytest.approx(need, abs=1e-3) and need < 1
        assert finding.severity is Severity.PASS


class TestRandomIops:
    def test_hdd_default_eighty_iops(self, check, catalog) -> None:  # type: ignore[no-untyped-def]
        data = "{tokens: 1.0e9, bytes_per_token: 2, access: random}"
        finding = one(check(rig("[{name: d, kind: hdd}]"), workload(data=data), select=("STO002",)), "STO002")
        need = tokens_per_second_high(catalog) / 4096 * 1.2  # about 21 random reads a second
        assert finding.evidence["random_read_iops"] == 80  # 1 / (8.2 ms + 4.17 ms)
        assert finding.evidence["need_iops"] == pytest.approx(need, abs=0.1)
        assert need < 0.8 * 80 and finding.severity is Severity.PASS

    @pytest.mark.parametrize(
        ("share", "severity"), [(0.79, Severity.PASS), (0.81, Severity.WARN), (1.01, Severity.FAIL)]
    )
    def test_thresholds(self, check, catalog, share: float, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        data = "{tokens: 1.0e9, bytes_per_token: 2, access: random}"
        need = tokens_per_second_high(catalog) / 4096 * 1.2
        storage = f"[{{name: d, kind: nvme, random_read_iops: {need / share:.6f}}}]"
        finding = one(check(rig(storage), workload(data=data), select=("STO002",)), "STO002")
        assert finding.severity is severity

    @pytest.mark.parametrize(
        ("volume", "iops"),
        [
            ("{kind: cloud-volume, volume_type: gp3}", 3000),
            ("{kind: cloud-volume, volume_type: gp3, provisioned_iops: 16000}", 16000),
            ("{kind: cloud-volume, volume_type: gp2, capacity_gb: 500}", 3 * 500e9 / 2**30),  # 3 IOPS/GiB
            ("{kind: cloud-volume, volume_type: gp2, capacity_gb: 2000}", 3000),  # burst ceiling
            ("{kind: cloud-volume, volume_type: pd-ssd, capacity_gb: 1000}", 30 * 1000e9 / 2**30),
        ],
    )
    def test_cloud_volume_iops(self, check, volume: str, iops: float) -> None:  # type: ignore[no-untyped-def]
        data = "{tokens: 1.0e9, bytes_per_token: 2, access: random}"
        finding = one(check(rig(f"[{volume}]"), workload(data=data), select=("STO002",)), "STO002")
        assert finding.evidence["random_read_iops"] == pytest.approx(iops)

    def test_pd_ssd_throughput_per_gib(self) -> None:
        from rigcheck.core.estimate.storage import cloud_volume
        from rigcheck.core.spec.models.rig import StorageDevice

        device = StorageDevice(kind="cloud-volume", volume_type="pd-ssd", capacity_gb=1000)
        read, _, _, _ = cloud_volume(device, load_rule_facts("storage"))
        assert read == pytest.approx(0.48 * 1000e9 / 2**30 * 2**20 / 1e6)  # 468.7 MB/s


class TestPageCache:
    @pytest.mark.parametrize(("size", "severity"), [(34, Severity.PASS), (35, Severity.WARN)])
    def test_half_the_ram(self, check, size: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        # 64 GiB x 2^30 / 1e9 x 0.5 = 34.36 GB of page cache
        data = f"{{size_gb: {size}, tokens: 1.0e9, bytes_per_token: 2, access: random}}"
        finding = one(check(rig(GP3, memory_gib=64), workload(data=data), select=("STO005",)), "STO005")
        assert finding.evidence["cacheable_gb"] == pytest.approx(34.4, abs=0.05)
        assert finding.severity is severity


class TestWhereCheckpointsGo:
    def test_multi_node_jobs_checkpoint_to_the_shared_file_system(self, check) -> None:  # type: ignore[no-untyped-def]
        storage = (
            "[{name: scratch, kind: nvme, write_mb_s: 4000, count: 8}, "
            "{name: lustre, kind: network-fs, write_mb_s: 20000, capacity_gb: 100000}]"
        )
        two_nodes = rig(storage).replace("  - name: n\n", "  - name: n\n    count: 2\n")
        job = workload("{checkpoint_interval_min: 60}").replace("dp: 8", "dp: 16")
        finding = one(check(two_nodes, job, select=("STO004",)), "STO004")
        assert (
            finding.evidence["device"] == "lustre (network-fs)" and finding.evidence["parallel_writers"] == 1
        )
        assert finding.evidence["write_seconds"] == pytest.approx(CKPT_BYTES / 20e9, abs=0.05)  # 4.7 s

    def test_single_node_jobs_use_local_disk(self, check) -> None:  # type: ignore[no-untyped-def]
        storage = (
            "[{name: scratch, kind: nvme, write_mb_s: 4000}, {name: nfs, kind: network-fs, write_mb_s: 1000}]"
        )
        finding = one(
            check(rig(storage), workload("{checkpoint_interval_min: 60}"), select=("STO004",)), "STO004"
        )
        assert finding.evidence["device"] == "scratch (nvme)"
