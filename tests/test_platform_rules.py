"""PLT001-PLT003 with numbers worked by hand from the formulas, at and around each threshold."""

from __future__ import annotations

import pytest

from rigcheck.core.engine.findings import Severity

RIG = """\
apiVersion: rigcheck/v1
kind: Rig
name: r
nodes:
  - name: box
    gpus: {{model: RTX 3090, count: 2{gpu_extra}}}
    cpu: {{cores: {cores}}}
    memory_gib: {ram}
    chassis: {{gpu_clearance_mm: {clearance}}}
"""


def rig(ram: float = 64, cores: int = 16, clearance: float = 420, gpu_extra: str = "") -> str:
    return RIG.format(ram=ram, cores=cores, clearance=clearance, gpu_extra=gpu_extra)


def workload(extra: str = "", task: str = "pretrain") -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: gpt2-124m}\n"
        f"task: {task}\n{extra}"
    )


def one(report, code):  # type: ignore[no-untyped-def]
    found = [finding for finding in report.findings if finding.code == code]
    assert len(found) == 1, found
    return found[0]


class TestSystemRam:
    """RAM-1: ratio = RAM / (2 x 24 GiB = 48 GiB); warn < 1.0 (48 GiB); fail < 1.0 only when the workload
    stages state in host RAM (offload, or full checkpoints of a sharded model)."""

    @pytest.mark.parametrize(
        ("ram", "severity", "ratio"),
        [
            (35.9, Severity.WARN, 0.748),  # a rig alone warns at most
            (47.9, Severity.WARN, 0.998),  # 47.9 / 48 = 0.9979
            (48, Severity.PASS, 1.0),
            (96, Severity.PASS, 2.0),
        ],
    )
    def test_thresholds(self, check, ram: float, severity: Severity, ratio: float) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(ram=ram), select=("PLT001",)), "PLT001")
        assert finding.severity is severity
        assert finding.evidence["ratio"] == ratio
        assert finding.evidence["vram_gib"] == 48
        assert finding.evidence["source"].startswith("https://github.com/stas00/ml-engineering")
        assert finding.location.line == 8 and finding.location.pointer == "/nodes/0/memory_gib"

    @pytest.mark.parametrize(
        ("ram", "parallelism", "severity"),
        [
            (47.9, "{dp: 2, zero: 3, offload: cpu}", Severity.FAIL),
            (48, "{dp: 2, zero: 3, offload: cpu}", Severity.PASS),
            (47.9, "{dp: 2, zero: 3, offload_params: true, offload: nvme}", Severity.FAIL),
            (47.9, "{dp: 2, zero: 2}", Severity.WARN),  # GPU-resident
        ],
    )
    def test_host_staging_turns_the_warning_into_a_failure(
        self, check, ram: float, parallelism: str, severity: Severity
    ) -> None:  # type: ignore[no-untyped-def]
        job = workload(f"parallelism: {parallelism}\n")
        assert one(check(rig(ram=ram), job, select=("PLT001",)), "PLT001").severity is severity

    def test_full_checkpoints_of_a_sharded_model_are_gathered_on_the_host(self, check) -> None:  # type: ignore[no-untyped-def]
        full = workload("parallelism: {dp: 2, fsdp: full_shard}\nrun: {checkpoint: {kind: full}}\n")
        sharded = workload("parallelism: {dp: 2, fsdp: full_shard}\nrun: {checkpoint: {kind: sharded}}\n")
        found = one(check(rig(ram=32), full, select=("PLT001",)), "PLT001")
        assert found.severity is Severity.FAIL and "full checkpoints of a sharded model" in found.message
        assert one(check(rig(ram=32), sharded, select=("PLT001",)), "PLT001").severity is Severity.WARN

    def test_messages_carry_the_numbers_and_the_fix(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(ram=32), select=("PLT001",)), "PLT001")
        assert finding.message == (
            "node box: 32 GiB RAM is 0.67x the 48 GiB of VRAM (2x NVIDIA GeForce RTX 3090), under 1x; enough for "
            "GPU-resident training and inference, short for CPU offload or loading a full state dict"
        )
        assert finding.fix.startswith("fit at least 48 GiB of RAM (1x VRAM); 96 GiB (2x)")

    def test_soft_recommendation_is_noted_not_failed(self, check) -> None:  # type: ignore[no-untyped-def]
        assert "under the 2x" in one(check(rig(ram=64), select=("PLT001",)), "PLT001").message
        assert "under the 2x" not in one(check(rig(ram=96), select=("PLT001",)), "PLT001").message

    def test_dgx_h100_reference_ratio(self, check) -> None:  # type: ignore[no-untyped-def]
        text = rig(ram=2048).replace("model: RTX 3090, count: 2", "model: H100 SXM, count: 8")
        finding = one(check(text, select=("PLT001",)), "PLT001")
        assert finding.evidence["vram_gib"] == 640 and finding.evidence["ratio"] == 3.2  # rules_facts RAM-1

    def test_unknown_ram_is_skipped_with_the_target(self, check) -> None:  # type: ignore[no-untyped-def]
        text = rig().replace("    memory_gib: 64\n", "")
        finding = one(check(text, select=("PLT001",)), "PLT001")
        assert finding.severity is Severity.SKIP and "at least 48 GiB" in finding.fix


class TestCpuCores:
    """CPU-1: cores >= processes x (workers + 1) + max(1, ceil(0.5 x processes))."""

    @pytest.mark.parametrize(
        ("cores", "severity"), [(6, Severity.WARN), (7, Severity.PASS), (8, Severity.PASS)]
    )
    def test_rig_alone_uses_all_gpus_and_two_workers(self, check, cores: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(cores=cores), select=("PLT002",)), "PLT002")  # 2 x (2 + 1) + 1 = 7
        assert finding.severity is severity
        assert finding.evidence["required_cores"] == 7 and finding.evidence["reserved_cores"] == 1
        assert finding.location.pointer == "/nodes/0/cpu/cores" and finding.location.line == 7

    def test_an_8_gpu_node_reserves_bekmans_four_cores(self, check) -> None:  # type: ignore[no-untyped-def]
        text = rig(cores=27).replace("model: RTX 3090, count: 2", "model: H100 SXM, count: 8")
        finding = one(check(text, select=("PLT002",)), "PLT002")  # 8 x (2 + 1) + 4 = 28 (Bekman's example)
        assert (finding.severity, finding.evidence["required_cores"]) == (Severity.WARN, 28)

    def test_fix_names_the_workers_that_fit(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(cores=6), select=("PLT002",)), "PLT002")
        # (6 - 1) // 2 - 1 = 1 worker: 2 x (1 + 1) + 1 = 5 <= 6
        assert (
            finding.fix
            == "use a CPU with at least 7 cores, or set data.num_workers to 1 (the most that 6 cores feed)"
        )

    def test_workload_workers_and_world_size(self, check) -> None:  # type: ignore[no-untyped-def]
        both = workload("parallelism: {dp: 2}\ndata: {num_workers: 4}\n")
        finding = one(check(rig(cores=10), both, select=("PLT002",)), "PLT002")  # 2 x (4 + 1) + 1 = 11
        assert (finding.severity, finding.evidence["required_cores"]) == (Severity.WARN, 11)
        single = workload("data: {num_workers: 4}\n")  # world size 1: one process on the 2-GPU box
        finding = one(check(rig(cores=6), single, select=("PLT002",)), "PLT002")  # 1 x 5 + 1 = 6
        assert (finding.severity, finding.evidence["processes"]) == (Severity.PASS, 1)

    def test_inference_has_no_data_loader_workers(self, check) -> None:  # type: ignore[no-untyped-def]
        serving = workload("parallelism: {tp: 2}\n", task="inference")
        finding = one(check(rig(cores=3), serving, select=("PLT002",)), "PLT002")  # 2 x (0 + 1) + 1 = 3
        assert (finding.severity, finding.evidence["required_cores"]) == (Severity.PASS, 3)

    def test_unknown_cores_is_skipped(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig().replace("    cpu: {cores: 16}\n", ""), select=("PLT002",)), "PLT002")
        assert finding.severity is Severity.SKIP and "7 or more passes" in finding.fix


class TestGpuClearance:
    """COOL-3: left = clearance - length; fail < 0, warn < 30 mm."""

    @pytest.mark.parametrize(
        ("clearance", "severity", "left"),
        [
            (335, Severity.FAIL, -1),
            (336, Severity.WARN, 0),
            (365, Severity.WARN, 29),
            (366, Severity.PASS, 30),
        ],
    )
    def test_thresholds_with_the_rigs_length(
        self, check, clearance: float, severity: Severity, left: float
    ) -> None:  # type: ignore[no-untyped-def]
        text = rig(clearance=clearance, gpu_extra=", length_mm: 336")
        finding = one(check(text, select=("PLT003",)), "PLT003")
        assert (finding.severity, finding.evidence["left_mm"]) == (severity, left)
        assert finding.evidence["length_from"] == "rig"
        assert finding.location.pointer == "/nodes/0/gpus/length_mm" and finding.location.line == 6
        assert finding.related[0].pointer == "/nodes/0/chassis/gpu_clearance_mm"

    def test_catalog_length_of_the_founders_edition(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(clearance=340), select=("PLT003",)), "PLT003")  # RTX 3090 FE: 313 mm
        assert (finding.severity, finding.evidence["left_mm"]) == (Severity.WARN, 27)
        assert finding.evidence["length_from"] == "catalog:rtx-3090"

    def test_too_long_card_fix(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(clearance=300, gpu_extra=", length_mm: 336"), select=("PLT003",)), "PLT003")
        assert finding.message.endswith("36 mm too long")
        assert (
            finding.fix == "choose a card of at most 270 mm, or a case with at least 366 mm of GPU clearance"
        )

    def test_sxm_modules_and_missing_chassis_are_skipped(self, check) -> None:  # type: ignore[no-untyped-def]
        sxm = rig().replace("model: RTX 3090, count: 2", "model: H100 SXM, count: 8")
        assert one(check(sxm, select=("PLT003",)), "PLT003").severity is Severity.SKIP
        no_chassis = rig().replace("    chassis: {gpu_clearance_mm: 420}\n", "")
        finding = one(check(no_chassis, select=("PLT003",)), "PLT003")
        assert finding.severity is Severity.SKIP and "gpu_clearance_mm" in finding.fix
