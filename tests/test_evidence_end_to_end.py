"""Real tool outputs (tests/data/tool-outputs, see its SOURCES.md) through ``rigcheck check --evidence``
against rigs that declare the machines they came from: what a cluster engineer would conclude."""

from __future__ import annotations

from pathlib import Path

import pytest

OUT = Path(__file__).parent / "data" / "tool-outputs"


def rig(tmp_path: Path, body: str) -> str:
    path = tmp_path / "rig.yaml"
    path.write_text("apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n" + body, encoding="utf-8")
    return str(path)


def findings(run_cli, rig_path: str, *evidence: str, select: str = "EVD"):  # type: ignore[no-untyped-def]
    args = [arg for name in evidence for arg in ("--evidence", str(OUT / name))]
    result = run_cli("check", rig_path, *args, "--select", select, "--format", "json")
    assert result.exit_code in (0, 1), result.err
    return [(f["code"], f["severity"], f["message"]) for f in result.json()["findings"]]


def test_gen4_card_on_a_gen3_host(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: RTX 4090}\n    software: {driver: '535.86.05'}\n")
    found = findings(run_cli, path, "nvidia-smi-xml/rtx4090-drv535.xml")
    codes = {(code, severity) for code, severity, _ in found}
    assert ("EVD004", "warn") in codes  # max_link_gen 3 = the host's limit; current gen 1 is idle
    assert ("EVD001", "pass") in codes and ("EVD002", "pass") in codes
    message = next(m for code, _, m in found if code == "EVD004")
    assert "Gen4 card runs at Gen3" in message and "idle links train down" in message


def test_t4_in_an_x8_slot_declared_x16(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: T4}\n    pcie: {gen: 3, lanes_per_gpu: 16}\n")
    found = findings(run_cli, path, "nvidia-smi-xml/tesla-t4-drv515.xml")
    assert ("EVD004", "fail") in {(c, s) for c, s, _ in found}
    assert ("EVD003", "pass") in {(c, s) for c, s, _ in found}  # data-center T4: ECC on, as expected


def test_a5000_with_ecc_off_on_a_production_box(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: RTX A5000, count: 2, ecc: true}\n")
    found = findings(run_cli, path, "nvidia-smi-xml/2x-rtx-a5000-drv590-dtd-v13.xml")
    assert [s for c, s, _ in found if c == "EVD003"] == ["fail", "fail"]


def test_trimmed_xml_is_reported_and_the_missing_gpus_fail(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: A100 SXM 80GB, count: 4}\n")
    found = findings(run_cli, path, "nvidia-smi-xml/a100-sxm4-80gb-mig-drv535-partial.xml")
    codes = {(c, s) for c, s, _ in found}
    assert ("EVD013", "warn") in codes and ("EVD001", "fail") in codes


def test_nvlink_bridge_all_inactive(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path, "  - gpus: {model: A100 PCIe 40GB, count: 2}\n    gpu_interconnect: {kind: nvlink-bridge}\n"
    )
    found = findings(run_cli, path, "nvlink/2x-a100-pcie-nvlink-s-all-inactive.txt")
    assert [s for c, s, _ in found if c == "EVD005"] == ["fail", "fail"]


def test_a100_allreduce_at_8_gib_is_healthy(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path, "  - gpus: {model: A100 SXM 40GB, count: 8}\n    gpu_interconnect: {kind: nvswitch}\n"
    )
    found = findings(run_cli, path, "nccl-tests/8xa100-sxm4-40gb-allreduce-legacy-format.txt")
    (nccl,) = [(s, m) for c, s, m in found if c == "EVD006"]
    assert nccl[0] == "pass" and "busbw 235.3 GB/s" in nccl[1] and "(78%)" in nccl[1]  # of 300 each way


def test_a100_allreduce_to_128_mib_is_not_conclusive(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path, "  - gpus: {model: A100 SXM 80GB, count: 8}\n    gpu_interconnect: {kind: nvswitch}\n"
    )
    found = findings(run_cli, path, "nccl-tests/8xa100-sxm4-80gb-nccltests-2.19.4-allreduce.txt")
    (nccl,) = [(s, m) for c, s, m in found if c == "EVD006"]
    assert nccl[0] == "warn" and "128 MiB, is too small" in nccl[1]


def test_h200_nvls_exceeds_the_link(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: H200 SXM, count: 8}\n    gpu_interconnect: {kind: nvswitch}\n")
    found = findings(run_cli, path, "nccl-tests/8xh200-azure-ndv5-allreduce-8g-single-size.txt")
    assert [s for c, s, _ in found if c == "EVD006"] == ["pass"]


def test_mislabelled_allreduce_is_flagged(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path,
        "  - count: 2\n    gpus: {model: A100 SXM 80GB, count: 8}\n"
        "    network: [{kind: infiniband, rate: hdr, count: 8}]\n",
    )
    found = findings(run_cli, path, "nccl-tests/2node-16x-a100-labelled-allreduce-but-redop-none-anomaly.txt")
    (nccl,) = [(s, m) for c, s, m in found if c == "EVD006"]
    assert nccl[0] == "warn" and "not" in nccl[1] and "all_reduce" in nccl[1]


def test_dgx_h100_ibstat(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path,
        "  - gpus: {model: H100 SXM, count: 8}\n"
        "    network: [{kind: infiniband, rate: ndr, count: 8, role: compute}]\n",
    )
    found = findings(run_cli, path, "ibstat/h100-node-8x-cx7-400g-plus-bf3-ibstat.txt")
    assert [(s, "8 of 8" in m) for c, s, m in found if c == "EVD008"] == [("pass", True)]


def test_dcgm_persistence_failure(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: H200 SXM, count: 8}\n")
    found = findings(run_cli, path, "dcgmi/8xh200-dcgm318-r1-persistence-fail.txt")
    (diag,) = [(s, m) for c, s, m in found if c == "EVD009"]
    assert diag[0] == "fail" and "Persistence Mode" in diag[1]
    skipped = findings(run_cli, path, "dcgmi/1x-dev2e12-dcgm442-r3-all-skipped.txt")
    assert [s for c, s, _ in skipped if c == "EVD009"] == ["warn"]


def test_fio_against_the_declared_nvme(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path,
        "  - gpus: {model: A100 SXM 40GB}\n"
        "    storage: [{name: nvme0n1, kind: nvme, random_read_iops: 1000000}]\n",
    )
    found = findings(run_cli, path, "fio/nvme0n1-randrw-4k-qd64-fio316.json")
    (fio,) = [(s, m) for c, s, m in found if c == "EVD007"]
    assert fio[0] == "warn" and "85,139 IOPS against 1,000,000 declared (9%)" in fio[1]


def test_toolkit_and_torch_versions(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = rig(
        tmp_path, "  - gpus: {model: RTX 5090}\n    software: {cuda_toolkit: '12.8', torch: '2.9.0+cu128'}\n"
    )
    found = findings(
        run_cli,
        path,
        "nvcc/cuda-13.0.88-rtx5090-wsl.txt",
        "torch/rtx5090-wsl-version-available-capability.txt",
    )
    versions = sorted((s, m) for c, s, m in found if c == "EVD002")
    assert [s for s, _ in versions] == [
        "pass",
        "warn",
    ]  # torch matches; nvcc 13.0.88 is not the declared 12.8
    assert "CUDA toolkit (nvcc) 13.0.88, the spec says 12.8" in versions[1][1]


def test_every_tool_output_is_read_without_error(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Each real file, given as evidence to some rig, gives a report (never exit 2 or a traceback)."""
    path = rig(tmp_path, "  - gpus: {model: H100 SXM, count: 8}\n")
    files = sorted(
        p.relative_to(OUT).as_posix() for p in OUT.rglob("*") if p.is_file() and p.name != "SOURCES.md"
    )
    assert len(files) >= 45
    found = findings(run_cli, path, *files)
    unknown = [m for c, s, m in found if c == "EVD013" and "no parser recognised" in m]
    assert unknown == []


@pytest.mark.parametrize("name", ["nvidia-smi-text/8x-h100-drv550.90.07-default-table.txt"])
def test_default_table_counts_gpus(tmp_path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    path = rig(tmp_path, "  - gpus: {model: H100 SXM, count: 8}\n    software: {driver: '550.90.07'}\n")
    found = findings(run_cli, path, name)
    assert ("EVD001", "pass") in {(c, s) for c, s, _ in found}
