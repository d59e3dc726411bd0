"""NET001-NET007: NCCL interface syntax, fabric thresholds, ports, GPUDirect RDMA, subnets
(docs/research/rules_facts.md NET-1, NET-2, NET-6, NET-11; NCCL environment-variable docs)."""

from __future__ import annotations

import pytest

from rigcheck.core.engine.findings import Severity
from rigcheck.core.estimate.network import InterfaceList, open_ports, port_open


def rig(node: str, count: int = 2, gpus: str = "{model: H100 SXM, count: 8}", extra_nodes: str = "") -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n"
        f"  - name: n\n    count: {count}\n    gpus: {gpus}\n"
        f"    gpu_interconnect: {{kind: nvswitch}}\n{node}{extra_nodes}"
    )


def workload(parallelism: str = "{dp: 16, zero: 3}", launcher: str = "") -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: llama-3-8b}\ntask: full_finetune\n"
        f"batch: {{micro: 1, seq_len: 4096}}\nparallelism: {parallelism}\n{launcher}"
    )


def findings(report, code):  # type: ignore[no-untyped-def]
    return [f for f in report.findings if f.code == code]


def one(report, code):  # type: ignore[no-untyped-def]
    found = findings(report, code)
    assert len(found) == 1, [f.message for f in found]
    return found[0]


class TestInterfaceSyntax:
    NAMES = ["enp170s0f0", "eth0", "docker0", "mlx5_0", "mlx5_1"]

    def test_prefix(self) -> None:
        parsed = InterfaceList.parse("eth,enp")
        assert [n for n in self.NAMES if parsed.matches(n)] == ["enp170s0f0", "eth0"]

    def test_exact(self) -> None:
        parsed = InterfaceList.parse("=mlx5_0:1,mlx5_1:1")  # ports are stripped
        assert [n for n in self.NAMES if parsed.matches(n)] == ["mlx5_0", "mlx5_1"]
        assert not InterfaceList.parse("=mlx5").matches("mlx5_0")

    def test_exclude(self) -> None:
        parsed = InterfaceList.parse("^docker,lo")
        assert [n for n in self.NAMES if parsed.matches(n)] == ["enp170s0f0", "eth0", "mlx5_0", "mlx5_1"]
        assert InterfaceList.parse("^=eth0").exclude and InterfaceList.parse("^=eth0").exact

    def test_unmatched_entries(self) -> None:
        assert InterfaceList.parse("eth,ib").unmatched_entries(self.NAMES) == ["ib"]

    def test_ports(self) -> None:
        ranges = open_ports([29500, "50000-51000", "22/tcp", "junk"])
        assert ranges == [(29500, 29500), (50000, 51000), (22, 22)]
        assert port_open(50500, ranges) and not port_open(29400, ranges)


IB = "      - {kind: infiniband, rate: ndr, count: 8, interface: 'mlx5_0,mlx5_1', role: compute}\n"
ETH = "      - {kind: ethernet, gbps: 100, interface: enp170s0f0, role: management}\n"


class TestFabric:
    def test_no_compute_network_fails(self, check) -> None:  # type: ignore[no-untyped-def]
        report = check(rig(f"    network:\n{ETH}"), workload(), select=("NET001",))
        finding = one(report, "NET001")
        assert finding.severity is Severity.FAIL and "ethernet (management)" in finding.message

    def test_infiniband_rate_is_read_from_the_table(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(f"    network:\n{IB}"), workload(), select=("NET001",)), "NET001")
        assert finding.severity is Severity.PASS and "3,200 Gb/s per node" in finding.message  # 8 x 400

    def test_one_node_needs_no_fabric(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig("", count=1), workload("{dp: 8}"), select=("NET001",)), "NET001")
        assert finding.severity is Severity.PASS

    @pytest.mark.parametrize(
        ("gbps", "count", "severity"),
        [
            (99, 1, Severity.FAIL),
            (100, 1, Severity.FAIL),
            (200, 1, Severity.FAIL),
            (100, 4, Severity.WARN),
            (399, 1, Severity.WARN),
            (400, 8, Severity.PASS),
        ],
    )
    def test_zero3_traffic_against_compute(self, check, gbps: int, count: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        """Llama-3-8B (8,030,261,248 params) under ZeRO-3 over 2 x 8 H100s, micro 1 x 4096: per step two
        all-gathers of the 16-bit params and a reduce-scatter of the 16-bit grads, each 15/16 x 16.06 GB,
        over ports x Gb/s / 8 x 0.85 (RDMA); compute 16 x 4096 tokens x (6 x 7,504,924,672 + 12 x 32 x
        4096 x 4096) FLOPs / (16 x 989.4 TFLOPS x 0.45 x 0.75, Hopper); 0.8 of the compute hides them."""
        from rigcheck.core.catalog.facts import load_rule_facts

        facts = load_rule_facts("throughput")
        hfu = (
            facts["training_hfu"]["frameworks"]["default"] * facts["training_hfu"]["architectures"]["Hopper"]
        )
        busbw = gbps * count / 8 * facts["communication"]["network_efficiency"]["rdma"]
        comm = 3 * (15 / 16 * 2 * 8_030_261_248 / (busbw * 1e9) + 30e-6)
        compute = 16 * 4096 * (6 * 7_504_924_672 + 12 * 32 * 4096 * 4096) / (16 * 989.4e12 * hfu)
        share = max(0.0, comm - 0.8 * compute) / compute
        node = f"    network:\n      - {{kind: roce, gbps: {gbps}, count: {count}}}\n"
        finding = one(check(rig(node), workload(), select=("NET002",)), "NET002")
        assert finding.severity is severity and finding.evidence["gbps_per_node"] == gbps * count
        assert finding.evidence["share"] == pytest.approx(share, abs=0.01)

    def test_hybrid_shard_is_not_full_sharding(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "    network:\n      - {kind: ethernet, gbps: 25}\n"
        report = check(rig(node), workload("{dp: 16, fsdp: hybrid_shard}"), select=("NET002",))
        assert one(report, "NET002").severity is Severity.PASS


class TestNcclInterfaces:
    def node(self, env: str) -> str:
        return f"    network:\n{IB}{ETH}    software: {{env: {env}}}\n"

    @pytest.mark.parametrize(
        ("env", "severity"),
        [
            ("{NCCL_SOCKET_IFNAME: enp170s0f0}", Severity.PASS),
            ("{NCCL_SOCKET_IFNAME: enp}", Severity.PASS),  # prefix
            ("{NCCL_SOCKET_IFNAME: eth0}", Severity.FAIL),  # the classic: the node's NIC is not eth0
            ("{NCCL_SOCKET_IFNAME: '=enp170s0'}", Severity.FAIL),  # exact: a prefix is not enough
            ("{NCCL_SOCKET_IFNAME: 'enp170s0f0,eth'}", Severity.WARN),  # one entry selects nothing
            ("{NCCL_SOCKET_IFNAME: '^enp,mlx'}", Severity.FAIL),  # excludes everything declared
            ("{NCCL_IB_HCA: '=mlx5_0:1,mlx5_1:1'}", Severity.PASS),
            ("{NCCL_IB_HCA: mlx4}", Severity.FAIL),
        ],
    )
    def test_against_declared(self, check, env: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(self.node(env)), select=("NET003",)), "NET003")
        assert finding.severity is severity, finding.message

    def test_hca_without_rdma_links(self, check) -> None:  # type: ignore[no-untyped-def]
        node = f"    network:\n{ETH}    software: {{env: {{NCCL_IB_HCA: mlx5}}}}\n"
        assert one(check(rig(node), select=("NET003",)), "NET003").severity is Severity.WARN

    def test_nothing_declared_is_not_checked(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "    software: {env: {NCCL_SOCKET_IFNAME: eth0}}\n"
        assert one(check(rig(node), select=("NET003",)), "NET003").severity is Severity.SKIP

    def test_location_is_the_variable(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(self.node("{NCCL_SOCKET_IFNAME: eth0}")), select=("NET003",)), "NET003")
        assert finding.location.pointer == "/nodes/0/software/env/NCCL_SOCKET_IFNAME"
        assert finding.fix == "set NCCL_SOCKET_IFNAME to one of: mlx5_0, mlx5_1, enp170s0f0"


class TestDebugSwitches:
    def test_p2p_disable_on_nvswitch_warns(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "    software: {env: {NCCL_P2P_DISABLE: '1'}}\n"
        assert one(check(rig(node), select=("NET004",)), "NET004").severity is Severity.WARN

    def test_p2p_disable_on_rtx_4090_is_the_workaround(self, check) -> None:  # type: ignore[no-untyped-def]
        text = (
            "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 4090, count: 2}\n"
            "    software: {env: {NCCL_P2P_DISABLE: '1'}}\n"
        )
        assert one(check(text, select=("NET004",)), "NET004").severity is Severity.PASS

    def test_ib_disable_with_infiniband(self, check) -> None:  # type: ignore[no-untyped-def]
        node = f"    network:\n{IB}    software: {{env: {{NCCL_IB_DISABLE: '1', NCCL_DEBUG: INFO}}}}\n"
        finding = one(check(rig(node), select=("NET004",)), "NET004")
        assert finding.severity is Severity.WARN and "TCP sockets" in finding.message

    def test_zero_means_off(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "    software: {env: {NCCL_P2P_DISABLE: '0'}}\n"
        assert one(check(rig(node), select=("NET004",)), "NET004").severity is Severity.PASS


class TestPorts:
    def node(self, ports: str) -> str:
        return f"    network:\n{IB}    firewall: {{open_tcp_ports: {ports}}}\n"

    @pytest.mark.parametrize(
        ("ports", "launcher", "severity"),
        [
            ("[29500, '50000-51000']", "launcher: {kind: torchrun}\n", Severity.PASS),
            ("[22, '50000-51000']", "launcher: {kind: torchrun}\n", Severity.FAIL),  # 29500 closed
            ("[29500]", "launcher: {kind: torchrun}\n", Severity.WARN),  # no range for NCCL
            ("[29500, '50000-50098']", "launcher: {kind: torchrun}\n", Severity.WARN),  # 99 ports
            ("[29500, '50000-50099']", "launcher: {kind: torchrun}\n", Severity.PASS),  # 100 ports
            (
                "[29500, '50000-51000']",
                "launcher: {kind: torchrun, rdzv_backend: c10d}\n",
                Severity.FAIL,
            ),  # 29400
            ("[29400, '50000-51000']", "launcher: {kind: torchrun, rdzv_backend: c10d}\n", Severity.PASS),
            ("[1234, '50000-51000']", "launcher: {kind: deepspeed, master_port: 1234}\n", Severity.PASS),
        ],
    )
    def test_rendezvous(self, check, ports: str, launcher: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(self.node(ports)), workload(launcher=launcher), select=("NET005",)), "NET005")
        assert finding.severity is severity, finding.message

    def test_single_node_uses_loopback(self, check) -> None:  # type: ignore[no-untyped-def]
        report = check(rig(self.node("[22]"), count=1), workload("{dp: 8}"), select=("NET005",))
        assert one(report, "NET005").severity is Severity.PASS


class TestGpuDirectRdma:
    @pytest.mark.parametrize(
        ("gpus", "software", "severity"),
        [
            ("{model: H100 SXM, count: 8}", "{os: linux, driver: '535.104.05'}", Severity.PASS),
            ("{model: H100 SXM, count: 8}", "{os: linux, driver: '465.19.01'}", Severity.FAIL),  # before R470
            ("{model: RTX 4090, count: 8}", "{os: linux, driver: '550.54.15'}", Severity.FAIL),  # GeForce
            ("{model: RTX 6000 Ada, count: 4}", "{os: linux, driver: '550.54.15'}", Severity.PASS),
            ("{model: H100 PCIe, count: 2}", "{os: windows, driver: '551.61'}", Severity.FAIL),
        ],
    )
    def test_prerequisites(self, check, gpus: str, software: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        node = (
            "    network:\n      - {kind: infiniband, rate: ndr, gpudirect_rdma: true}\n"
            f"    software: {software}\n"
        )
        finding = one(check(rig(node, gpus=gpus), select=("NET006",)), "NET006")
        assert finding.severity is severity, finding.message


class TestSubnets:
    def test_disjoint_subnets_warn(self, check) -> None:  # type: ignore[no-untyped-def]
        a = "    network: [{kind: roce, gbps: 400, subnet: 10.0.1.0/24}]\n"
        b = (
            "  - name: m\n    gpus: {model: H100 SXM, count: 8}\n"
            "    network: [{kind: roce, gbps: 400, subnet: 10.0.2.0/24}]\n"
        )
        finding = one(check(rig(a, extra_nodes=b), select=("NET007",)), "NET007")
        assert finding.severity is Severity.WARN and finding.location.pointer == "/nodes/1/network"

    def test_shared_subnet_passes(self, check) -> None:  # type: ignore[no-untyped-def]
        a = "    network: [{kind: roce, gbps: 400, subnet: 10.0.1.0/24}]\n"
        b = (
            "  - name: m\n    gpus: {model: H100 SXM, count: 8}\n"
            "    network: [{kind: roce, gbps: 400, subnet: 10.0.1.0/24}, {kind: ethernet, subnet: 192.168.0.0/24, "
            "role: management}]\n"
        )
        assert one(check(rig(a, extra_nodes=b), select=("NET007",)), "NET007").severity is Severity.PASS


class TestTheLinksNcclUses:
    """Issue 47: the step-time model and NET001-NET003 time and judge the links NCCL uses between nodes
    (rigcheck.core.estimate.network.nccl_choice), as NCCL picks them: IB verbs on the RDMA ports
    NCCL_IB_HCA selects, else TCP sockets on the interfaces NCCL_SOCKET_IFNAME selects, whatever the
    rig calls them, spread over the fastest (NVIDIA/nccl src/plugin/net.cc, src/misc/socket.cc)."""

    PORTS = (
        "    network:\n"
        "      - {kind: ethernet, gbps: 100, count: 2, role: compute, interface: 'enp65s0f0,enp65s0f1'}\n"
        "      - {kind: ethernet, gbps: 1, count: 1, role: management, interface: eno1}\n"
    )

    def node(self, env: str) -> str:
        return self.PORTS + (f"    software: {{env: {{{env}}}}}\n" if env else "")

    def path(self, env: str) -> float:
        from tests.test_speed_model import on_rig

        network = on_rig(rig(self.node(env)), workload()).topology.network
        assert network is not None
        return network.busbw_gbps

    def test_the_management_port_named_is_the_path(self, check) -> None:  # type: ignore[no-untyped-def]
        """2 x 100 Gb/s x 0.6 (TCP) = 15 GB/s per node; eno1 alone: 1 Gb/s / 8 x 0.6 = 0.075 GB/s."""
        assert self.path("") == pytest.approx(15.0)
        assert self.path("NCCL_SOCKET_IFNAME: enp65s0f") == pytest.approx(15.0)
        assert self.path("NCCL_SOCKET_IFNAME: eno1") == pytest.approx(0.075)
        assert self.path("NCCL_SOCKET_IFNAME: '^eno'") == pytest.approx(15.0)
        report = check(rig(self.node("NCCL_SOCKET_IFNAME: eno1")), workload(), select=("NET002", "NET003"))
        net003 = one(report, "NET003")
        assert (
            net003.severity is Severity.FAIL
            and "management port" in net003.message
            and "100x" in net003.message
        )
        net002 = one(report, "NET002")
        assert net002.severity is Severity.FAIL and "1 Gb/s per node" in net002.message

    def test_the_data_ports_named_pass(self, check) -> None:  # type: ignore[no-untyped-def]
        report = check(rig(self.node("NCCL_SOCKET_IFNAME: enp65s0f")), workload(), select=("NET003",))
        assert one(report, "NET003").severity is Severity.PASS

    def test_rdma_first_and_its_hca_list(self) -> None:
        """8 x 400 Gb/s InfiniBand x 0.85 = 340 GB/s; NCCL_IB_HCA naming two HCAs: 85 GB/s; one that
        matches none: NCCL falls back to sockets (the 100 Gb/s port: 7.5 GB/s); NCCL_IB_DISABLE: the same."""
        from tests.test_speed_model import on_rig

        ports = (
            "    network:\n"
            "      - {kind: infiniband, rate: ndr, count: 8, role: compute, interface: "
            "'mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7'}\n"
            "      - {kind: ethernet, gbps: 100, count: 1, role: compute, interface: eth0}\n"
        )

        def busbw(env: str) -> float:
            node = ports + (f"    software: {{env: {{{env}}}}}\n" if env else "")
            network = on_rig(rig(node), workload()).topology.network
            assert network is not None
            return network.busbw_gbps

        assert busbw("") == pytest.approx(340.0)
        assert busbw("NCCL_IB_HCA: '=mlx5_0,mlx5_1'") == pytest.approx(340.0 / 8 * 2)
        assert busbw("NCCL_IB_HCA: mlx4") == pytest.approx(7.5)
        assert busbw("NCCL_IB_DISABLE: '1'") == pytest.approx(7.5)


def test_nccl_reads_caret_then_equals_once_each() -> None:
    """``^=a`` excludes exactly ``a``; ``=^a`` is the literal name ``^a`` (NVIDIA/nccl ncclOsFindInterfaces)."""
    assert not InterfaceList.parse("^=eth0").matches("eth0") and InterfaceList.parse("^=eth0").matches(
        "eth01"
    )
    assert InterfaceList.parse("=^eth0").matches("^eth0") and not InterfaceList.parse("=^eth0").matches(
        "eth0"
    )
