"""Issue 14: the false passes and false alarms an infrastructure engineer found in review, one test per
class, each with numbers worked by hand from the data the rule cites. Every test here failed on the
code before the fix (checked by running this file against that commit)."""

from __future__ import annotations

import math

import pytest

from rigcheck.core.engine.findings import Severity

from .test_cuda_rules import findings, one


def rig(node: str, *, site: str = "", name: str = "r") -> str:
    body = "\n".join("    " + line for line in node.strip().splitlines())
    return f"apiVersion: rigcheck/v1\nkind: Rig\nname: {name}\n{site}nodes:\n  - name: n\n{body}\n"


def workload(body: str) -> str:
    return f"apiVersion: rigcheck/v1\nkind: Workload\nname: w\n{body.strip()}\n"


TRAIN_8B_TP4 = workload(
    """
model: {preset: llama-3-8b}
task: full-finetune
precision: bf16-mixed
batch: {micro: 1, seq_len: 2048}
parallelism: {tp: 4}
"""
)


# -- false passes --------------------------------------------------------------------------------------


class TestPeerToPeerOnGeForce:
    """NVIDIA/nccl#1127: GeForce Ampere and Ada cards have no PCIe P2P with the stock driver."""

    FOUR_3090 = rig(
        "gpus: {model: RTX 3090, count: 4}\ngpu_interconnect: {kind: pcie}\npcie: {gen: 4, lanes_per_gpu: 16}"
    )

    def test_icx003_does_not_claim_p2p(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(self.FOUR_3090, select=("ICX003",)), "ICX003")
        assert finding.severity is Severity.WARN and "without PCIe peer-to-peer" in finding.message

    def test_tp_over_pcie_uses_the_host_bounce_bandwidth(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(self.FOUR_3090, TRAIN_8B_TP4, select=("ICX001",)), "ICX001")
        # PCIe 4.0 x16: 31.5 GB/s each way x 0.8 (bus efficiency) x 0.5 (no P2P) = 12.6 GB/s
        assert finding.evidence["busbw_gbps"] == pytest.approx(12.6)

    def test_an_nvlink_bridge_gives_p2p_between_its_two_cards(self, check) -> None:  # type: ignore[no-untyped-def]
        bridged = rig("gpus: {model: RTX 3090, count: 2}\ngpu_interconnect: {kind: nvlink-bridge}")
        finding = one(check(bridged, select=("ICX003",)), "ICX003")
        assert finding.severity is Severity.PASS and "NVLink bridge" in finding.message


class TestEightGpuServerPower:
    """DGX H100 User Guide: 10.2 kW maximum for 8 x 700 W GPUs and 2 x 350 W CPUs."""

    DGX = (
        "count: 2\ngpus: {model: H100 SXM, count: 8}\ngpu_interconnect: {kind: nvswitch}\n"
        "cpu: {cores: 112, sockets: 2, tdp_w: 700}\n"
        'psu: {watts: 3300, count: 6, redundancy: "4+2", efficiency: 80plus-titanium, circuit: feed}'
    )
    FEED = "site:\n  circuits: [{name: feed, volts: 415, amps: 32, phases: 3}]\n"

    def test_baseboard_overhead_brings_the_node_to_nvidias_rating(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(self.DGX, site=self.FEED), select=("PWR001",)), "PWR001")
        # 8 x 700 + 700 + 100 + 0.70 x 5,600 = 10,320 W (a fixed 100 W platform gave 6,400 W)
        assert finding.evidence["sustained_w"] == pytest.approx(10320)

    def test_two_nodes_do_not_fit_one_415v_32a_feed(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(self.DGX, site=self.FEED), select=("PWR005",)), "PWR005")
        # continuous limit 415 x 32 x sqrt(3) x 0.8 = 18,401 W; 2 x 10,320 W / 0.94 (Titanium at 50%) = 21,957 W
        assert finding.evidence["continuous_limit_w"] == round(415 * 32 * math.sqrt(3) * 0.8)
        assert finding.evidence["wall_w"] == pytest.approx(2 * 10320 / 0.94, rel=0.01)
        assert finding.severity is Severity.FAIL

    def test_max_power_is_input_power_not_divided_by_efficiency_again(self, check) -> None:  # type: ignore[no-untyped-def]
        node = (
            "gpus: {model: H100 SXM, count: 8}\nmax_power_w: 10200\n"
            "psu: {watts: 3300, count: 6, circuit: feed, efficiency: 80plus-titanium}"
        )
        site = "site:\n  circuits: [{name: feed, volts: 415, amps: 32, phases: 3}]\n"
        finding = one(check(rig(node, site=site), select=("PWR005",)), "PWR005")
        assert finding.evidence["wall_w"] == 10200  # not 10,200 / 0.94 = 10,851 W


class TestPsusAndConnectors:
    def test_each_unit_is_checked_when_it_feeds_gpus_alone(self, check) -> None:  # type: ignore[no-untyped-def]
        """WOPR (mov-axbx.com): seven 4090s, one 1,000 W unit per two cards, the fourth for GPU 7 + board."""
        node = (
            "gpus: {model: RTX 4090, count: 7}\ncpu: {cores: 64, tdp_w: 280}\npsu:\n"
            "  - {watts: 1000, count: 3, feeds_gpus: 2}\n  - {watts: 1000, count: 1}"
        )
        finding = one(check(rig(node), select=("PWR001",)), "PWR001")
        # the pooled sum is 3,530 W / 4,000 W = 88%; a GPU unit carries 2 x 450 = 900 W (90%), the last
        # 450 + 280 + 100 = 830 W
        assert finding.evidence["share"] == pytest.approx(0.9)
        assert sorted(u["load_w"] for u in finding.evidence["units"]) == [830, 900, 900, 900]

    def test_native_16pin_cables_are_counted(self, check) -> None:  # type: ignore[no-untyped-def]
        node = (
            "gpus: {model: RTX 4090, count: 2}\ncpu: {cores: 16, tdp_w: 125}\n"
            "psu: {watts: 1600, atx_version: '3.0', connectors: [12vhpwr]}"
        )
        found = findings(check(rig(node), select=("PWR003",)), "PWR003")
        assert found and all(f.severity is Severity.WARN for f in found)
        assert "1 native 16-pin cable(s)" in found[0].message and "2 of these card(s)" not in found[0].message
        assert "1 of these card(s) run on an adapter fed by 3 separate 8-pin" in found[0].message
        two = node.replace("[12vhpwr]", "[12vhpwr, 12vhpwr]")
        assert one(check(rig(two), select=("PWR003",)), "PWR003").severity is Severity.PASS

    def test_a_5090_has_4_percent_connector_margin(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "gpus: {model: RTX 5090}\npsu: {watts: 1200, atx_version: '3.1', connectors: [12v-2x6]}"
        finding = one(check(rig(node), select=("PWR003",)), "PWR003")
        # 575 W on one 600 W 12V-2x6 plug, no 75 W slot credit: (600 - 575) / 600 = 4.2%
        assert finding.evidence["budget_w"] == 600 and finding.evidence["margin"] == pytest.approx(
            0.042, abs=1e-3
        )
        assert finding.severity is Severity.WARN

    def test_atx2_below_one_and_a_half_times_fails_like_atx3(self, check) -> None:  # type: ignore[no-untyped-def]
        """The same rig with an ATX 3.0 unit fails; an ATX 2.x unit must not get the milder verdict."""
        node = (
            "gpus: {model: RTX 4090, count: 2}\ncpu: {cores: 16, tdp_w: 125}\n"
            "psu: {watts: 1000, atx_version: '{v}'{c}}"
        )
        atx3 = node.replace("{v}", "3.0").replace("{c}", ", connectors: [12vhpwr, 12vhpwr]")
        atx2 = node.replace("{v}", "2.52").replace("{c}", "")
        # ATX 3.0: 2 x 450 x 2.2 + 125 = 2,105 W > 2 x 1,000 W; ATX 2.52: 1,000 W < 1.5 x 1,125 W = 1,688 W
        assert one(check(rig(atx3), select=("PWR002",)), "PWR002").severity is Severity.FAIL
        assert one(check(rig(atx2), select=("PWR002",)), "PWR002").severity is Severity.FAIL

    def test_rackmount_case_with_retail_atx_units_is_checked(self, check) -> None:  # type: ignore[no-untyped-def]
        node = (
            "gpus: {model: RTX 3090, count: 4}\ncpu: {cores: 32, tdp_w: 280}\n"
            "psu: {watts: 1600, atx_version: '2.52'}\nchassis: {form_factor: rackmount}"
        )
        finding = one(check(rig(node), select=("PWR002",)), "PWR002")
        assert finding.severity is Severity.FAIL  # 1,600 W < 1.5 x (1,400 + 280 + 100) = 2,670 W


class TestInventedTopology:
    def test_net001_does_not_join_nodes_the_rig_does_not_have(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "gpus: {model: RTX 4090, count: 2}\nnetwork: [{kind: ethernet, gbps: 1}]"
        job = workload(
            "model: {preset: llama-3-8b}\ntask: lora\nbatch: {micro: 1, seq_len: 2048}\nparallelism: {dp: 4}"
        )
        finding = one(check(rig(node), job, select=("NET001",)), "NET001")
        assert finding.severity is Severity.SKIP and "the rig has 1" in finding.message


class TestSilentOptimism:
    def test_a_cpu_without_tdp_is_not_zero_watts(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "gpus: {model: RTX 4090, count: 2}\ncpu: {cores: 16}\npsu: {watts: 1200}"
        finding = one(check(rig(node), select=("PWR001",)), "PWR001")
        # 900 + 100 = 1,000 W (83%) before the CPU; with up to 350 W it reaches 113%: cannot be judged
        assert finding.severity is Severity.SKIP and "cpu.tdp_w" in finding.fix

    def test_a_partner_card_is_not_given_the_founders_edition_width(self, check) -> None:  # type: ignore[no-untyped-def]
        node = (
            "gpus: {model: RTX 4090, count: 2, length_mm: 336}\n"
            "chassis: {form_factor: mid-tower, expansion_slots: 7}"
        )
        finding = one(check(rig(node), select=("PLT006",)), "PLT006")
        assert (
            finding.severity is Severity.SKIP and "336 mm card is not the 304 mm reference" in finding.message
        )
        given = node.replace("length_mm: 336", "length_mm: 336, slots: 3.5")
        assert one(check(rig(given), select=("PLT006",)), "PLT006").severity is Severity.FAIL  # 2 x 4 > 7

    def test_host_ram_fails_only_when_the_workload_stages_state_there(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "gpus: {model: A100 SXM 80GB, count: 8}\nmemory_gib: 256"  # 0.4x of 640 GiB
        base = "model: {preset: llama-3-8b}\ntask: full-finetune\nbatch: {micro: 1, seq_len: 2048}\n"
        plain = workload(base + "parallelism: {dp: 8, zero: 2}")
        offload = workload(base + "parallelism: {dp: 8, zero: 3, offload: cpu}")
        assert one(check(rig(node), plain, select=("PLT001",)), "PLT001").severity is Severity.WARN
        staged = one(check(rig(node), offload, select=("PLT001",)), "PLT001")
        assert staged.severity is Severity.FAIL and "offloads optimizer states" in staged.message


class TestCuda:
    @staticmethod
    def cuda(check, gpu: str, software: str, code: str):  # type: ignore[no-untyped-def]
        return one(check(rig(f"gpus: {{model: {gpu}}}\nsoftware: {software}"), select=(code,)), code)

    def test_a_wheel_whose_cubins_run_is_not_failed_by_the_toolkit_rule(self, check) -> None:  # type: ignore[no-untyped-def]
        # torch 2.0.1+cu117 carries sm_86 SASS; it runs on an RTX 4090 (sm_89), though CUDA 11.7 predates Ada
        finding = self.cuda(
            check, "RTX 4090", "{os: linux, driver: '535.104.05', torch: '2.0.1+cu117'}", "CUDA003"
        )
        assert finding.severity is Severity.SKIP and "CUDA004" in finding.message
        kernels = self.cuda(
            check, "RTX 4090", "{os: linux, driver: '535.104.05', torch: '2.0.1+cu117'}", "CUDA004"
        )
        assert kernels.severity is Severity.PASS

    def test_a_driver_that_runs_12_2_runs_every_12_2_update(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = self.cuda(
            check, "A100 SXM 80GB", "{os: linux, driver: '535.54.03', cuda_runtime: '12.2.2'}", "CUDA002"
        )
        assert (
            finding.severity is Severity.PASS
        )  # 535.104.05 is only the driver 12.2 Update 2 was bundled with

    def test_a_cuda_wheel_on_an_amd_gpu_fails(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = self.cuda(check, "MI300X", "{os: linux, torch: '2.4.0+cu121'}", "CUDA002")
        assert finding.severity is Severity.FAIL and "no CUDA driver" in finding.message

    def test_b200_needs_the_gpu_operators_driver(self, check) -> None:  # type: ignore[no-untyped-def]
        # NVIDIA/cloud-native-docs#184: HGX B200 requires 570.133.20 or later (the 12.8 GA driver is 570.26)
        old = self.cuda(check, "B200", "{os: linux, driver: '570.124.06'}", "CUDA001")
        new = self.cuda(check, "B200", "{os: linux, driver: '570.133.20'}", "CUDA001")
        assert old.severity is Severity.FAIL and new.severity is Severity.PASS

    def test_cuda_11_forward_compatibility_packages_exist(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '470.82.01', cuda_runtime: '11.8', cuda_compat: cuda-compat-11-8}"
        finding = self.cuda(check, "A100 SXM 80GB", software, "CUDA002")
        assert (
            finding.severity is Severity.PASS
            and "forward-compatibility package cuda-compat-11-8" in finding.message
        )

    def test_torch_1_11_had_cu113_and_cu115_wheels(self, check) -> None:  # type: ignore[no-untyped-def]
        for build in ("1.11.0+cu113", "1.11.0+cu115"):
            finding = self.cuda(check, "A100 SXM 80GB", f"{{os: linux, torch: '{build}'}}", "CUDA004")
            assert finding.severity is Severity.PASS, finding.message  # sm_80 SASS in both


# -- false alarms --------------------------------------------------------------------------------------


class TestFalseAlarms:
    def test_g5_xlarge_ram_below_vram_warns_for_a_rig_alone(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "instance: aws g5.xlarge\ngpus: {model: A10G}\ncpu: {cores: 2, threads: 4}\nmemory_gib: 16"
        finding = one(check(rig(node), select=("PLT001",)), "PLT001")
        assert finding.severity is Severity.WARN and "g5.2xlarge (32 GiB RAM" in finding.fix

    def test_rtx4090_on_nvidias_recommended_850w_atx3_psu(self, check) -> None:  # type: ignore[no-untyped-def]
        node = (
            "gpus: {model: RTX 4090}\ncpu: {cores: 16, tdp_w: 125, boost_w: 253}\n"
            "psu: {watts: 850, atx_version: '3.0', connectors: [12vhpwr]}"
        )
        report = check(rig(node), select=("PWR001", "PWR002"))
        # sustained 450 + 125 (base power, not PL2) + 100 = 675 W = 79%; spikes 2.2 x 450 + 253 = 1,243 W <= 1,700 W
        assert one(report, "PWR001").severity is Severity.PASS
        assert one(report, "PWR001").evidence["sustained_w"] == 675
        assert one(report, "PWR002").evidence["peak_w"] == pytest.approx(1243)

    def test_a_vendor_validated_workstation_passes_to_its_rating(self, check) -> None:  # type: ignore[no-untyped-def]
        # Lenovo ThinkStation P620: 4 x RTX A4000 + 280 W Threadripper PRO on its 1,000 W PSU = 940 W (94%)
        node = (
            "gpus: {model: RTX A4000, count: 4}\ncpu: {cores: 32, tdp_w: 280}\npsu: {watts: 1000}\n"
            "chassis: {form_factor: workstation}"
        )
        assert one(check(rig(node), select=("PWR001",)), "PWR001").severity is Severity.PASS

    def test_cpu_reserve_scales_with_the_node_and_names_the_next_instance(self, check) -> None:  # type: ignore[no-untyped-def]
        node = "instance: aws g5.xlarge\ngpus: {model: A10G}\ncpu: {cores: 2, threads: 4}\nmemory_gib: 16"
        finding = one(check(rig(node), select=("PLT002",)), "PLT002")
        # 1 x (2 + 1) + max(1, ceil(0.5 x 1)) = 4 cores (a fixed reserve of 4 asked for 7)
        assert finding.evidence["required_cores"] == 4
        assert "move to g5.2xlarge (8 vCPUs = 4 cores" in finding.fix

    def test_tp4_serving_over_l40s_pcie_passes(self, check) -> None:  # type: ignore[no-untyped-def]
        node = (
            "gpus: {model: L40S, count: 4}\ngpu_interconnect: {kind: pcie}\npcie: {gen: 4, lanes_per_gpu: 16}"
        )
        serve = workload(
            "model: {preset: llama-3-70b}\ntask: inference\nprecision: fp8\nparallelism: {tp: 4}\n"
            "inference: {engine: vllm, concurrency: 16, context_len: 4096}"
        )
        finding = one(check(rig(node), serve, select=("ICX001",)), "ICX001")
        assert finding.severity is Severity.PASS and finding.evidence["task"] == "inference"
        # 160 all-reduces (2 per layer of Llama-3-70B's 80) of 16 x 8,192 x 2 B = 262 kB each
        assert "160 all-reduces of 262.1 kB" in finding.message

    def test_forward_compatibility_on_a_datacenter_gpu_is_an_informational_pass(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '535.104.05', cuda_runtime: '12.8', cuda_compat: cuda-compat-12-8}"
        finding = TestCuda.cuda(check, "H100 SXM", software, "CUDA002")
        assert finding.severity is Severity.PASS and "NGC containers" in finding.message
