"""PLT004-PLT011 (FP64, cooling, chassis, CUDA device) at and around their thresholds."""

from __future__ import annotations

import pytest

from rigcheck.core.engine.findings import Severity


def rig(gpus: str, chassis: str = "", extra: str = "") -> str:
    text = f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: box\n    gpus: {gpus}\n"
    if chassis:
        text += f"    chassis: {chassis}\n"
    return text + extra


def workload(extra: str = "") -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: gpt2-124m}\ntask: pretrain\n"
        "batch: {micro: 1, seq_len: 256}\n" + extra
    )


def only(report, code):  # type: ignore[no-untyped-def]
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def test_fp64_on_geforce_and_datacenter(check) -> None:  # type: ignore[no-untyped-def]
    needs = workload("run: {needs_fp64: true}\n")
    geforce = only(check(rig("{model: RTX 4090}"), needs, select=("PLT004",)), "PLT004")
    assert geforce.severity is Severity.FAIL
    assert geforce.evidence["ratio"] == pytest.approx(1.29 / 82.6, abs=1e-4)  # 1/64
    hopper = only(check(rig("{model: H100 SXM}"), needs, select=("PLT004",)), "PLT004")
    assert hopper.severity is Severity.PASS  # FP64 tensor 67 of FP32 67 TFLOPS
    assert (
        only(check(rig("{model: RTX 4090}"), workload(), select=("PLT004",)), "PLT004").severity
        is Severity.PASS
    )


@pytest.mark.parametrize(
    ("count", "gap", "severity"),
    [(2, 0, Severity.PASS), (3, 0, Severity.WARN), (4, 0, Severity.FAIL), (4, 1, Severity.PASS)],
)
def test_open_air_stacking(check, count: int, gap: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    gpus = f"{{model: RTX 4090, count: {count}, slot_gap: {gap}}}"
    finding = only(check(rig(gpus, "{form_factor: full-tower}"), select=("PLT005",)), "PLT005")
    assert finding.severity is severity


def test_open_air_cards_in_open_frame_and_blowers_pass(check) -> None:  # type: ignore[no-untyped-def]
    frame = only(
        check(rig("{model: RTX 4090, count: 7}", "{form_factor: open-frame}"), select=("PLT005",)), "PLT005"
    )
    blower = only(
        check(
            rig("{model: RTX 3090, count: 4, cooler: blower}", "{form_factor: full-tower}"),
            select=("PLT005",),
        ),
        "PLT005",
    )
    assert frame.severity is Severity.PASS and blower.severity is Severity.PASS


@pytest.mark.parametrize(
    ("slots", "gap", "severity"),
    [(9, 0, Severity.PASS), (8, 0, Severity.FAIL), (11, 1, Severity.PASS), (10, 1, Severity.FAIL)],
)
def test_slot_budget(check, slots: int, gap: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    """3 x RTX 4090 FE at 3 slots = 9, plus one slot between neighbours = 11."""
    gpus = f"{{model: RTX 4090, count: 3, slot_gap: {gap}}}"
    finding = only(
        check(rig(gpus, f"{{form_factor: full-tower, expansion_slots: {slots}}}"), select=("PLT006",)),
        "PLT006",
    )
    assert finding.severity is severity


def test_partial_slots_round_up(check) -> None:  # type: ignore[no-untyped-def]
    finding = only(
        check(
            rig("{model: RTX 4090, count: 2, slots: 3.5}", "{form_factor: mid-tower, expansion_slots: 7}"),
            select=("PLT006",),
        ),
        "PLT006",
    )
    assert finding.evidence["slots_needed"] == 8 and finding.severity is Severity.FAIL


@pytest.mark.parametrize(
    ("clearance", "severity"),
    [(149, Severity.FAIL), (179, Severity.WARN), (180, Severity.PASS)],
)
def test_card_height(check, clearance: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    gpus = "{model: RTX 4090, height_mm: 150}"
    chassis = f"{{form_factor: mid-tower, gpu_height_clearance_mm: {clearance}}}"
    assert only(check(rig(gpus, chassis), select=("PLT007",)), "PLT007").severity is severity


def test_passive_cards_need_server_airflow(check) -> None:  # type: ignore[no-untyped-def]
    gpus = "{model: NVIDIA A100 PCIe 80GB}"
    assert (
        only(check(rig(gpus, "{form_factor: mid-tower}"), select=("PLT008",)), "PLT008").severity
        is Severity.FAIL
    )
    ducted = only(
        check(rig(gpus, "{form_factor: workstation, airflow: server-ducted}"), select=("PLT008",)), "PLT008"
    )
    assert ducted.severity is Severity.PASS
    assert (
        only(check(rig(gpus, "{form_factor: rackmount}"), select=("PLT008",)), "PLT008").severity
        is Severity.PASS
    )


@pytest.mark.parametrize(("hours", "severity"), [(48, Severity.PASS), (49, Severity.WARN)])
def test_laptop_gpu_long_runs(check, hours: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    report = check(
        rig("{model: RTX 4090 Laptop}"), workload(f"run: {{hours: {hours}}}\n"), select=("PLT009",)
    )
    assert only(report, "PLT009").severity is severity


def test_several_psus_need_a_sync_adapter(check) -> None:  # type: ignore[no-untyped-def]
    plain = rig("{model: RTX 4090, count: 4}", extra="    psu: {watts: 1000, count: 4}\n")
    assert only(check(plain, select=("PLT010",)), "PLT010").severity is Severity.WARN
    synced = rig(
        "{model: RTX 4090, count: 4}", extra="    psu: {watts: 1000, count: 4, sync_adapter: true}\n"
    )
    assert only(check(synced, select=("PLT010",)), "PLT010").severity is Severity.PASS


def test_no_cuda_device(check) -> None:  # type: ignore[no-untyped-def]
    apple = only(check(rig("{model: M2 Ultra}"), workload(), select=("PLT011",)), "PLT011")
    assert apple.severity is Severity.FAIL and "MPS" in apple.fix
    amd_cuda = rig("{model: MI300X, count: 8}", extra="    software: {torch: 2.3.0+cu121}\n")
    assert only(check(amd_cuda, select=("PLT011",)), "PLT011").severity is Severity.FAIL
    amd_rocm = rig("{model: MI300X, count: 8}", extra="    software: {torch: 2.3.0+rocm6.0}\n")
    assert only(check(amd_rocm, select=("PLT011",)), "PLT011").severity is Severity.PASS
