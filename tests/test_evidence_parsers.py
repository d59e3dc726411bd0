"""Evidence parsers against real tool outputs (tests/data/tool-outputs, provenance in its SOURCES.md).

Every file on disk must have an expectation below; the expected values are literals read from the
files and from SOURCES.md, never computed by the parser under test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rigcheck.core.engine.errors import UsageError
from rigcheck.evidence.loader import MAX_BYTES, import_parser, load_evidence, parse_text
from rigcheck.evidence.model import Evidence
from rigcheck.evidence.parsers import BUILTIN_PARSERS

DATA = Path(__file__).parent / "data" / "tool-outputs"
FILES = sorted(
    path.relative_to(DATA).as_posix()
    for path in DATA.rglob("*")
    if path.is_file() and path.name != "SOURCES.md"
)

Check = Callable[[Evidence], None]
EXPECTED: dict[str, tuple[str, Check]] = {}


def expect(relative: str, tool: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        assert relative not in EXPECTED, relative
        EXPECTED[relative] = (tool, check)
        return check

    return register


def load(relative: str) -> Evidence:
    return load_evidence([DATA / relative])[0]


def approx(value: float, rel: float = 1e-9) -> object:
    return pytest.approx(value, rel=rel)


def has_problem(evidence: Evidence, *fragments: str) -> bool:
    return any(all(fragment in problem for fragment in fragments) for problem in evidence.problems)


def bandwidths(evidence: Evidence, kind: str, **match: object) -> list[float]:
    return [
        item.gbps
        for item in evidence.bandwidth
        if item.kind == kind and all(getattr(item, key) == value for key, value in match.items())
    ]


# --- nvidia-smi -q -x ---------------------------------------------------------------------------------------


@expect("nvidia-smi-xml/a100-sxm4-80gb-mig-drv535-partial.xml", "nvidia-smi-xml")
def _a100_mig_partial(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version) == ("535.54.03", "12.2")
    assert ev.gpu_count == 4 and len(ev.gpus) == 1
    assert has_problem(ev, "attached_gpus says 4", "1 <gpu> element")
    gpu = ev.gpus[0]
    assert gpu.name == "NVIDIA A100-SXM4-80GB"
    assert gpu.memory_total_mib == 81920  # the GPU's own fb_memory_usage, not a MIG instance's 19968
    assert (gpu.ecc_current, gpu.ecc_pending, gpu.ecc_uncorrectable_volatile) == (True, True, 0)
    assert gpu.mig_enabled is True
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max, gpu.pcie_gen_host_max) == (
        4,
        4,
        4,
        4,
    )
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (16, 16)
    assert (gpu.power_limit_w, gpu.power_default_w, gpu.power_max_w) == (500, 500, 500)
    assert gpu.power_draw_w == approx(67.03)
    assert gpu.vbios == "92.00.36.00.02"
    assert gpu.bus_id == "00000000:01:00.0"
    assert gpu.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert gpu.serial == "1650522003820"
    assert gpu.pci_device_id == "20B210DE"
    assert gpu.persistence_mode is False
    assert gpu.architecture == "Ampere"
    assert ev.extra["dtd_version"] == "v12"
    mig = ev.extra["mig_devices"]["00000000:01:00.0"]
    assert [(m["multiprocessor_count"], m["memory_total_mib"]) for m in mig] == [(14, 19968)] * 4


@expect("nvidia-smi-xml/rtx4090-drv535.xml", "nvidia-smi-xml")
def _rtx4090(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version, ev.gpu_count) == ("535.86.05", "12.2", 1)
    gpu = ev.gpus[0]
    assert gpu.name == "NVIDIA GeForce RTX 4090"
    assert gpu.memory_total_mib == 24564
    assert (gpu.ecc_current, gpu.ecc_pending) == (False, False)  # Disabled, not N/A
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max, gpu.pcie_gen_host_max) == (
        1,
        3,
        4,
        3,
    )
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (16, 16)
    assert (gpu.power_limit_w, gpu.power_default_w, gpu.power_max_w) == (450, 450, 600)
    assert gpu.power_draw_w == approx(26.84)
    assert gpu.architecture == "Ada Lovelace"
    assert (gpu.remapped_rows_pending, gpu.remapped_rows_failure) == (False, False)
    assert gpu.pcie_replay_counter == 0
    assert ev.problems == []


@expect("nvidia-smi-xml/rtx2080-windows-drv516.xml", "nvidia-smi-xml")
def _rtx2080_windows(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version) == ("516.59", "11.7")
    gpu = ev.gpus[0]
    assert gpu.name == "NVIDIA GeForce RTX 2080"
    assert gpu.driver_model == "WDDM"
    assert gpu.memory_total_mib == 8192
    assert gpu.ecc_current is None
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (3, 3)
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (8, 16)
    assert (gpu.power_limit_w, gpu.power_max_w) == (275, 350)
    assert gpu.persistence_mode is None  # N/A on Windows
    assert ev.extra["dtd_version"] == "v11"


@expect("nvidia-smi-xml/rtx3090-drv525.xml", "nvidia-smi-xml")
def _rtx3090_old_power_tags(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version) == ("525.147.05", "12.0")
    assert ev.extra["dtd_version"] == "v12"
    gpu = ev.gpus[0]
    assert gpu.name == "NVIDIA GeForce RTX 3090"
    assert gpu.memory_total_mib == 24576
    assert gpu.ecc_current is None
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max, gpu.pcie_gen_host_max) == (
        1,
        4,
        4,
        None,
    )
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (16, 16)
    assert (gpu.power_limit_w, gpu.power_default_w, gpu.power_max_w) == (200, 350, 375)  # capped
    assert gpu.power_draw_w == approx(27.23)
    assert gpu.pci_device_id is None  # "[REDACTED]" in the file


@expect("nvidia-smi-xml/2x-rtx-a5000-drv590-dtd-v13.xml", "nvidia-smi-xml")
def _a5000_v13(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version, ev.gpu_count) == ("590.44.01", "13.1", 2)
    assert ev.extra["dtd_version"] == "v13"
    assert [gpu.bus_id for gpu in ev.gpus] == ["00000000:81:00.0", "00000000:C1:00.0"]
    for gpu in ev.gpus:
        assert gpu.name == "NVIDIA RTX A5000"
        assert gpu.memory_total_mib == 24564
        assert (gpu.ecc_current, gpu.ecc_pending) == (False, False)
        assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (1, 4)
        assert (gpu.pcie_width_current, gpu.pcie_width_max) == (16, 16)
        assert (gpu.power_limit_w, gpu.power_default_w, gpu.power_max_w) == (230, 230, 230)
        assert (gpu.remapped_rows_pending, gpu.remapped_rows_failure) == (False, False)
    assert [gpu.power_draw_w for gpu in ev.gpus] == [approx(6.41), approx(13.60)]  # average_power_draw


@expect("nvidia-smi-xml/tesla-t4-drv515.xml", "nvidia-smi-xml")
def _t4(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version) == ("515.105.01", "11.7")
    gpu = ev.gpus[0]
    assert gpu.name == "Tesla T4"
    assert gpu.memory_total_mib == 15360
    assert (gpu.ecc_current, gpu.ecc_uncorrectable_volatile) == (True, 0)
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (3, 3)
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (8, 16)
    assert (gpu.power_limit_w, gpu.power_max_w) == (70, 70)
    assert gpu.bus_id == "00000000:00:1E.0"


@expect("nvidia-smi-xml/gtx1660ti-drv418-no-doctype.xml", "nvidia-smi-xml")
def _gtx1660ti_no_doctype(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version) == ("418.43", "10.1")
    assert ev.extra["dtd_version"] is None
    gpu = ev.gpus[0]
    assert gpu.name == "Graphics Device"
    assert gpu.memory_total_mib == 5912
    assert (gpu.power_limit_w, gpu.power_max_w) == (130, 130)
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_host_max) == (1, 3, None)
    assert gpu.architecture is None
    assert ev.problems == []


# --- nvidia-smi -q and the default table --------------------------------------------------------------------


@expect("nvidia-smi-text/rtx4070-laptop-wsl-drv566-q.txt", "nvidia-smi-query")
def _rtx4070_q(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version, ev.gpu_count) == ("566.36", "12.7", 1)
    gpu = ev.gpus[0]
    assert gpu.name == "NVIDIA GeForce RTX 4070 Laptop GPU"
    assert gpu.driver_model == "WDDM"
    assert gpu.memory_total_mib == 8188  # FB Memory Usage > Total, not BAR1's 8192
    pcie = (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max, gpu.pcie_gen_host_max)
    assert pcie == (4, 4, 4, 4)
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (8, 8)
    assert (gpu.power_limit_w, gpu.power_default_w, gpu.power_max_w) == (approx(61.24), 55, 140)
    assert gpu.power_draw_w == approx(1.97)
    assert (gpu.persistence_mode, gpu.ecc_current, gpu.mig_enabled) == (True, None, None)
    assert gpu.pcie_replay_counter == 0
    assert (gpu.remapped_rows_pending, gpu.remapped_rows_failure) == (False, False)
    assert gpu.pci_device_id == "286010DE"
    assert gpu.vbios == "95.06.32.00.38"
    assert gpu.bus_id == "00000000:01:00.0"
    assert ev.problems == []


def _table(
    ev: Evidence, driver: str, cuda: str | None, count: int, name: str, mib: float, cap: float
) -> None:
    assert (ev.driver_version, ev.cuda_version, ev.gpu_count, len(ev.gpus)) == (driver, cuda, count, count)
    assert [gpu.index for gpu in ev.gpus] == list(range(count))
    for gpu in ev.gpus:
        assert (gpu.name, gpu.memory_total_mib, gpu.power_limit_w) == (name, mib, cap)


@expect("nvidia-smi-text/2x-a100-pcie-40gb-drv555-default-table.txt", "nvidia-smi-table")
def _table_2x_a100(ev: Evidence) -> None:
    _table(ev, "555.42.02", "12.5", 2, "NVIDIA A100-PCIE-40GB", 40960, 250)
    assert [gpu.bus_id for gpu in ev.gpus] == ["00000000:12:00.0", "00000000:8A:00.0"]
    assert [gpu.power_draw_w for gpu in ev.gpus] == [32, 37]
    assert {(gpu.persistence_mode, gpu.ecc_uncorrectable_volatile, gpu.mig_enabled) for gpu in ev.gpus} == {
        (False, 0, False)
    }
    assert ev.extra["layout"] == "new"
    assert ev.problems == []


@expect("nvidia-smi-text/1x-a100-80gb-pcie-drv535-default-table.txt", "nvidia-smi-table")
def _table_a100_80gb_pcie(ev: Evidence) -> None:
    _table(ev, "535.183.01", "12.2", 1, "NVIDIA A100 80GB PCIe", 81920, 300)
    assert (ev.gpus[0].ecc_uncorrectable_volatile, ev.gpus[0].mig_enabled) == (0, False)


@expect("nvidia-smi-text/2x-h100-pcie-nvlink-bridge-drv555-default-table.txt", "nvidia-smi-table")
def _table_2x_h100(ev: Evidence) -> None:
    _table(ev, "555.42.02", "12.5", 2, "NVIDIA H100 PCIe", 81559, 350)
    assert [gpu.bus_id for gpu in ev.gpus] == ["00000000:C2:00.0", "00000000:D5:00.0"]


@expect("nvidia-smi-text/8x-h100-drv550.90.07-default-table.txt", "nvidia-smi-table")
def _table_8x_h100(ev: Evidence) -> None:
    _table(ev, "550.90.07", "12.4", 8, "NVIDIA H100 80GB HBM3", 81559, 700)
    assert {(gpu.persistence_mode, gpu.mig_enabled) for gpu in ev.gpus} == {(True, False)}
    assert ev.gpus[7].bus_id == "00000000:DB:00.0"


@expect("nvidia-smi-text/geforce-drv525-default-table-fan-err.txt", "nvidia-smi-table")
def _table_fan_err(ev: Evidence) -> None:
    _table(ev, "525.125.06", "12.0", 1, "NVIDIA GeForce ...", 23028, 450)
    assert has_problem(ev, "ERR!", "fan")
    assert ev.gpus[0].power_draw_w == 49
    assert ev.gpus[0].mig_enabled is None  # N/A
    assert ev.extra["compute_mode"] == {"0": "E. Process"}
    assert ev.extra["names_truncated"] is True
    assert ev.extra["layout"] == "old"


@expect("nvidia-smi-text/8x-h200-azure-ndv5-drv550-default-table.txt", "nvidia-smi-table")
def _table_8x_h200(ev: Evidence) -> None:
    _table(ev, "550.127.08", "12.4", 8, "NVIDIA H200", 143771, 700)
    assert [gpu.bus_id for gpu in ev.gpus] == [
        "00000001:00:00.0",
        "00000002:00:00.0",
        "00000003:00:00.0",
        "00000008:00:00.0",
        "00000009:00:00.0",
        "0000000A:00:00.0",
        "0000000B:00:00.0",
        "0000000C:00:00.0",
    ]
    assert {gpu.persistence_mode for gpu in ev.gpus} == {False}


@expect("nvidia-smi-text/8x-v100-sxm2-azure-nd40rsv2-drv520-table.txt", "nvidia-smi-table")
def _table_8x_v100(ev: Evidence) -> None:
    _table(ev, "520.61.05", "11.8", 8, "Tesla V100-SXM2...", 32768, 300)
    assert {gpu.persistence_mode for gpu in ev.gpus} == {True}
    assert ev.gpus[0].processes is not None
    assert [(p["pid"], p["type"], p["name"], p["used_memory_mib"]) for p in ev.gpus[0].processes] == [
        (1396, "G", "/usr/lib/xorg/Xorg", 427),
        (1762, "G", "/usr/bin/gnome-shell", 16),
    ]
    assert ev.extra["names_truncated"] is True


@expect("nvidia-smi-text/4x-k80-drv375-default-table.txt", "nvidia-smi-table")
def _table_4x_k80(ev: Evidence) -> None:
    _table(ev, "375.66", None, 4, "Tesla K80", 11439, 149)  # 2017: no CUDA Version field
    assert [gpu.bus_id for gpu in ev.gpus] == ["0000:00:04.0", "0000:00:05.0", "0000:00:06.0", "0000:00:07.0"]
    assert [gpu.power_draw_w for gpu in ev.gpus] == [26, 30, 26, 30]
    assert {gpu.persistence_mode for gpu in ev.gpus} == {True}
    assert ev.gpus[0].processes == [
        {"pid": 1959, "type": "G", "name": "/usr/lib/xorg/Xorg", "used_memory_mib": 15}
    ]


# --- nvidia-smi --query-gpu CSV ------------------------------------------------------------------------------


@expect("nvidia-smi-csv/2x-a100-pcie-40gb-query-gpu.csv", "nvidia-smi-csv")
def _csv_a100(ev: Evidence) -> None:
    assert ev.gpu_count == 2
    assert [(gpu.index, gpu.name, gpu.bus_id) for gpu in ev.gpus] == [
        (0, "NVIDIA A100-PCIE-40GB", "00000000:12:00.0"),
        (1, "NVIDIA A100-PCIE-40GB", "00000000:8A:00.0"),
    ]
    assert {(gpu.vbios, gpu.memory_total_mib) for gpu in ev.gpus} == {("92.00.25.00.08", 40960)}
    values = ev.extra["values"]["00000000:12:00.0"]
    assert values["clocks.applications.graphics"] == "765 MHz"
    assert values["clocks.applications.memory"] == "1215 MHz"
    assert values["temperature.gpu"] == "39"
    assert ev.extra["values"]["00000000:8A:00.0"]["temperature.gpu"] == "37"
    assert ev.problems == []


@expect("nvidia-smi-csv/pkb-power-draw-timeseries.csv", "nvidia-smi-csv")
def _csv_power_series(ev: Evidence) -> None:
    assert ev.gpu_count == 1 and ev.gpus[0].index == 0
    assert ev.extra["samples"] == 91
    series = ev.extra["series"]["0"]["power.draw"]
    assert len(series) == 91
    assert (series[0], max(series), series[-1]) == (approx(16.48), approx(73.24), approx(70.01))
    assert ev.gpus[0].power_draw_w == approx(70.01)  # the last sample
    assert ev.extra["values"]["0"]["timestamp"] == "2022/09/28 15:36:51.68"  # the same on every row


# --- nvidia-smi topo -----------------------------------------------------------------------------------------


def _all_gpu_pairs(ev: Evidence, value: str) -> None:
    assert ev.topology is not None
    gpus = [device for device in ev.topology.devices if device.startswith("GPU")]
    for row in gpus:
        for column in gpus:
            assert ev.topology.matrix[row][column] == ("X" if row == column else value), (row, column)


@expect("topo/8x-a100-sxm4-nv12-17nic.txt", "nvidia-smi-topo")
def _topo_a100(ev: Evidence) -> None:
    topo = ev.topology
    assert topo is not None and topo.kind == "connection"
    assert ev.gpu_count == 8
    assert topo.devices[8:] == [f"NIC{i}" for i in range(17)]
    _all_gpu_pairs(ev, "NV12")
    assert [topo.matrix["GPU0"][f"NIC{i}"] for i in range(5)] == ["PXB", "PXB", "PXB", "PXB", "SYS"]
    assert topo.matrix["GPU2"]["NIC4"] == "PXB"
    assert topo.matrix["NIC0"]["NIC1"] == "PIX"
    assert topo.matrix["NIC16"]["NIC16"] == "X"
    assert set(topo.cpu_affinity.values()) == {"0-103"} and len(topo.cpu_affinity) == 8
    assert set(topo.numa.values()) == {"0"}
    assert ev.extra["gpu_numa_id"]["GPU0"] == "N/A"
    assert topo.nic_legend["NIC0"] == "mlx5_2"
    assert topo.nic_legend["NIC16"] == "mlx5_bond_0"
    assert ev.problems == []


@expect("topo/4x-a10-pcie-sys-2nic.txt", "nvidia-smi-topo")
def _topo_a10(ev: Evidence) -> None:
    topo = ev.topology
    assert topo is not None
    assert topo.devices == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1"]
    _all_gpu_pairs(ev, "SYS")
    assert topo.numa == {"GPU0": "0", "GPU1": "0", "GPU2": "0", "GPU3": "0"}
    assert set(topo.cpu_affinity.values()) == {"0-127"}
    assert topo.matrix["NIC0"]["NIC1"] == "PIX"
    assert topo.nic_legend == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert ev.problems == []


@expect("topo/2x-gtx1080ti-desktop-phb.txt", "nvidia-smi-topo")
def _topo_1080ti(ev: Evidence) -> None:
    assert ev.topology is not None
    _all_gpu_pairs(ev, "PHB")
    assert ev.topology.numa == {"GPU0": "N/A", "GPU1": "N/A"}
    assert ev.topology.cpu_affinity == {"GPU0": "0-11", "GPU1": "0-11"}
    assert "gpu_numa_id" not in ev.extra  # the older format has no GPU NUMA ID column


@expect("topo/2x-rtx2080ti-p2p-p-ns.txt", "nvidia-smi-topo")
def _topo_p2p_ns(ev: Evidence) -> None:
    assert ev.topology is not None and ev.topology.kind == "p2p"
    _all_gpu_pairs(ev, "NS")


@expect("topo/2x-rtx5090-p2p-rw-gns.txt", "nvidia-smi-topo")
def _topo_p2p_gns(ev: Evidence) -> None:
    assert ev.topology is not None and ev.topology.kind == "p2p"
    _all_gpu_pairs(ev, "GNS")


@expect("topo/8x-rtx4090-pcie-all-sys-2nic.txt", "nvidia-smi-topo")
def _topo_4090(ev: Evidence) -> None:
    topo = ev.topology
    assert topo is not None and ev.gpu_count == 8
    _all_gpu_pairs(ev, "SYS")
    assert [topo.numa[f"GPU{i}"] for i in range(8)] == ["0"] * 4 + ["1"] * 4
    assert topo.cpu_affinity["GPU0"] == "0-55,112-167" and topo.cpu_affinity["GPU7"] == "56-111,168-223"
    phb = sorted(
        (row, column) for row, cells in topo.matrix.items() for column, v in cells.items() if v == "PHB"
    )
    assert phb == [("GPU6", "NIC0"), ("GPU6", "NIC1"), ("NIC0", "GPU6"), ("NIC1", "GPU6")]
    assert has_problem(ev, "NIC Legend")  # none was pasted


@expect("topo/dgx-h100-nv18-12nic-partial-mangled-tabs.txt", "nvidia-smi-topo")
def _topo_mangled(ev: Evidence) -> None:
    topo = ev.topology
    assert topo is not None and ev.gpu_count == 8
    assert topo.devices[8:] == [f"NIC{i}" for i in range(12)]  # NIC8NIC9 split back
    _all_gpu_pairs(ev, "NV18")
    assert [topo.matrix["GPU4"][f"NIC{i}"] for i in range(6, 12)] == [
        "PXB",
        "NODE",
        "NODE",
        "NODE",
        "NODE",
        "NODE",
    ]
    assert [topo.matrix["GPU5"][f"NIC{i}"] for i in (8, 9)] == ["NODE", "PXB"]
    assert [topo.matrix["GPU7"][f"NIC{i}"] for i in (8, 9, 11)] == ["NODE", "NODE", "PXB"]
    assert topo.matrix["GPU0"]["NIC0"] == "PXB"
    assert topo.numa["GPU3"] == "0" and topo.numa["GPU4"] == "1"
    assert has_problem(ev, "'NIC8NIC9'")
    assert has_problem(ev, "row GPU4", "'NODENODE'")
    assert has_problem(ev, "row GPU5", "'NODEPXB'")
    assert has_problem(ev, "no rows for NIC0")  # the paste was cut before the NIC rows


# --- nvidia-smi nvlink -s ------------------------------------------------------------------------------------


@expect("nvlink/8x-a100-nvlink-status.txt", "nvidia-smi-nvlink")
def _nvlink_a100(ev: Evidence) -> None:
    assert ev.gpu_count == 8
    for index, gpu in enumerate(ev.gpus):
        assert (gpu.index, gpu.name) == (index, "NVIDIA A100-SXM4-80GB")
        assert gpu.nvlinks is not None
        assert [(link.link, link.active, link.speed_gbps) for link in gpu.nvlinks] == [
            (i, True, 25.0) for i in range(12)
        ]
    assert ev.gpus[0].uuid == "GPU-5269b708-678a-b1a8-60f0-c90406537486"


@expect("nvlink/2x-a100-pcie-nvlink-s-all-inactive.txt", "nvidia-smi-nvlink")
def _nvlink_inactive(ev: Evidence) -> None:
    assert [(gpu.name, gpu.nvlinks) for gpu in ev.gpus] == [("NVIDIA A100-PCIE-40GB", [])] * 2
    assert ev.extra["all_links_inactive"] == [0, 1]
    assert ev.problems == []


# --- nccl-tests ----------------------------------------------------------------------------------------------


@expect("nccl-tests/8xa100-sxm4-80gb-nccltests-2.19.4-allreduce.txt", "nccl-tests")
def _nccl_2194(ev: Evidence) -> None:
    (run,) = ev.nccl
    assert (run.operation, run.tests_version, run.nccl_version) == ("all_reduce", "2.19.4", "2.19.3")
    assert (run.ranks, run.gpus_per_process, run.hosts) == (8, 8, ["dkh"])
    assert run.devices == ["NVIDIA A100-SXM4-80GB"] * 8
    assert len(run.rows) == 25
    assert run.largest_size_bytes == 134217728
    assert run.busbw_at_largest_gbps == approx(182.90)  # in-place; out-of-place is 181.32
    assert (run.rows[-1].busbw_gbps, run.rows[-1].in_place_busbw_gbps) == (approx(181.32), approx(182.90))
    assert run.avg_busbw_gbps == approx(34.9024)
    assert (run.out_of_bounds, run.anomalies) == (0, [])
    assert run.rows[0].wrong == 0


@expect("nccl-tests/8xa100-sxm4-40gb-allreduce-legacy-format.txt", "nccl-tests")
def _nccl_legacy(ev: Evidence) -> None:
    (run,) = ev.nccl
    assert (run.operation, run.ranks, run.hosts) == ("all_reduce", 8, ["localhost"])
    assert run.devices == ["A100-SXM4-40GB"] * 8
    assert len(run.rows) == 34  # incl. two size-0 rows; the NCCL INFO line is not a row
    assert run.rows[0].size_bytes == 0 and run.rows[0].wrong is None  # "N/A" in the error column
    assert run.largest_size_bytes == 8589934592
    assert run.busbw_at_largest_gbps == approx(235.26)
    assert run.rows[-1].time_us == approx(63896)
    assert run.avg_busbw_gbps == approx(68.4048)
    assert run.anomalies == []


@expect("nccl-tests/8xh200-azure-ndv5-allreduce-8g-single-size.txt", "nccl-tests")
def _nccl_h200(ev: Evidence) -> None:
    (run,) = ev.nccl
    assert (run.operation, run.ranks, run.gpus_per_process, run.nccl_version) == (
        "all_reduce",
        8,
        1,
        "2.19.3",
    )
    assert len(run.rows) == 1 and run.largest_size_bytes == 8589934592
    assert run.rows[0].busbw_gbps == approx(476.96)
    assert run.busbw_at_largest_gbps == approx(476.98)  # the in-place figure is the larger
    assert run.avg_busbw_gbps == approx(476.967)
    assert run.hosts == ["test-h200-deb"] and run.devices == ["NVIDIA H200"] * 8
    assert run.anomalies == []


@expect("nccl-tests/2node-16x-a100-labelled-allreduce-but-redop-none-anomaly.txt", "nccl-tests")
def _nccl_anomaly(ev: Evidence) -> None:
    (run,) = ev.nccl
    assert (run.ranks, run.gpus_per_process, run.hosts) == (16, 8, ["a100-44", "a100-43"])
    assert len(run.rows) == 9  # incl. the first row, which lost its leading spaces
    assert run.rows[0].size_bytes == 33554432
    assert run.largest_size_bytes == 8589934592
    assert run.busbw_at_largest_gbps == approx(38.01)
    assert run.avg_busbw_gbps == approx(35.7955)
    assert run.operation != "all_reduce"
    assert any("busbw/algbw = 15/16 = (n-1)/n: this is not an all_reduce table" in a for a in run.anomalies)
    assert any("redop is `none`" in a for a in run.anomalies)


@expect("nccl-tests/2node-1gpu-k80-gcp-allreduce.txt", "nccl-tests")
def _nccl_k80(ev: Evidence) -> None:
    (run,) = ev.nccl
    assert (run.operation, run.ranks, run.gpus_per_process) == ("all_reduce", 2, 1)
    assert run.hosts == ["pkb-2b6a393d-2", "pkb-2b6a393d-3"]
    assert len(run.rows) == 11 and run.largest_size_bytes == 1073741824
    assert run.busbw_at_largest_gbps == approx(0.61)
    assert run.avg_busbw_gbps == approx(0.565546)
    assert {row.wrong for row in run.rows} == {None}  # "#wrong" is N/A
    assert run.anomalies == []


# --- fio -----------------------------------------------------------------------------------------------------


@expect("fio/nvme0n1-randrw-4k-qd64-fio316.json", "fio")
def _fio_nvme(ev: Evidence) -> None:
    assert ev.tool_version == "3.16"
    (job,) = ev.storage
    assert (job.name, job.rw, job.block_size, job.iodepth, job.numjobs) == (
        "rand_read_write",
        "randrw",
        "4096",
        64,
        4,
    )
    assert job.filename == "/dev/nvme0n1"
    assert job.read_iops == approx(85138.890741)
    assert job.read_bw_bytes_per_s == 348743777  # bw_bytes, not 340570 KiB/s x 1024
    assert job.write_iops == approx(85066.128925)
    assert job.write_bw_bytes_per_s == 348450387
    assert job.device_util_pct == approx(99.840351)
    assert ev.extra["disk_util"] == {"nvme0n1": approx(99.840351)}
    assert ev.problems == []


@expect("fio/gce-pd-randread-16k-qd1-fio217.json", "fio")
def _fio_gce(ev: Evidence) -> None:
    assert ev.tool_version == "2.17"
    read, write = ev.storage
    assert (read.rw, read.block_size, read.iodepth, read.numjobs) == ("randread", "16k", 1, 2)
    assert read.read_iops == approx(8086.673998)
    assert read.read_bw_bytes_per_s == 129386 * 1024  # fio 2.x: bw in KiB/s only
    assert (read.write_iops, read.write_bw_bytes_per_s) == (None, None)
    assert write.rw == "randwrite"
    assert write.write_iops == approx(2457.017193)
    assert write.write_bw_bytes_per_s == 39312 * 1024
    assert read.filename == "/dev/disk/by-id/google-pkb-7fb0c9d8-0-data-0-0"
    assert has_problem(ev, "duplicate keys", '"filename"')
    assert read.device_util_pct is None  # no disk_util section


@expect("fio/pkb-multijob-fio214.json", "fio")
def _fio_multijob(ev: Evidence) -> None:
    assert ev.tool_version == "2.1.4"
    assert [job.name for job in ev.storage] == [
        "sequential_write",
        "sequential_read",
        "random_write_test",
        "random_read_test",
        "random_read_test_parallel",
    ]
    by_name = {job.name: job for job in ev.storage}
    assert by_name["sequential_read"].read_bw_bytes_per_s == 129836 * 1024
    assert by_name["sequential_write"].write_iops == 133
    assert by_name["random_read_test"].read_iops == 317
    assert by_name["random_write_test"].write_iops == 1610
    assert [job.device_util_pct for job in ev.storage] == [approx(97.54)] * 5
    assert ev.extra["disk_util"] == {"sdb": approx(97.54)}


# --- bandwidthTest / p2pBandwidthLatencyTest -----------------------------------------------------------------


@expect("bandwidth/2x-h100-pcie-nvlink-p2pBandwidthLatencyTest.txt", "p2pBandwidthLatencyTest")
def _p2p_h100(ev: Evidence) -> None:
    assert [gpu.name for gpu in ev.gpus] == ["NVIDIA H100 PCIe"] * 2
    assert [gpu.bus_id for gpu in ev.gpus] == ["00000000:C2:00.0", "00000000:D5:00.0"]
    assert bandwidths(ev, "p2p", p2p_enabled=True) == [256.62, 256.99]
    assert bandwidths(ev, "p2p_bidir", p2p_enabled=True) == [509.35, 509.15]
    assert bandwidths(ev, "p2p", p2p_enabled=False) == [26.10, 25.00]
    assert bandwidths(ev, "p2p_bidir", p2p_enabled=False) == [35.17, 35.23]
    assert bandwidths(ev, "d2d") == [1622.17, 1634.15]
    assert bandwidths(ev, "p2p", p2p_enabled=True, src="GPU1", dst="GPU0") == [256.99]
    assert ev.extra["peer_access"] == [
        {"src": 0, "dst": 1, "can_access": True},
        {"src": 1, "dst": 0, "can_access": True},
    ]
    assert ev.extra["p2p_connectivity"] == [[1, 1], [1, 1]]
    assert ev.extra["latency_us"]["enabled:gpu"] == [[2.35, 2.56], [2.52, 2.31]]
    assert ev.problems == []


@expect("bandwidth/2x-rtx2080ti-p2pBandwidthLatencyTest.txt", "p2pBandwidthLatencyTest")
def _p2p_2080ti(ev: Evidence) -> None:
    assert ev.extra["peer_access"] == [
        {"src": 0, "dst": 1, "can_access": False},
        {"src": 1, "dst": 0, "can_access": False},
    ]
    assert bandwidths(ev, "p2p", p2p_enabled=False) == [5.71, 5.70]
    assert bandwidths(ev, "p2p", p2p_enabled=True) == [5.72, 5.72]
    assert bandwidths(ev, "p2p_bidir", p2p_enabled=False) == [6.12, 6.10]
    assert bandwidths(ev, "p2p_bidir", p2p_enabled=True) == [6.10, 6.10]
    assert ev.extra["p2p_connectivity"] == [[1, 0], [0, 1]]


@expect("bandwidth/k80-bandwidthtest-range-cumulative.txt", "bandwidthTest")
def _bandwidth_k80_range(ev: Evidence) -> None:
    assert [gpu.name for gpu in ev.gpus] == ["Tesla K80"]
    # Bandwidth(MB/s) in the header: 7755.5 MB/s is 7.7555 GB/s.
    assert bandwidths(ev, "h2d") == [approx(7.7555), approx(7.6875), approx(8.7471)]
    assert bandwidths(ev, "d2h") == [approx(10.5710), approx(10.5295), approx(10.4558)]
    assert bandwidths(ev, "d2d") == [approx(157.0510), approx(157.6764), approx(157.8459)]
    assert [item.size_bytes for item in ev.bandwidth[:3]] == [67108864, 134217728, 201326592]
    assert {item.pinned for item in ev.bandwidth} == {True}
    assert (ev.extra["mode"], ev.extra["result"]) == ("range", "PASS")


@expect("bandwidth/v100-pcie-32gb-bandwidthtest-h2d-shmoo-csv.txt", "bandwidthTest")
def _bandwidth_v100_csv(ev: Evidence) -> None:
    assert [gpu.name for gpu in ev.gpus] == ["Tesla V100-PCIE-32GB"]
    assert len(ev.bandwidth) == 81
    assert {item.kind for item in ev.bandwidth} == {"h2d"}
    assert max(item.gbps for item in ev.bandwidth) == approx(12.4)
    assert (ev.bandwidth[0].gbps, ev.bandwidth[0].size_bytes) == (approx(0.4), 1000)
    assert (ev.bandwidth[-1].gbps, ev.bandwidth[-1].size_bytes) == (approx(12.4), 68000000)
    assert ev.extra["mode"] == "shmoo"


# --- dcgmi diag ----------------------------------------------------------------------------------------------


@expect("dcgmi/8xh200-dcgm318-r1-persistence-fail.txt", "dcgmi-diag")
def _dcgm_3x(ev: Evidence) -> None:
    assert (ev.diag_version, ev.driver_version) == ("3.1.8", "550.127.08")
    assert ev.extra["gpu_device_ids"] == ["2335"] * 8
    assert [(item.test, item.result) for item in ev.diag] == [
        ("Denylist", "pass"),
        ("NVML Library", "pass"),
        ("CUDA Main Library", "pass"),
        ("Permissions and OS Blocks", "pass"),
        ("Persistence Mode", "fail"),
        ("Environment Variables", "pass"),
        ("Page Retirement/Row Remap", "pass"),
        ("Graphics Processes", "pass"),
        ("Inforom", "pass"),
    ]
    detail = ev.diag[4].detail or ""
    assert detail.startswith(
        "Persistence mode for GPU 0 is currently disabled. The DCGM diagnostic requires peristence mode to be "
        'enabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root., Persistence mode '
        "for GPU 1 is currently disabled."
    )
    assert "peristence mode to be enabled" in detail  # words cut across rows are joined back
    assert "Persistence mode for GPU 5 is currently disabled" in detail
    assert detail.endswith("requires peristence mod")  # dcgmi itself cut the text


@expect("dcgmi/1x-dev2e12-dcgm442-r3-all-skipped.txt", "dcgmi-diag")
def _dcgm_4x(ev: Evidence) -> None:
    assert (ev.diag_version, ev.driver_version) == ("4.4.2", "580.95.05")
    assert ev.extra["gpu_device_ids"] == ["2e12"]
    assert [(item.test, item.result, item.gpu) for item in ev.diag] == [
        ("software", "pass", 0),
        ("memory", "skip", 0),
        ("diagnostic", "skip", 0),
        ("nvbandwidth", "skip", 0),
        ("pcie", "skip", 0),
        ("memory_bandwidth", "skip", 0),
        ("targeted_stress", "skip", 0),
        ("targeted_power", "skip", 0),
    ]


# --- ibstat / ibv_devinfo ------------------------------------------------------------------------------------


@expect("ibstat/h100-node-8x-cx7-400g-plus-bf3-ibstat.txt", "ibstat")
def _ibstat_h100(ev: Evidence) -> None:
    assert [port.ca for port in ev.ib_ports] == [
        "mlx5_0",
        "mlx5_1",
        "mlx5_4",
        "mlx5_5",
        "mlx5_6",
        "mlx5_7",
        "mlx5_8",
        "mlx5_9",
        "mlx5_bond_0",
    ]
    cx7 = {(p.ca_type, p.firmware, p.rate_gbps, p.link_layer, p.port) for p in ev.ib_ports[:8]}
    assert cx7 == {("MT4129", "28.41.1000", 400.0, "InfiniBand", 1)}
    bf3 = ev.ib_ports[8]
    assert (bf3.ca_type, bf3.firmware, bf3.rate_gbps, bf3.link_layer) == (
        "MT41692",
        "32.38.3056",
        200.0,
        "Ethernet",
    )
    assert {(p.state, p.physical_state, p.active) for p in ev.ib_ports} == {("Active", "LinkUp", True)}


@expect("ibstat/a100-node-9x-200g-ibstat.txt", "ibstat")
def _ibstat_a100(ev: Evidence) -> None:
    assert [port.ca for port in ev.ib_ports] == [f"mlx5_{i}" for i in range(9)]
    assert {(p.ca_type, p.rate_gbps, p.state) for p in ev.ib_ports} == {("MT4126", 200.0, "Active")}
    assert [p.link_layer for p in ev.ib_ports] == ["Ethernet"] + ["InfiniBand"] * 8
    assert ev.ib_ports[0].firmware == "22.35.2302" and ev.ib_ports[1].firmware == "28.37.1014"


@expect("ibstat/azure-nd40rsv2-ibv_devinfo.txt", "ibv_devinfo")
def _ibv_devinfo(ev: Evidence) -> None:
    assert [(p.ca, p.port, p.ca_type, p.firmware, p.state, p.link_layer) for p in ev.ib_ports] == [
        ("mlx5_0", 1, "4120", "16.28.4000", "PORT_ACTIVE", "InfiniBand"),
        ("rdmaP36305p0s2", 1, "4100", "2.43.7008", "PORT_ACTIVE", "Ethernet"),
    ]
    assert all(port.active for port in ev.ib_ports)
    assert ev.extra["active_mtu"] == {"mlx5_0:1": "4096", "rdmaP36305p0s2:1": "1024"}


# --- nvcc ----------------------------------------------------------------------------------------------------


@expect("nvcc/cuda-13.0.88-rtx5090-wsl.txt", "nvcc")
def _nvcc_13(ev: Evidence) -> None:
    assert ev.toolkit_version == "13.0.88"
    assert ev.extra["build"] == "cuda_13.0.r13.0/compiler.36424714_0"


@expect("nvcc/cuda-11.1.105.txt", "nvcc")
def _nvcc_11(ev: Evidence) -> None:
    assert ev.toolkit_version == "11.1.105"
    assert ev.extra["build"] == "cuda_11.1.TC455_06.29190527_0"


@expect("nvcc/cuda-10.1.243-no-build-line.txt", "nvcc")
def _nvcc_10(ev: Evidence) -> None:
    assert ev.toolkit_version == "10.1.243"
    assert "build" not in ev.extra and ev.problems == []


@expect("nvcc/cuda-9.1.85-vs-driver-cuda-10.1.txt", "nvcc")
def _nvcc_9(ev: Evidence) -> None:
    assert ev.toolkit_version == "9.1.85"


# --- torch ---------------------------------------------------------------------------------------------------


@expect("torch/h100-collect_env-2.9.1-cu126-partial.txt", "torch-collect-env")
def _torch_h100(ev: Evidence) -> None:
    torch = ev.torch
    assert torch is not None
    assert (torch.version, torch.cuda, torch.cuda_available) == ("2.9.1+cu126", "12.6", True)
    assert (torch.cuda_runtime, torch.driver_version) == ("12.6.85", "580.126.09")
    assert torch.gpus == ["NVIDIA H100 80GB HBM3"]
    assert ev.driver_version == "580.126.09"
    assert ev.os == "Ubuntu 22.04.5 LTS (x86_64)"
    assert has_problem(ev, "Versions of relevant libraries")  # cut before the CPU section


@expect("torch/aws-8x-a100-40gb-collect_env-2.4.1-cu121-partial.txt", "torch-collect-env")
def _torch_aws(ev: Evidence) -> None:
    torch = ev.torch
    assert torch is not None
    assert (torch.version, torch.cuda, torch.cuda_available) == ("2.4.1+cu121", "12.1", True)
    assert torch.cuda_runtime is None  # "Could not collect"
    assert torch.gpus == ["NVIDIA A100-SXM4-40GB"] * 6  # cut after GPU 5
    assert torch.driver_version is None
    assert has_problem(ev, "Nvidia driver version")
    assert has_problem(ev, "Could not collect")


@expect("torch/rtx5090-wsl-version-available-capability.txt", "torch-version")
def _torch_version(ev: Evidence) -> None:
    torch = ev.torch
    assert torch is not None
    assert (torch.version, torch.cuda, torch.cuda_available) == ("2.9.0+cu128", "12.8", True)
    assert torch.device_capabilities == ["12.0"]
    assert ev.problems == []


# --- df ------------------------------------------------------------------------------------------------------

GIB, TIB = 1024**3, 1024**4


@expect("df/df-h-mi300x-8nvme.txt", "df")
def _df_mi300x(ev: Evidence) -> None:
    mounts = {mount.mounted_on: mount for mount in ev.mounts}
    assert len(ev.mounts) == 14 and ev.problems == []
    root = mounts["/"]
    assert (root.filesystem, root.type, root.use_pct) == ("/dev/nvme0n1p2", None, 11)
    assert (root.size_bytes, root.used_bytes, root.available_bytes) == (438 * GIB, 43 * GIB, 374 * GIB)
    assert mounts["/dev/shm"].size_bytes == 1008 * GIB  # "1008G" fills its column
    assert mounts["/mnt/nvme0n1p1"].filesystem == "/dev/nvme2n1p1"  # device and mount names differ
    assert mounts["/mnt/nvme0n1p1"].size_bytes == 14 * TIB
    assert mounts["/sys/firmware/efi/efivars"].use_pct == 56
    assert mounts["/run/lock"].size_bytes == approx(5.0 * 1024**2)


@expect("df/dev-vm-df-hT.txt", "df")
def _df_ht(ev: Evidence) -> None:
    root, shm = ev.mounts
    assert (root.filesystem, root.type, root.mounted_on, root.use_pct) == ("/dev/vda", "ext4", "/", 33)
    assert (root.size_bytes, root.used_bytes, root.available_bytes) == (252 * GIB, 34 * GIB, 69 * GIB)
    assert (shm.type, shm.used_bytes) == ("tmpfs", 256 * 1024)


@expect("df/dev-vm-df-T-1k-blocks.txt", "df")
def _df_t_blocks(ev: Evidence) -> None:
    root, shm = ev.mounts
    assert (root.type, root.size_bytes, root.used_bytes, root.available_bytes) == (
        "ext4",
        264212084 * 1024,
        34880636 * 1024,
        71510276 * 1024,
    )
    assert (shm.mounted_on, shm.available_bytes) == ("/dev/shm", 24683396 * 1024)
    assert ev.extra["units"] == "blocks of 1024 bytes"


# --- pip show / list / freeze -----------------------------------------------------------------------------


@expect("pip/dev-vm-pip-show-torch-2.13.0-cpu.txt", "pip-show")
def _pip_show_cpu(ev: Evidence) -> None:
    assert ev.packages == {"torch": "2.13.0+cpu"}
    assert ev.torch is not None and (ev.torch.version, ev.torch.cuda) == ("2.13.0+cpu", None)
    assert ev.extra["details"]["torch"]["required_by"] == "accelerate, bitsandbytes, peft"
    assert ev.problems == []


@expect("pip/pip-list-vllm-0.6.3-torch-2.4.0-cu121.txt", "pip-list")
def _pip_list_cu121(ev: Evidence) -> None:
    versions = {name: ev.packages[name] for name in ("torch", "vllm", "transformers", "nvidia-cudnn-cu12")}
    assert versions == {
        "torch": "2.4.0+cu121",
        "vllm": "0.6.3",
        "transformers": "4.47.1",
        "nvidia-cudnn-cu12": "9.1.0.70",
    }
    assert ev.torch is not None and ev.torch.cuda == "12.1"
    assert (ev.extra["cuda_runtime_wheel"], ev.extra["nccl"]) == ("12.1.105", "2.20.5")
    # the Build and Editable project location columns are cut where pip's dashes put them
    assert ev.extra["build"] == {"triton": "1"}
    assert ev.extra["editable_project_location"] == {"verl": "/users/gwang16/Jillian/TinyZero"}
    assert ev.problems == []


@expect("pip/pip-list-vllm-0.9.0-torch-2.7.0.txt", "pip-list")
def _pip_list_untagged(ev: Evidence) -> None:
    assert ev.packages["torch"] == "2.7.0" and ev.packages["vllm"] == "0.9.0"
    assert ev.packages["flash-attn"] == "2.7.4.post1"  # written flash_attn: PEP 503 names
    assert ev.packages["transformers"] == "4.52.0.dev0"
    # a PyPI wheel without +cuXYZ: the CUDA is that of nvidia-cuda-runtime-cu12 12.6.77
    assert ev.torch is not None and (ev.torch.version, ev.torch.cuda) == ("2.7.0", "12.6")
    assert ev.extra["nccl"] == "2.26.2" and ev.problems == []


@expect("pip/pip-freeze-colab-gpu-torch-2.11.0-cu128.txt", "pip-freeze")
def _pip_freeze_colab(ev: Evidence) -> None:
    assert len(ev.packages) == 697 and ev.problems == []
    assert ev.torch is not None and (ev.torch.version, ev.torch.cuda) == ("2.11.0+cu128", "12.8")
    assert ev.packages["transformers"] == "5.15.0" and "vllm" not in ev.packages
    assert ev.extra["cuda_wheels"]["nvidia-nccl-cu13"] == "2.31.2"
    assert ev.extra["nccl"] == "2.28.9"  # nvidia-nccl-cu12, the one a cu128 torch loads
    assert ev.extra["unversioned"]["google-colab"] == "file:///colabtools/dist/google_colab-1.0.0.tar.gz"


# --- torch one-liners -------------------------------------------------------------------------------------


@expect("torch/dev-vm-one-liner-2.13.0-cpu.txt", "torch-version")
def _torch_one_liner_cpu(ev: Evidence) -> None:
    torch = ev.torch
    assert torch is not None
    # version, is_available(), torch.version.cuda (None on a CPU build), device_count()
    assert (torch.version, torch.cuda_available, torch.cuda, torch.device_count) == (
        "2.13.0+cpu",
        False,
        None,
        0,
    )
    assert ev.gpus == [] and ev.problems == []


@expect("torch/h100-one-liner-2.0.1-cu118-properties.txt", "torch-version")
def _torch_one_liner_properties(ev: Evidence) -> None:
    torch = ev.torch
    assert torch is not None
    # no is_available() line: get_device_properties(0) and a tensor on cuda:0 say CUDA works
    assert (torch.version, torch.cuda, torch.cuda_available) == ("2.0.1+cu118", "11.8", True)
    [gpu] = ev.gpus
    # torch prints total_memory in MiB (totalGlobalMem / 2**20) and calls it MB
    assert (gpu.name, gpu.memory_total_mib, gpu.compute_capability) == ("NVIDIA H100 80GB HBM3", 81082, "9.0")
    assert ev.extra["tensor_on_cuda"] is True and ev.problems == []


@expect("torch/8x-h100-device-count-and-properties.txt", "torch-version")
def _torch_eight_properties(ev: Evidence) -> None:
    assert ev.gpu_count == 8 and len(ev.gpus) == 8
    assert {gpu.name for gpu in ev.gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {gpu.memory_total_mib for gpu in ev.gpus} == {81090}
    assert ev.gpus[0].uuid == "a7bfde5d-8151-8a6d-fdfc-b31d020cd2f5"
    assert ev.gpus[7].uuid == "62f395b0-f63d-2a9d-d202-53f798ada4f4"
    assert ev.torch is not None and ev.torch.device_count == 8 and ev.torch.cuda_available is True
    assert ev.problems == ["no torch version line (print(torch.__version__))"]


# --- one 8-GPU node: a GKE A3 (8x H100 SXM), one lab run (SOURCES.md, node8/) ----------------------------


@expect("node8/a3-h100-topo-m.txt", "nvidia-smi-topo")
def _node8_topo(ev: Evidence) -> None:
    topology = ev.topology
    assert topology is not None and topology.kind == "connection"
    gpus = [f"GPU{n}" for n in range(8)]
    assert topology.devices == gpus  # the header's ESC[4m ... ESC[0m removed
    assert {topology.matrix[a][b] for a in gpus for b in gpus if a != b} == {"NV18"}
    assert (topology.numa["GPU3"], topology.numa["GPU4"]) == ("0", "1")
    assert topology.cpu_affinity["GPU7"] == "52-103,156-207"
    assert topology.nic_legend == {} and ev.problems == []


@expect("node8/a3-h100-nvlink-status.txt", "nvidia-smi-nvlink")
def _node8_nvlink(ev: Evidence) -> None:
    [gpu] = ev.gpus
    assert (gpu.index, gpu.name, gpu.uuid) == (
        0,
        "NVIDIA H100 80GB HBM3",
        "GPU-2e37c77d-9f00-a42d-bec1-d72b36af9983",
    )
    assert gpu.nvlinks is not None and len(gpu.nvlinks) == 18
    assert all(link.active and link.speed_gbps == approx(26.562) for link in gpu.nvlinks)


@expect("node8/a3-h100-allreduce-8gpu.txt", "nccl-tests")
def _node8_allreduce(ev: Evidence) -> None:
    [result] = ev.nccl
    assert (result.operation, result.nccl_version, result.ranks) == ("all_reduce", "2.22.3", 8)
    assert result.devices == ["NVIDIA H100 80GB HBM3"] * 8
    assert ev.host == "gke-hypercomputer-a3-a3-h100-dws-pool-16664d9c-hv7m"
    assert (result.largest_size_bytes, result.busbw_at_largest_gbps) == (8589934592, approx(479.93))
    assert result.avg_busbw_gbps == approx(145.47) and len(result.rows) == 31


# --- one H200 machine: benchmarks/device/proof.sh, 2026-11-29 (a Firecracker VM, GPU passed through) ----------


@expect("nvidia-smi-xml/1x-h200-drv580.xml", "nvidia-smi-xml")
def _h200_xml(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version, ev.gpu_count) == ("580.159.04", "13.0", 1)
    assert ev.extra["dtd_version"] == "v13"
    _h200_gpu(ev)
    assert ev.gpus[0].power_draw_w == approx(77.82)  # average_power_draw


@expect("nvidia-smi-text/1x-h200-drv580-q.txt", "nvidia-smi-query")
def _h200_q(ev: Evidence) -> None:
    assert (ev.driver_version, ev.cuda_version, ev.gpu_count) == ("580.159.04", "13.0", 1)
    _h200_gpu(ev)
    assert ev.gpus[0].power_draw_w == approx(77.79)  # Average Power Draw


def _h200_gpu(ev: Evidence) -> None:
    """The facts -q and -q -x agree on; ``Host Max : N/A`` in a VM must not become a number."""
    (gpu,) = ev.gpus
    assert (gpu.name, gpu.architecture, gpu.bus_id) == ("NVIDIA H200", "Hopper", "00000000:00:06.0")
    assert (gpu.uuid, gpu.vbios, gpu.pci_device_id) == (
        "GPU-a22860b9-8fea-b394-6528-acc3679cfa9f",
        "96.00.A5.00.1A",
        "233510DE",
    )
    assert gpu.memory_total_mib == 143771
    assert (gpu.ecc_current, gpu.ecc_pending, gpu.ecc_uncorrectable_volatile) == (True, True, 0)
    pcie = (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_gen_device_max, gpu.pcie_gen_host_max)
    assert pcie == (5, 5, 5, None)
    assert (gpu.pcie_width_current, gpu.pcie_width_max, gpu.pcie_replay_counter) == (16, 16, 0)
    assert (gpu.power_limit_w, gpu.power_default_w, gpu.power_max_w) == (700, 700, 700)
    assert (gpu.persistence_mode, gpu.mig_enabled) == (True, False)
    assert ev.problems == []


@expect("nvidia-smi-text/1x-h200-drv580-default-table.txt", "nvidia-smi-table")
def _h200_table(ev: Evidence) -> None:
    _table(ev, "580.159.04", "13.0", 1, "NVIDIA H200", 143771, 700)
    (gpu,) = ev.gpus
    assert (gpu.bus_id, gpu.power_draw_w, gpu.persistence_mode, gpu.mig_enabled) == (
        "00000000:00:06.0",
        77,
        True,
        False,
    )


@expect("nvidia-smi-csv/1x-h200-query-gpu.csv", "nvidia-smi-csv")
def _h200_csv(ev: Evidence) -> None:
    (gpu,) = ev.gpus
    assert (gpu.index, gpu.name, gpu.bus_id, ev.driver_version) == (
        0,
        "NVIDIA H200",
        "00000000:00:06.0",
        "580.159.04",
    )
    assert (gpu.memory_total_mib, gpu.power_limit_w, gpu.ecc_current) == (143771, 700, True)
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current, gpu.pcie_width_max) == (
        5,
        5,
        16,
        16,
    )
    assert ev.extra["values"]["0"] == {
        "driver_version": "580.159.04",
        "temperature.gpu": "29",
        "clocks.max.sm": "1980 MHz",
    }  # columns with no GpuEvidence field, per GPU, keyed by the index column (else bus id, else UUID)


@expect("topo/1x-h200-m-ansi-escapes.txt", "nvidia-smi-topo")
def _h200_topo(ev: Evidence) -> None:
    """The header is underlined with ESC[4m ... ESC[0m even in a file; one GPU: only X in the matrix."""
    topo = ev.topology
    assert topo is not None and topo.kind == "connection"  # by the legend: a one-GPU matrix has only X
    assert (topo.devices, topo.matrix) == (["GPU0"], {"GPU0": {"GPU0": "X"}})
    assert (topo.cpu_affinity, topo.numa) == ({"GPU0": "0-15"}, {"GPU0": "0"})
    assert ev.problems == []


@expect("topo/1x-h200-p2p-r-ansi-escapes.txt", "nvidia-smi-topo")
def _h200_topo_p2p(ev: Evidence) -> None:
    topo = ev.topology
    assert topo is not None and topo.kind == "p2p"
    assert (topo.devices, topo.matrix) == (["GPU0"], {"GPU0": {"GPU0": "X"}})
    assert ev.problems == []


@expect("nvcc/cuda-13.0.88-h200.txt", "nvcc")
def _nvcc_13_h200(ev: Evidence) -> None:
    assert ev.toolkit_version == "13.0.88"
    assert ev.extra["build"] == "cuda_13.0.r13.0/compiler.36424714_0"


@expect("torch/1x-h200-collect-env.txt", "torch-collect-env")
def _torch_h200(ev: Evidence) -> None:
    torch = ev.torch
    assert torch is not None
    assert (torch.version, torch.cuda, torch.cuda_available) == ("2.11.0+cu130", "13.0", True)
    assert (torch.cuda_runtime, torch.driver_version, torch.gpus) == (
        "13.0.88",
        "580.159.04",
        ["NVIDIA H200"],
    )
    assert (ev.driver_version, ev.os) == ("580.159.04", "Ubuntu 24.04.3 LTS (x86_64)")


def test_terminal_escapes_are_removed_before_detection() -> None:
    raw = (DATA / "topo/1x-h200-m-ansi-escapes.txt").read_text(encoding="utf-8")
    assert "\x1b[4mGPU0" in raw  # the file is as nvidia-smi wrote it
    assert parse_text(raw, "topo.txt").tool == "nvidia-smi-topo"
    coloured = "\x1b[1;32m" + (DATA / "nvcc/cuda-13.0.88-h200.txt").read_text(encoding="utf-8") + "\x1b[0m"
    assert parse_text(coloured, "nvcc.txt").toolkit_version == "13.0.88"


def test_an_empty_file_says_which_tools_print_nothing() -> None:
    """nvidia-smi nvlink -s on the H200 (no NVLink) printed nothing at all."""
    empty = Path(__file__).parent / "data" / "device" / "h200" / "nvlink-s.txt"
    evidence = load_evidence([empty])[0]
    assert empty.stat().st_size == 0 and evidence.tool == "unknown"
    assert has_problem(evidence, "it is empty", "nvlink -s")


# --- every file on disk --------------------------------------------------------------------------------------


def test_data_folder_is_complete() -> None:
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    assert FILES and [f for f in FILES if Path(f).name not in sources] == [], "files without a SOURCES.md row"
    assert sorted(EXPECTED) == sorted(set(EXPECTED) & set(FILES)), (
        "expectations for files that are not on disk"
    )


@pytest.mark.parametrize("relative", FILES)
def test_tool_output(relative: str) -> None:
    assert relative in EXPECTED, f"{relative} has no expectation in test_evidence_parsers.py"
    tool, check = EXPECTED[relative]
    evidence = load(relative)
    assert evidence.tool == tool, evidence.problems
    assert evidence.source == str(DATA / relative)
    check(evidence)


# --- partial, malformed and hostile input ---------------------------------------------------------------------


def _parsers() -> list[object]:
    return [import_parser(reference) for reference in BUILTIN_PARSERS]


def _cuts(length: int, step: int = 7, most: int = 400) -> list[int]:
    """Every ``step``-th cut point, thinned to about ``most`` (always incl. both ends of the file)."""
    points = list(range(0, length, step))
    if len(points) > most:
        stride = -(-len(points) // most)
        points = points[::stride] + list(range(max(0, length - 300), length, step))
    return sorted({*points, length - 1})


@pytest.mark.parametrize("relative", FILES)
def test_truncated_prefixes_never_raise(relative: str) -> None:
    text = (DATA / relative).read_text(encoding="utf-8")
    parsers = _parsers()
    own = next(parser for parser in parsers if getattr(parser, "name", "") == EXPECTED[relative][0])
    for cut in _cuts(len(text)):
        prefix = text[:cut]
        evidence = parse_text(prefix, relative, BUILTIN_PARSERS)
        assert not any(
            problem.startswith("parser ") and " failed" in problem for problem in evidence.problems
        ), (
            cut,
            evidence.problems,
        )
        own.parse(prefix, relative)  # type: ignore[attr-defined]  # must not raise either, detected or not
    for cut in _cuts(len(text), step=7, most=12):
        for parser in parsers:  # every parser on every other format
            parser.parse(text[:cut], relative)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(
        alphabet=st.sampled_from(list('GPU0NIC X|+-=#:,.{}[]"\t\n 0123456789abcdefMiBW/sPass')), max_size=300
    )
)
def test_random_text_never_raises(text: str) -> None:
    evidence = parse_text(text, "random.txt")
    assert isinstance(evidence, Evidence)
    for parser in _parsers():
        parser.parse(text, "random.txt")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    [
        '{"fio version": "fio-3.1", "jobs": ' + "[" * 50000,  # deeper than the recursion limit
        '{"tool": "fio", "source": "x", "extra": ' + "[" * 50000,
        "name, memory.total [MiB]\n" + "x" * 200000 + ", 1 MiB\n",  # over the csv module's field limit
        "<nvidia_smi_log>" + "<gpu>" * 20000,
        "GPU0 X " + "NODE" * 30000,
        '<!DOCTYPE l [<!ENTITY e SYSTEM "file:///etc/passwd">]><nvidia_smi_log>&e;</nvidia_smi_log>',
    ],
    ids=[
        "deep-fio-json",
        "deep-evidence-json",
        "huge-csv-field",
        "unclosed-xml",
        "long-topo-cell",
        "xml-entity",
    ],
)
def test_hostile_text(text: str) -> None:
    evidence = parse_text(text, "hostile.txt")
    assert not any(" failed: " in problem for problem in evidence.problems), evidence.problems
    assert "root:" not in evidence.model_dump_json()  # no external entity was resolved
    for parser in _parsers():
        parser.parse(text, "hostile.txt")  # type: ignore[attr-defined]


def test_partial_files_name_what_is_missing() -> None:
    assert has_problem(load("nvidia-smi-xml/a100-sxm4-80gb-mig-drv535-partial.xml"), "attached_gpus says 4")
    assert load("topo/dgx-h100-nv18-12nic-partial-mangled-tabs.txt").problems
    assert load("torch/h100-collect_env-2.9.1-cu126-partial.txt").problems
    assert load("torch/aws-8x-a100-40gb-collect_env-2.4.1-cu121-partial.txt").problems
    assert load("nccl-tests/2node-16x-a100-labelled-allreduce-but-redop-none-anomaly.txt").nccl[0].anomalies


def test_cut_xml_keeps_the_gpus_before_the_cut() -> None:
    text = (DATA / "nvidia-smi-xml/2x-rtx-a5000-drv590-dtd-v13.xml").read_text(encoding="utf-8")
    second = text.index('<gpu id="00000000:C1:00.0">')
    evidence = parse_text(text[: second + 200], "cut.xml")
    assert evidence.tool == "nvidia-smi-xml"
    assert evidence.gpus[0].memory_total_mib == 24564
    assert has_problem(evidence, "cut off or malformed")


def test_xml_enforced_power_limit_wins() -> None:
    text = (DATA / "nvidia-smi-xml/rtx3090-drv525.xml").read_text(encoding="utf-8")
    assert "<enforced_power_limit>200.00 W</enforced_power_limit>" in text
    edited = text.replace(
        "<enforced_power_limit>200.00 W</enforced_power_limit>",
        "<enforced_power_limit>180.00 W</enforced_power_limit>",
    )
    assert parse_text(edited, "edited.xml").gpus[0].power_limit_w == 180


def test_cut_nccl_table_reports_the_missing_footer() -> None:
    text = (DATA / "nccl-tests/8xa100-sxm4-80gb-nccltests-2.19.4-allreduce.txt").read_text(encoding="utf-8")
    evidence = parse_text(text[: text.index("# Out of bounds")], "cut.txt")
    assert evidence.nccl[0].busbw_at_largest_gbps == approx(182.90)
    assert has_problem(evidence, "Avg bus bandwidth")


def test_nccl_mpirun_tag_output_and_noise() -> None:
    text = (DATA / "nccl-tests/2node-1gpu-k80-gcp-allreduce.txt").read_text(encoding="utf-8")
    noisy = ["pkb-2b6a393d-2:9192:9192 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>"]
    noisy += [f"[1,0]<stdout>:{line}" for line in text.splitlines()]
    noisy.insert(8, "[pkb-2b6a393d-2:09192] 1 more process has sent help message help-mpi-btl-base.txt")
    evidence = parse_text("\n".join(noisy), "tagged.txt")
    run = evidence.nccl[0]
    assert (run.ranks, len(run.rows), run.busbw_at_largest_gbps) == (2, 11, approx(0.61))
    assert run.avg_busbw_gbps == approx(0.565546)


def test_nccl_claimed_all_reduce_with_gather_factor() -> None:
    text = (DATA / "nccl-tests/2node-16x-a100-labelled-allreduce-but-redop-none-anomaly.txt").read_text(
        encoding="utf-8"
    )
    evidence = parse_text("# Collective test starting: all_reduce_perf\n" + text, "claimed.txt")
    run = evidence.nccl[0]
    assert run.operation == "all_reduce"
    assert any(
        a.startswith("the file says all_reduce but")
        and "15/16 = (n-1)/n: this is not an all_reduce table" in a
        for a in run.anomalies
    )


def test_nccl_algbw_that_is_not_size_over_time_is_an_anomaly() -> None:
    text = (DATA / "nccl-tests/8xh200-azure-ndv5-allreduce-8g-single-size.txt").read_text(encoding="utf-8")
    evidence = parse_text(text.replace("31517  272.55", "21517  272.55"), "edited.txt")
    assert any("algbw 272.55" in a and "size/time" in a for a in evidence.nccl[0].anomalies)


def test_fio_mixed_json_and_normal_output() -> None:
    text = (DATA / "fio/nvme0n1-randrw-4k-qd64-fio316.json").read_text(encoding="utf-8")
    mixed = (
        "rand_read: (g=0): rw=randrw, bs=(R) 4096B-4096B, ioengine=libaio, iodepth=64\n"
        "...\nfio-3.16\nStarting 4 threads\n"
        + text
        + "\nrand_read: (groupid=0, jobs=4): err= 0: pid=1234\n  read: IOPS=85.1k, BW=333MiB/s (349MB/s)\n"
    )
    evidence = parse_text(mixed, "mixed.txt")
    assert evidence.tool == "fio" and evidence.extra["mixed_output"] is True
    assert evidence.storage[0].read_bw_bytes_per_s == 348743777
    assert evidence.storage[0].read_iops == approx(85138.890741)


def test_topo_with_spaces_instead_of_tabs() -> None:
    text = (DATA / "topo/8x-rtx4090-pcie-all-sys-2nic.txt").read_text(encoding="utf-8")
    tabs = parse_text(text, "tabs.txt")
    spaces = parse_text(text.replace("\t", "    "), "spaces.txt")
    assert tabs.topology == spaces.topology
    assert not any("separators" in problem for problem in spaces.problems)


def test_csv_without_header_and_without_units() -> None:
    lines = (DATA / "nvidia-smi-csv/2x-a100-pcie-40gb-query-gpu.csv").read_text(encoding="utf-8").splitlines()
    noheader = parse_text("\n".join(lines[1:]), "noheader.csv")
    assert noheader.tool == "nvidia-smi-csv"
    assert [(gpu.name, gpu.bus_id) for gpu in noheader.gpus] == [
        ("NVIDIA A100-PCIE-40GB", "00000000:12:00.0"),
        ("NVIDIA A100-PCIE-40GB", "00000000:8A:00.0"),
    ]
    assert has_problem(noheader, "no header line")
    nounits = parse_text(
        "index, memory.total [MiB], power.limit [W], enforced.power.limit [W], ecc.mode.current, pcie.link.gen.max\n"
        "0, 40960, 250.00, 200.00, Enabled, 4\n1, 40960, 250.00, 250.00, [N/A], [N/A]\n",
        "nounits.csv",
    )
    assert [(g.memory_total_mib, g.power_limit_w, g.ecc_current, g.pcie_gen_max) for g in nounits.gpus] == [
        (40960, 200, True, 4),
        (40960, 250, None, None),
    ]


NVBANDWIDTH = """\
nvbandwidth Version: v0.5
Built from Git version: v0.5-1-g4da7d7e

NOTE: This tool reports current measured bandwidth on your system.
Additional system-specific tuning may be required to achieve maximal peak bandwidth.

CUDA Runtime Version: 12040
CUDA Driver Version: 12040
Driver Version: 550.54.15

Device 0: NVIDIA A10

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0
 0     25.17

SUM host_to_device_memcpy_ce 25.17

Running device_to_host_memcpy_ce.
memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)
           0
 0     24.86

SUM device_to_host_memcpy_ce 24.86
"""


def test_nvbandwidth() -> None:
    evidence = parse_text(NVBANDWIDTH, "nvbandwidth.txt")
    assert (evidence.tool, evidence.tool_version, evidence.driver_version) == (
        "nvbandwidth",
        "v0.5",
        "550.54.15",
    )
    assert [(b.kind, b.src, b.dst, b.gbps) for b in evidence.bandwidth] == [
        ("h2d", "CPU0", "GPU0", 25.17),
        ("d2h", "GPU0", "CPU0", 24.86),
    ]
    assert evidence.extra["sums"] == {"host_to_device_memcpy_ce": 25.17, "device_to_host_memcpy_ce": 24.86}
    assert [gpu.name for gpu in evidence.gpus] == ["NVIDIA A10"]


# Constructed from the DCGM 3.x layout (no real sample in tool-outputs has "Pass - All" or a Warning row).
DCGM_3X_HARDWARE = """\
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Hardware  ----------+------------------------------------------------|
| GPU Memory                | Pass - All                                     |
| Diagnostic                | Fail - GPU: 0                                  |
| Warning                   | GPU 0 Thermal violations totaling 13.2 second  |
|                           | s started at 1.0 seconds into the test         |
| SM Stress                 | Skip - All                                     |
"""


def test_dcgmi_pass_all_and_named_gpu() -> None:
    evidence = parse_text(DCGM_3X_HARDWARE, "diag.txt")
    assert [(d.test, d.result, d.gpu) for d in evidence.diag] == [
        ("GPU Memory", "pass", None),
        ("Diagnostic", "fail", 0),
        ("SM Stress", "skip", None),
    ]
    assert evidence.diag[1].detail == (
        "GPU: 0 GPU 0 Thermal violations totaling 13.2 seconds started at 1.0 seconds into the test"
    )


def test_ibstat_error_after_partial_blocks() -> None:
    text = (DATA / "ibstat/a100-node-9x-200g-ibstat.txt").read_text(encoding="utf-8")
    cut = (
        text[: text.index("CA 'mlx5_2'")]
        + "CA 'mlx5_2'\nibpanic: [3507] main: stat of IB device 'mlx5_2' failed\n"
    )
    evidence = parse_text(cut, "ibstat.txt")
    assert [port.ca for port in evidence.ib_ports] == ["mlx5_0", "mlx5_1"]
    assert has_problem(evidence, "ibpanic")
    assert has_problem(evidence, "mlx5_2 has no 'Port N:'")


def test_evidence_json_round_trip(tmp_path: Path) -> None:
    original = load("nvidia-smi-xml/a100-sxm4-80gb-mig-drv535-partial.xml")
    path = tmp_path / "evidence.json"
    path.write_text(original.model_dump_json(indent=2), encoding="utf-8")
    (again,) = load_evidence([path])
    assert again == original  # the tool stays nvidia-smi-xml
    bad = parse_text('{"tool": "fio", "source": "x", "gpu_count": "many"}', "bad.json")
    assert bad.tool == "fio" and has_problem(bad, "gpu_count")


# --- the loader ----------------------------------------------------------------------------------------------


def test_builtin_parsers() -> None:
    parsers = _parsers()
    names = [parser.name for parser in parsers]  # type: ignore[attr-defined]
    assert len(set(names)) == len(names)
    assert names[-1] == "nvidia-smi-table"  # the default table is the last resort
    assert {name for name, _check in EXPECTED.values()} <= set(names)
    for parser in parsers:
        assert callable(parser.detect) and callable(parser.parse)  # type: ignore[attr-defined]


def test_binary_and_empty_files(tmp_path: Path) -> None:
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 40)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    blob, nothing = load_evidence([binary, empty])
    assert (blob.tool, nothing.tool) == ("unknown", "unknown")
    assert blob.problems and blob.problems[0].startswith("no parser recognised this file")
    assert has_problem(nothing, "no parser recognised this file", "empty")


def test_oversized_file_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)
    (evidence,) = load_evidence([big])
    assert evidence.tool == "unknown" and has_problem(evidence, "20 MiB")


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.xml"
    with pytest.raises(UsageError, match=re.escape(str(missing))):
        load_evidence([missing])


def test_utf16_and_crlf(tmp_path: Path) -> None:
    text = (DATA / "nvcc/cuda-11.1.105.txt").read_text(encoding="utf-8")
    path = tmp_path / "nvcc.txt"
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    (evidence,) = load_evidence([path])
    assert (evidence.tool, evidence.toolkit_version) == ("nvcc", "11.1.105")
    assert evidence.extra["build"] == "cuda_11.1.TC455_06.29190527_0"


class _Raising:
    name = "raising"

    def detect(self, text: str) -> bool:
        return True

    def parse(self, text: str, path: str) -> Evidence:
        raise ZeroDivisionError("boom")


class _Facts:
    name = "facts"

    def detect(self, text: str) -> bool:
        return "dcgmi" in text

    def parse(self, text: str, path: str) -> dict[str, object]:
        return {"driver_version": "550.1", "dcgm_diag_passed": True}


def test_a_failing_parser_is_reported_not_raised() -> None:
    evidence = parse_text("anything", "x.txt", [_Raising()])
    assert evidence.tool == "raising"
    assert evidence.problems == ["parser raising failed: ZeroDivisionError: boom"]


def test_parsers_as_strings_and_objects_and_dict_results() -> None:
    evidence = parse_text("dcgmi output", "x.txt", ["rigcheck.no_such_module:PARSER", _Facts()])
    assert (evidence.tool, evidence.driver_version) == ("facts", "550.1")
    assert evidence.extra == {"dcgm_diag_passed": True}
    assert has_problem(evidence, "rigcheck.no_such_module:PARSER", "could not be imported")
    nvcc = parse_text(
        "Cuda compilation tools, release 12.4, V12.4.131", "x.txt", ["rigcheck.evidence.parsers.nvcc:PARSER"]
    )
    assert nvcc.toolkit_version == "12.4.131"


def test_unrecognised_text() -> None:
    evidence = parse_text("hello world\n", "x.txt")
    assert evidence.tool == "unknown"
    assert has_problem(evidence, "no parser recognised this file", "'hello world'")


def test_expected_values_are_not_all_empty() -> None:
    """Guard against a check that passes because the parser returned nothing."""
    for relative in FILES:
        evidence = load(relative)
        facts = json.loads(
            evidence.model_dump_json(exclude_defaults=True, exclude={"source", "tool", "problems"})
        )
        assert facts, relative


def test_torch_one_liner_forms() -> None:
    """Values on one line, labelled values, VRAM with a unit; X.Y alone is torch.version.cuda, not torch."""
    one_line = parse_text("True 12.1 NVIDIA A100-SXM4-80GB\n", "a.txt")
    assert one_line.tool == "torch-version" and one_line.torch is not None
    assert (one_line.torch.cuda_available, one_line.torch.cuda, one_line.torch.gpus) == (
        True,
        "12.1",
        ["NVIDIA A100-SXM4-80GB"],
    )
    labelled = parse_text("CUDA available: True\nDevice: NVIDIA GeForce RTX 4090\nVRAM: 23.99 GiB\n", "b.txt")
    assert [(gpu.name, gpu.memory_total_mib) for gpu in labelled.gpus] == [
        ("NVIDIA GeForce RTX 4090", approx(23.99 * 1024))
    ]
    cuda_first = parse_text("12.1\nTrue\nNVIDIA A100-SXM4-80GB\n", "c.txt")
    assert cuda_first.torch is not None and (cuda_first.torch.version, cuda_first.torch.cuda) == (
        None,
        "12.1",
    )
    assert parse_text("hello\nTrue\n", "d.txt").tool == "unknown"


def test_df_bsd_and_wrapped_names() -> None:
    bsd = parse_text(
        "Filesystem     Size   Used  Avail Capacity iused ifree %iused  Mounted on\n"
        "/dev/disk3s1  460Gi  200Gi  240Gi    46% 1000 2000    33%   /System/Volumes/Data\n",
        "bsd.txt",
    )
    [mount] = bsd.mounts
    assert (mount.mounted_on, mount.size_bytes, mount.use_pct) == ("/System/Volumes/Data", 460 * GIB, 46)
    wrapped = parse_text(
        "Filesystem           1K-blocks      Used Available Use% Mounted on\n"
        "/dev/mapper/vg0-a-very-long-logical-volume\n"
        "                     103081248  20000000  77822984  21% /data\n",
        "old.txt",
    )
    [mount] = wrapped.mounts
    assert (mount.filesystem, mount.size_bytes, mount.mounted_on) == (
        "/dev/mapper/vg0-a-very-long-logical-volume",
        103081248 * 1024,
        "/data",
    )


def test_pip_show_several_and_not_found() -> None:
    shown = parse_text(
        "WARNING: Package(s) not found: vllm\nName: torch\nVersion: 2.5.1\nLocation: /opt/lib\n---\n"
        "Name: nvidia_cuda_runtime_cu12\nVersion: 12.4.127\n",
        "show.txt",
    )
    assert shown.tool == "pip-show"
    assert shown.packages == {"torch": "2.5.1", "nvidia-cuda-runtime-cu12": "12.4.127"}
    assert shown.torch is not None and shown.torch.cuda == "12.4"  # untagged torch: the runtime wheel's CUDA
    assert shown.problems == ["pip: Package(s) not found: vllm"]
