"""EVD001-EVD013 on evidence built by hand (the parsers have their own tests): what was measured
against what the rig declares, at and around each threshold of specs/rules/evidence.yaml."""

from __future__ import annotations

import pytest

from rigcheck.core.engine.findings import Severity
from rigcheck.evidence.model import (
    Bandwidth,
    DiagResult,
    Evidence,
    GpuEvidence,
    IbPort,
    NcclResult,
    NvLinkState,
    StorageJob,
    TopologyEvidence,
)

DGX = """\
apiVersion: rigcheck/v1
kind: Rig
name: dgx
nodes:
  - name: dgx
    hostnames: [dgx-01]
    gpus: {model: H100 SXM, count: 8}
    gpu_interconnect: {kind: nvswitch}
    pcie: {gen: 5, lanes_per_gpu: 16}
    storage:
      - {name: nvme0n1, kind: nvme, read_mb_s: 7000, random_read_iops: 1000000}
    network:
      - {kind: infiniband, rate: ndr, count: 8, role: compute}
    software: {os: linux, driver: "550.54.15", torch: "2.3.0+cu121", cuda_toolkit: "12.4"}
"""

H100 = "NVIDIA H100 80GB HBM3"


def gpus(n: int = 8, **fields) -> list[GpuEvidence]:  # type: ignore[no-untyped-def]
    return [GpuEvidence(index=i, name=H100, **fields) for i in range(n)]


def run(check, evidence: list[Evidence], code: str, rig: str = DGX):  # type: ignore[no-untyped-def]
    from rigcheck.core.engine.engine import RunOptions, run_checks
    from rigcheck.core.spec.documents import parse_spec

    registry, catalog = check
    return [
        f
        for f in run_checks(
            parse_spec(rig, "rig.yaml"),
            None,
            registry,
            catalog,
            RunOptions(select=(code,)),
            evidence=evidence,
        ).findings
        if f.code == code
    ]


@pytest.fixture
def check(builtin_registry, catalog):  # type: ignore[no-untyped-def]
    return builtin_registry, catalog


def severities(findings) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.severity.value for f in findings]


class TestInventory:
    def test_missing_gpu_fails(self, check) -> None:  # type: ignore[no-untyped-def]
        found = run(
            check, [Evidence(source="n.xml", tool="nvidia-smi-xml", host="dgx-01", gpus=gpus(7))], "EVD001"
        )
        assert severities(found) == ["fail"] and "missing 1 x NVIDIA H100 SXM5 80GB" in found[0].message
        assert found[0].location.pointer == "/nodes/0/gpus"

    def test_all_present(self, check) -> None:  # type: ignore[no-untyped-def]
        assert severities(run(check, [Evidence(source="n.xml", tool="x", gpus=gpus(8))], "EVD001")) == [
            "pass"
        ]

    def test_other_model(self, check) -> None:  # type: ignore[no-untyped-def]
        other = [GpuEvidence(index=i, name="NVIDIA A100-SXM4-80GB") for i in range(8)]
        assert severities(run(check, [Evidence(source="n.xml", tool="x", gpus=other)], "EVD001")) == ["fail"]

    def test_software_versions(self, check) -> None:  # type: ignore[no-untyped-def]
        evidence = Evidence(source="n.xml", tool="x", driver_version="535.129.03", toolkit_version="12.4.131")
        found = {f.evidence["measured"]: f.severity for f in run(check, [evidence], "EVD002")}
        assert found == {"535.129.03": Severity.WARN, "12.4.131": Severity.PASS}


class TestEcc:
    def test_off_on_a_datacenter_gpu(self, check) -> None:  # type: ignore[no-untyped-def]
        evidence = Evidence(source="n.xml", tool="x", gpus=gpus(1, ecc_current=False, ecc_pending=False))
        assert severities(run(check, [evidence], "EVD003")) == ["fail"]

    def test_pending_change(self, check) -> None:  # type: ignore[no-untyped-def]
        evidence = Evidence(source="n.xml", tool="x", gpus=gpus(1, ecc_current=True, ecc_pending=False))
        assert severities(run(check, [evidence], "EVD003")) == ["warn"]

    def test_geforce_without_ecc_passes(self, check) -> None:  # type: ignore[no-untyped-def]
        rig = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 4090}\n"
        evidence = Evidence(
            source="n.xml",
            tool="x",
            gpus=[GpuEvidence(index=0, name="NVIDIA GeForce RTX 4090", ecc_current=False)],
        )
        assert severities(run(check, [evidence], "EVD003", rig)) == ["pass"]


class TestPcie:
    def link(self, check, **fields):  # type: ignore[no-untyped-def]
        return run(check, [Evidence(source="n.xml", tool="x", gpus=gpus(1, **fields))], "EVD004")

    def test_idle_gen_is_not_a_fault(self, check) -> None:  # type: ignore[no-untyped-def]
        found = self.link(check, pcie_gen_current=1, pcie_gen_max=5, pcie_width_current=16, pcie_width_max=16)
        assert severities(found) == ["pass"] and "idle links train down" in found[0].message

    def test_lost_lanes_and_slow_slot(self, check) -> None:  # type: ignore[no-untyped-def]
        found = self.link(check, pcie_gen_current=4, pcie_gen_max=4, pcie_width_current=8, pcie_width_max=16)
        assert (
            severities(found) == ["fail"]
            and "x8 of x16" in found[0].message
            and "Gen4 at most" in found[0].message
        )

    def test_host_holds_back_the_card(self, check) -> None:  # type: ignore[no-untyped-def]
        rig = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 4090}\n"
        evidence = Evidence(
            source="x.xml",
            tool="x",
            gpus=[
                GpuEvidence(
                    index=0,
                    name="NVIDIA GeForce RTX 4090",
                    pcie_gen_current=1,
                    pcie_gen_max=3,
                    pcie_gen_host_max=3,
                    pcie_width_current=16,
                )
            ],
        )
        assert severities(run(check, [evidence], "EVD004", rig)) == ["warn"]  # the rtx4090-drv535.xml case

    def test_replays(self, check) -> None:  # type: ignore[no-untyped-def]
        evidence = Evidence(source="n.xml", tool="x", gpus=[*gpus(1, pcie_replay_counter=82)])
        assert severities(run(check, [evidence], "EVD010")) == ["warn"]

    @pytest.mark.parametrize(
        ("gbps", "severity"), [(44.2, "pass"), (44.0, "warn"), (25.3, "warn"), (25.1, "fail")]
    )
    def test_copy_bandwidth(self, check, gbps: float, severity: str) -> None:  # type: ignore[no-untyped-def]
        # Gen5 x16 = 63 GB/s each way: warn below 70% (44.1), fail below 40% (25.2)
        evidence = Evidence(
            source="m.json",
            tool="rigcheck-measure",
            bandwidth=[Bandwidth(kind="h2d", gbps=gbps, pinned=True)],
        )
        found = run(check, [evidence], "EVD011")
        assert severities(found) == [severity] and found[0].evidence["link_gbps"] == 63

    #: An RTX 3090 (a PCIe 4.0 x16 card, gpus.yaml) in a declared PCIe 5.0 x16 slot: the link trains to
    #: Gen4, the lower of the two ("the maximum PCIe link generation possible with this device and system").
    GEN5_SLOT_3090 = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 3090}\n"
        "    pcie: {gen: 5, lanes_per_gpu: 16}\n"
    )

    def test_a_gen4_card_in_a_gen5_slot_is_expected_at_gen4(self, check) -> None:  # type: ignore[no-untyped-def]
        def evidence(gen_max: int) -> list[Evidence]:
            gpu = GpuEvidence(
                index=0, name="NVIDIA GeForce RTX 3090", pcie_gen_max=gen_max, pcie_width_current=16
            )
            return [Evidence(source="n.xml", tool="x", gpus=[gpu])]

        assert severities(run(check, evidence(4), "EVD004", self.GEN5_SLOT_3090)) == ["pass"]
        slow = run(check, evidence(3), "EVD004", self.GEN5_SLOT_3090)
        assert severities(slow) == ["fail"] and "Gen3 at most, in Gen4, slot and card" in slow[0].message

    def test_copies_of_a_gen4_card_in_a_gen5_slot_against_gen4(self, check) -> None:  # type: ignore[no-untyped-def]
        # Gen4 x16 = 31.5 GB/s each way: 25 GB/s is 79% (pass); against Gen5's 63 it would be 40% (warn)
        evidence = Evidence(
            source="m.json",
            tool="rigcheck-measure",
            bandwidth=[Bandwidth(kind="h2d", gbps=25.0, pinned=True)],
        )
        found = run(check, [evidence], "EVD011", self.GEN5_SLOT_3090)
        assert severities(found) == ["pass"] and found[0].evidence["link_gbps"] == 31.5


class TestNvlink:
    def test_inactive_links(self, check) -> None:  # type: ignore[no-untyped-def]
        links = [NvLinkState(link=i, active=i != 5, speed_gbps=26.562) for i in range(18)]
        evidence = Evidence(
            source="nvlink.txt",
            tool="nvidia-smi-nvlink",
            gpus=[GpuEvidence(index=3, name=H100, nvlinks=links)],
        )
        found = run(check, [evidence], "EVD005")
        assert severities(found) == ["fail"] and "1 of 18 NVLink links inactive (5)" in found[0].message

    def test_topology_through_pcie(self, check) -> None:  # type: ignore[no-untyped-def]
        matrix = {"GPU0": {"GPU0": "X", "GPU1": "SYS"}, "GPU1": {"GPU0": "SYS", "GPU1": "X"}}
        evidence = Evidence(
            source="topo.txt",
            tool="nvidia-smi-topo",
            topology=TopologyEvidence(devices=["GPU0", "GPU1"], matrix=matrix),
        )
        assert severities(run(check, [evidence], "EVD005")) == ["fail"]

    def test_p2p_not_supported(self, check) -> None:  # type: ignore[no-untyped-def]
        rig = (
            "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 2080 Ti, count: 2}\n"
            "    gpu_interconnect: {kind: pcie, p2p: true}\n"
        )
        matrix = {"GPU0": {"GPU0": "X", "GPU1": "NS"}, "GPU1": {"GPU0": "NS", "GPU1": "X"}}
        evidence = Evidence(
            source="p2p.txt",
            tool="nvidia-smi-topo",
            topology=TopologyEvidence(kind="p2p", devices=["GPU0", "GPU1"], matrix=matrix),
        )
        assert severities(run(check, [evidence], "EVD012", rig)) == ["warn"]


class TestNccl:
    @pytest.mark.parametrize(
        ("busbw", "severity"),
        # NVSwitch H100: 900 GB/s / 2 = 450 each way: warn below 315 (70%), fail below 225 (50%)
        [(476.96, "pass"), (316, "pass"), (314, "warn"), (226, "warn"), (224, "fail")],
    )
    def test_intra_node(self, check, busbw: float, severity: str) -> None:  # type: ignore[no-untyped-def]
        result = NcclResult(
            operation="all_reduce", ranks=8, largest_size_bytes=8 * 2**30, busbw_at_largest_gbps=busbw
        )
        found = run(check, [Evidence(source="nccl.txt", tool="nccl-tests", nccl=[result])], "EVD006")
        assert severities(found) == [severity] and found[0].evidence["link_gbps"] == 450

    def test_small_sizes_are_not_conclusive(self, check) -> None:  # type: ignore[no-untyped-def]
        result = NcclResult(ranks=8, largest_size_bytes=128 * 2**20, busbw_at_largest_gbps=181.32)
        found = run(check, [Evidence(source="nccl.txt", tool="nccl-tests", nccl=[result])], "EVD006")
        assert severities(found) == ["warn"] and "128 MiB, is too small" in found[0].message

    def test_across_nodes_uses_the_network(self, check) -> None:  # type: ignore[no-untyped-def]
        result = NcclResult(ranks=16, largest_size_bytes=8 * 2**30, busbw_at_largest_gbps=150)
        found = run(check, [Evidence(source="nccl.txt", tool="nccl-tests", nccl=[result])], "EVD006")
        assert found[0].evidence["link_gbps"] == 400  # 8 x NDR 400 Gb/s = 400 GB/s per node
        assert severities(found) == ["fail"]

    def test_anomaly(self, check) -> None:  # type: ignore[no-untyped-def]
        result = NcclResult(
            ranks=16,
            largest_size_bytes=2**34,
            busbw_at_largest_gbps=38,
            anomalies=["busbw/algbw = 15/16 = (n-1)/n: this is not an all_reduce table"],
        )
        assert severities(run(check, [Evidence(source="n", tool="nccl-tests", nccl=[result])], "EVD006")) == [
            "warn"
        ]


class TestStorageIbDiag:
    @pytest.mark.parametrize(("iops", "severity"), [(85138.9, "warn"), (800000, "pass")])
    def test_fio_iops(self, check, iops: float, severity: str) -> None:  # type: ignore[no-untyped-def]
        job = StorageJob(name="randread", rw="randrw", filename="/dev/nvme0n1", read_iops=iops)
        assert severities(run(check, [Evidence(source="f.json", tool="fio", storage=[job])], "EVD007")) == [
            severity
        ]

    def test_ib_port_down(self, check) -> None:  # type: ignore[no-untyped-def]
        ports = [
            IbPort(
                ca=f"mlx5_{i}", state="Active" if i != 3 else "Down", rate_gbps=400, link_layer="InfiniBand"
            )
            for i in range(8)
        ]
        found = run(check, [Evidence(source="ib.txt", tool="ibstat", ib_ports=ports)], "EVD008")
        assert severities(found) == ["fail"] and "mlx5_3/1 Down" in found[0].message

    def test_ib_slow_port(self, check) -> None:  # type: ignore[no-untyped-def]
        ports = [IbPort(ca=f"mlx5_{i}", state="Active", rate_gbps=200 if i == 0 else 400) for i in range(8)]
        assert severities(run(check, [Evidence(source="ib", tool="ibstat", ib_ports=ports)], "EVD008")) == [
            "warn"
        ]

    def test_dcgm(self, check) -> None:  # type: ignore[no-untyped-def]
        failing = [DiagResult(test="Persistence Mode", result="fail", detail="persistence mode is off")]
        assert severities(run(check, [Evidence(source="d", tool="dcgmi-diag", diag=failing)], "EVD009")) == [
            "fail"
        ]
        skipped = [DiagResult(test="software", result="pass"), DiagResult(test="memory", result="skip")]
        assert severities(run(check, [Evidence(source="d", tool="dcgmi-diag", diag=skipped)], "EVD009")) == [
            "warn"
        ]


def test_incomplete_and_unknown_files(check) -> None:  # type: ignore[no-untyped-def]
    found = run(
        check,
        [
            Evidence(source="a.xml", tool="nvidia-smi-xml", problems=["attached_gpus says 4 but ..."]),
            Evidence(source="b.bin", tool="unknown", problems=["no parser recognised this file"]),
            Evidence(source="c.xml", tool="nvidia-smi-xml"),
        ],
        "EVD013",
    )
    assert severities(found) == ["warn", "warn", "pass"]


def test_without_evidence_the_checkers_are_skipped(check) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.engine.engine import run_checks
    from rigcheck.core.spec.documents import parse_spec

    registry, catalog = check
    report = run_checks(parse_spec(DGX, "rig.yaml"), None, registry, catalog)
    statuses = {run.name: run.status for run in report.checkers if run.name.startswith("evidence.")}
    assert set(statuses.values()) == {"skipped"} and len(statuses) == 9
