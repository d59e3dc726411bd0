"""The speed model (issue 13): collectives, topology, step time, decoding and the GPU's speed facts, against
numbers worked by hand.

Every expected value below is arithmetic on the catalog (specs/hardware/gpus.yaml, interconnects.yaml), the preset
shapes (specs/models/presets.yaml, i.e. the models' config.json) and the facts of specs/rules/throughput.yaml and
interconnect.yaml, following the formulas the modules' docstrings state (collectives.py: nccl-tests PERFORMANCE.md;
topology.py, links.py, steptime.py, decoding.py, gpu_speed.py). No expected value is computed by the code under
test; ``test_the_numbers_these_tests_use`` pins the catalog and fact values the arithmetic is written with.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import pytest

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.engine.context import CheckContext
from rigcheck.core.engine.findings import Severity
from rigcheck.core.engine.rig_estimate import RigEstimate, estimate_on
from rigcheck.core.estimate.architecture import Architecture, architecture_from_mapping, find_preset
from rigcheck.core.estimate.collectives import Collective
from rigcheck.core.estimate.decoding import expert_share_read
from rigcheck.core.estimate.estimate import estimate_workload
from rigcheck.core.estimate.gpu_speed import clock_share, speed_facts
from rigcheck.core.estimate.memory import MemoryInputs, estimate_memory
from rigcheck.core.estimate.steptime import collectives, exposed_seconds, hfu_for, step_time
from rigcheck.core.estimate.topology import Path, Topology, topology_of
from rigcheck.core.spec.documents import parse_spec

THROUGHPUT = load_rule_facts("throughput")
INTERCONNECT = load_rule_facts("interconnect")

# -- numbers from the catalog (specs/hardware/gpus.yaml, interconnects.yaml) ------------------------------------
H100_BF16 = 989.4  # h100-sxm bf16_dense_tflops (dense)
H100_HBM = 3350  # h100-sxm memory_bandwidth_gbps
H100_NVLINK = 900  # h100-sxm nvlink total_bidirectional_gbps
RTX4090_BF16 = 165.2  # rtx-4090 bf16_dense_tflops
RTX4090_FP8 = 330.3  # rtx-4090 fp8_dense_tflops
RTX4090_GDDR = 1008  # rtx-4090 memory_bandwidth_gbps
RTX4090_TDP = 450  # rtx-4090 tdp_w
RTX3090_BF16 = 71  # rtx-3090 bf16_dense_tflops
RTX3090_GDDR = 936  # rtx-3090 memory_bandwidth_gbps
RTX3090_TDP = 350  # rtx-3090 tdp_w
PCIE4_X16 = 31.5  # interconnects.yaml pcie_generations gen 4 x16_unidirectional_gbps (GB/s each way)
AMPERE_BRIDGE = 112.5  # interconnects.yaml nvlink_bridges ampere-geforce-workstation-2way bidirectional_gbps

# -- facts (specs/rules/*.yaml) -----------------------------------------------------------------------------
BUS_EFFICIENCY = 0.8  # interconnect.yaml bus_bandwidth.efficiency: NCCL busbw ~ 80% of the per-direction rate
NO_P2P = 0.5  # interconnect.yaml bus_bandwidth.no_p2p_factor: through host memory
TCP = 0.6  # throughput.yaml communication.network_efficiency.tcp
RDMA = 0.85  # throughput.yaml communication.network_efficiency.rdma
LATENCY_NVLINK, LATENCY_PCIE, LATENCY_RDMA, LATENCY_TCP = (
    15e-6,
    40e-6,
    30e-6,
    50e-6,
)  # communication.latency_us
OVERLAP, OVERLAP_HIGH = 0.8, 1.0  # communication.overlap default / high
HFU_HIGH = 1.2  # training_hfu.range_factors.high (the optimistic end)
Q4_K_M = 4.8944  # memory.yaml quantization_bits.q4_k_m: bits per weight of the whole GGUF file

# -- parameter counts worked by hand from the preset shapes (q, k, v, o; gate, up, down; two RMSNorm vectors) --
# Llama-3-8B: hidden 4096, 32 layers, 32 heads x 128, 8 KV heads (k, v 1024 wide), ffn 14336, vocab 128256, untied.
L3_8B_LINEAR_PER_LAYER = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # 218,103,808
L3_8B_LAYER = L3_8B_LINEAR_PER_LAYER + 2 * 4096  # + input and post-attention norms: 218,112,000
L3_8B_PARAMS = (
    32 * L3_8B_LAYER + 128256 * 4096 + 128256 * 4096 + 4096
)  # + embeddings, untied head, final norm
L3_8B_MATMUL = 32 * L3_8B_LAYER + 128256 * 4096  # the blocks and the LM head (throughput.py matmul_params)
# Llama-3-70B: hidden 8192, 80 layers, 64 heads x 128, 8 KV heads (1024 wide), ffn 28672, vocab 128256, untied.
L3_70B_LAYER = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192  # 855,654,400
L3_70B_EMBEDDING = 128256 * 8192  # as large as the untied head
L3_70B_PARAMS = 80 * L3_70B_LAYER + 2 * L3_70B_EMBEDDING + 8192  # 70,553,706,496
L3_70B_MATMUL = 80 * L3_70B_LAYER + L3_70B_EMBEDDING
# Mixtral-8x7B: hidden 4096, 32 layers, 8 experts of ffn 14336 (SwiGLU: 3 matrices), top-2, vocab 32000, untied.
MIXTRAL_EXPERT = 3 * 4096 * 14336  # one expert's gate, up and down: 176,160,768
MIXTRAL_LAYER = (
    2 * 4096 * 4096 + 2 * 4096 * 1024 + 8 * MIXTRAL_EXPERT + 4096 * 8 + 2 * 4096
)  # + router + norms
MIXTRAL_PARAMS = 32 * MIXTRAL_LAYER + 2 * 32000 * 4096 + 4096  # 46,702,792,704
MIXTRAL_EXPERTS = 32 * 8 * MIXTRAL_EXPERT  # every layer's experts: 45,097,156,608

GB = 1e9


def preset(name: str) -> Architecture:
    return architecture_from_mapping(find_preset(name), name=name)  # type: ignore[arg-type]


@functools.cache
def _catalog() -> Any:
    from rigcheck.core.catalog.catalog import Catalog, load_catalog_file
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    return catalog


def rig(gpus: str, *, count: int = 1, extra: str = "") -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n"
        f"    count: {count}\n    gpus: {gpus}\n{extra}"
    )


def workload(model: str, task: str, extra: str) -> str:
    return (
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {{preset: {model}}}\ntask: {task}\n{extra}"
    )


def context(rig_yaml: str, workload_yaml: str) -> CheckContext:
    return CheckContext(
        parse_spec(rig_yaml, "rig.yaml"), parse_spec(workload_yaml, "workload.yaml"), _catalog()
    )


def on_rig(rig_yaml: str, workload_yaml: str) -> RigEstimate:
    ctx = context(rig_yaml, workload_yaml)
    node = ctx.nodes[0]
    return estimate_on(ctx, node, node.gpus[0])


def findings(report: Any, code: str) -> list[Any]:
    return [finding for finding in report.findings if finding.code == code]


def test_the_numbers_these_tests_use() -> None:
    """The catalog and fact values the hand arithmetic below is written with."""
    catalog = _catalog()
    h100, rtx4090, rtx3090 = (catalog.lookup(name) for name in ("h100-sxm", "rtx-4090", "rtx-3090"))
    assert (h100.bf16_dense_tflops, h100.memory_bandwidth_gbps) == (H100_BF16, H100_HBM)
    assert h100.nvlink.total_bidirectional_gbps == H100_NVLINK and h100.architecture == "Hopper"
    assert (rtx4090.bf16_dense_tflops, rtx4090.fp8_dense_tflops) == (RTX4090_BF16, RTX4090_FP8)
    assert (rtx4090.memory_bandwidth_gbps, rtx4090.tdp_w, rtx4090.p2p_stock_driver) == (
        RTX4090_GDDR,
        450,
        False,
    )
    assert "Ada" in rtx4090.architecture
    assert (rtx3090.bf16_dense_tflops, rtx3090.memory_bandwidth_gbps, rtx3090.tdp_w) == (71, 936, 350)
    assert rtx3090.architecture == "Ampere"
    from rigcheck.core.estimate.links import bridge_gbps, pcie_x16_gbps

    assert (pcie_x16_gbps(4), bridge_gbps("rtx-3090")) == (PCIE4_X16, AMPERE_BRIDGE)
    bus = INTERCONNECT["bus_bandwidth"]
    assert (bus["efficiency"], bus["no_p2p_factor"]) == (BUS_EFFICIENCY, NO_P2P)
    comm = THROUGHPUT["communication"]
    assert comm["network_efficiency"]["tcp"] == TCP and comm["network_efficiency"]["rdma"] == RDMA
    assert dict(comm["latency_us"]) == {"nvlink": 15, "pcie": 40, "rdma": 30, "tcp": 50}
    assert (comm["overlap"]["default"], comm["overlap"]["high"]) == (OVERLAP, OVERLAP_HIGH)
    assert THROUGHPUT["training_hfu"]["range_factors"]["high"] == HFU_HIGH
    assert load_rule_facts("memory")["quantization_bits"]["q4_k_m"] == Q4_K_M
    # the hand counts agree with the architecture's own (and with the published sizes)
    assert preset("llama-3-8b").params == L3_8B_PARAMS == 8_030_261_248
    assert preset("llama-3-70b").params == L3_70B_PARAMS == 70_553_706_496
    assert preset("mixtral-8x7b").params == MIXTRAL_PARAMS == 46_702_792_704


# -- collectives and paths ------------------------------------------------------------------------------------

# Two 8 x H100 nodes: NVSwitch inside (900 / 2 x 0.8 = 360 GB/s), one 100 Gb/s Ethernet port between (TCP).
TWO_H100_NODES = Topology(
    8, 2, Path(H100_NVLINK / 2 * BUS_EFFICIENCY, 15.0, "nvswitch"), Path(100 / 8 * TCP, 50.0, "100 GbE", True)
)


def fsdp_inputs(grad_accum: int) -> MemoryInputs:
    return MemoryInputs(
        preset("llama-3-8b"),
        precision="bf16-mixed",
        micro_batch=2,
        seq_len=4096,
        grad_accum=grad_accum,
        dp=16,
        fsdp="full_shard",
        framework="torchtitan",
    )


def test_fsdp_full_shard_moves_three_times_the_16_bit_model_per_micro_batch() -> None:
    """ZeRO-3 / FSDP full_shard: an all-gather of the 16-bit parameters in the forward, another in the backward and
    a reduce-scatter of the (sharded, hence 16-bit) gradients, each (n - 1) / n x S per rank, per micro-batch."""
    items = collectives(fsdp_inputs(1), TWO_H100_NODES)
    assert [(item.kind, item.ranks, item.calls) for item in items] == [
        ("all-gather", 16, 1),
        ("all-gather", 16, 1),
        ("reduce-scatter", 16, 1),
    ]
    assert [item.bytes_per_call for item in items] == [2 * L3_8B_PARAMS] * 3  # 16.06 GB each
    per_micro_batch = 3 * 15 / 16 * 2 * L3_8B_PARAMS  # 45.17 GB per GPU
    assert sum(item.bytes_per_gpu for item in items) == pytest.approx(per_micro_batch, rel=1e-12)
    # 16 ranks on 8-GPU nodes: the ring crosses the nodes, at the network's 100 / 8 x 0.6 = 7.5 GB/s
    assert all(item.inter_node and item.busbw_gbps == pytest.approx(7.5) for item in items)
    doubled = collectives(fsdp_inputs(2), TWO_H100_NODES)
    assert [item.calls for item in doubled] == [2, 2, 2]
    assert sum(item.bytes_per_gpu for item in doubled) == pytest.approx(2 * per_micro_batch, rel=1e-12)


def test_collective_time_is_the_nccl_tests_bandwidth_term_plus_latency() -> None:
    S = 1e9
    for kind, factor in (("all-reduce", 2 * 7 / 8), ("all-gather", 7 / 8), ("reduce-scatter", 7 / 8)):
        item = Collective(kind, 8, S, 3, 100.0, 20.0, "x", "y", True)
        assert item.factor == pytest.approx(factor)
        assert item.seconds == pytest.approx(3 * (factor * S / 100e9 + 20e-6), rel=1e-12)
        assert item.bytes_per_gpu == pytest.approx(3 * factor * S)
    assert Collective("send", 2, S, 1, 50.0, 10.0, "x", "y", False).seconds == pytest.approx(S / 50e9 + 10e-6)
    assert Collective("all-reduce", 1, S, 1, 50.0, 10.0, "x", "y", False).seconds == 0.0  # one rank: nothing


def two_gpu_path(gpus: str, extra: str = "") -> Path:
    ctx = context(rig(gpus, extra=extra), workload("llama-2-7b", "full_finetune", "parallelism: {dp: 2}\n"))
    node = ctx.nodes[0]
    return topology_of(node, node.gpus[0], THROUGHPUT["communication"], INTERCONNECT).path(2)


def test_ring_all_reduce_over_pcie_without_p2p_against_an_nvlink_bridge() -> None:
    """All-reducing a 7B model's bf16 gradients (S = 7e9 x 2 B) between two GPUs: t = 2 (n - 1) / n x S / busbw
    + latency, n = 2."""
    S = 7e9 * 2
    pcie = two_gpu_path("{model: RTX 4090, count: 2}")
    busbw_pcie = (
        PCIE4_X16 * 16 / 16 * BUS_EFFICIENCY * NO_P2P
    )  # 31.5 GB/s x16 x 0.8, halved without P2P = 12.6
    assert pcie.busbw_gbps == pytest.approx(busbw_pcie) and pcie.busbw_gbps == pytest.approx(12.6)
    bridge = two_gpu_path("{model: RTX 3090, count: 2}", "    gpu_interconnect: {kind: nvlink-bridge}\n")
    busbw_bridge = AMPERE_BRIDGE / 2 * BUS_EFFICIENCY  # 112.5 GB/s both ways / 2 x 0.8 = 45
    assert bridge.busbw_gbps == pytest.approx(busbw_bridge) and bridge.busbw_gbps == pytest.approx(45.0)

    def all_reduce(path: Path) -> float:
        return Collective("all-reduce", 2, S, 1, path.busbw_gbps, path.latency_us, "", "", True).seconds

    t_pcie = 2 * (2 - 1) / 2 * S / (busbw_pcie * GB) + LATENCY_PCIE  # 1.11115 s
    # the 2-GPU bridge is not NVLink-class in links.py, so topology_of gives it the PCIe floor (40 us); the
    # latency is 1e-4 of the time either way
    t_bridge = 2 * (2 - 1) / 2 * S / (busbw_bridge * GB) + LATENCY_PCIE  # 0.31115 s
    assert all_reduce(pcie) == pytest.approx(t_pcie, rel=1e-9)
    assert all_reduce(bridge) == pytest.approx(t_bridge, rel=1e-4)
    assert all_reduce(pcie) / all_reduce(bridge) == pytest.approx(t_pcie / t_bridge, rel=1e-4)  # 3.571
    assert t_pcie / t_bridge == pytest.approx(45 / 12.6, rel=1e-3)  # the ratio of the bus bandwidths


def test_topology_network_paths_and_their_share_per_group() -> None:
    """Across nodes: ports x line rate / 8 x the transport's efficiency, shared by the groups of a node."""
    nodes = rig(
        "{model: H100 SXM, count: 8}",
        count=2,
        extra="    gpu_interconnect: {kind: nvswitch}\n    network:\n"
        "      - {kind: infiniband, rate: ndr, count: 8, role: compute}\n"
        "      - {kind: ethernet, gbps: 10, role: management}\n",  # not for GPU traffic
    )
    ctx = context(nodes, workload("llama-3-8b", "full_finetune", "parallelism: {dp: 16}\n"))
    node = ctx.nodes[0]
    topology = topology_of(node, node.gpus[0], THROUGHPUT["communication"], INTERCONNECT)
    assert topology.intra.busbw_gbps == pytest.approx(H100_NVLINK / 2 * BUS_EFFICIENCY)  # 360 GB/s
    assert topology.intra.latency_us == 15
    network = 8 * 400 / 8 * RDMA  # 8 NDR ports (400 Gb/s each) with GPUDirect RDMA: 340 GB/s per node
    assert topology.network is not None
    assert topology.network.busbw_gbps == pytest.approx(network) and topology.network.latency_us == 30
    assert topology.path(8).busbw_gbps == pytest.approx(360)  # one node: NVSwitch
    assert topology.path(16).busbw_gbps == pytest.approx(340)  # min(360, 340 x 8/8)
    # tp 4 innermost, dp groups of 4 ranks 4 apart: 2 members per node, the NICs shared by 4 such groups
    assert topology.path(4, 4).busbw_gbps == pytest.approx(network * 2 / 8)  # 85 GB/s


# -- the 2-node 100 GbE FSDP job ------------------------------------------------------------------------------

RIG_2X8_H100_100GBE = rig(
    "{model: H100 SXM, count: 8}",
    count=2,
    extra="    gpu_interconnect: {kind: nvswitch}\n    network:\n"
    "      - {kind: ethernet, gbps: 100, count: 1, role: compute}\n",
)
FSDP_8B_JOB = workload(
    "llama-3-8b",
    "full_finetune",
    "precision: bf16\nframework: torchtitan\nbatch: {micro: 2, seq_len: 4096}\n"
    "parallelism: {dp: 16, fsdp: full_shard}\ndata: {tokens: 1.0e9}\nrun: {hours: 12}\n",
)

# Worked by hand:
TOKENS_PER_STEP = 2 * 4096 * 16  # micro x seq_len x dp (grad_accum 1): 131,072
FLOPS_PER_TOKEN = 6 * L3_8B_MATMUL + 12 * 32 * 4096 * 4096  # 6 P + 12 L q s (no recomputation): 51.47 GFLOP
HFU = 0.62 * 0.75  # training_hfu: torchtitan 0.62 x Hopper 0.75
COMPUTE = TOKENS_PER_STEP * FLOPS_PER_TOKEN / (16 * H100_BF16 * 1e12 * HFU)  # 0.9165 s
ONE_COLLECTIVE = (
    15 / 16 * 2 * L3_8B_PARAMS / (100 / 8 * TCP * GB) + LATENCY_TCP
)  # 16.06 GB at 7.5 GB/s: 2.0076 s
COMM = 3 * ONE_COLLECTIVE  # 6.0228 s
# FSDP's collectives are made every micro-batch: they hide in all of the compute, up to the overlap share
EXPOSED = COMM - OVERLAP * COMPUTE  # 5.2896 s
STEP = COMPUTE + EXPOSED  # 6.2061 s


def test_fsdp_over_100_gbe_step_time_by_hand() -> None:
    estimate = on_rig(RIG_2X8_H100_100GBE, FSDP_8B_JOB)
    assert estimate.topology.network is not None
    assert estimate.topology.network.busbw_gbps == pytest.approx(7.5)  # 1 port x 100 Gb/s / 8 x 0.6 (TCP)
    step = estimate.estimate.training.step  # type: ignore[union-attr]
    assert step.tokens_per_step == TOKENS_PER_STEP
    assert step.flops.executed == pytest.approx(FLOPS_PER_TOKEN, rel=1e-9)
    assert step.hfu.default == pytest.approx(HFU)
    assert step.compute_seconds == pytest.approx(COMPUTE, rel=1e-6)
    assert sum(item.seconds for item in step.collectives) == pytest.approx(COMM, rel=1e-6)
    assert step.exposed[0] == pytest.approx(EXPOSED, rel=1e-3)
    assert step.steps[0] == pytest.approx(STEP, rel=0.01)
    assert step.binds.startswith("communication")


def test_fsdp_over_100_gbe_fails_bw003_and_net002(check) -> None:  # type: ignore[no-untyped-def]
    report = check(RIG_2X8_H100_100GBE, FSDP_8B_JOB, select=("BW003", "NET002"))
    [bw003] = findings(report, "BW003")
    assert bw003.severity is Severity.FAIL
    assert bw003.evidence["binds"].startswith("communication") and "bound by communication" in bw003.message
    assert bw003.evidence["step_seconds"]["default"] == pytest.approx(STEP, rel=0.01)
    hours = 1e9 / (TOKENS_PER_STEP / STEP) / 3600  # 13.15 h at the default efficiencies
    assert bw003.evidence["run_hours"]["default"] == pytest.approx(hours, rel=0.01)
    # the optimistic end (HFU x 1.2, all of the compute hides communication) still misses 12 h
    best_compute = COMPUTE / HFU_HIGH
    best_step = best_compute + max(0.0, COMM - OVERLAP_HIGH * best_compute)  # = COMM: 6.023 s
    best_hours = 1e9 / (TOKENS_PER_STEP / best_step) / 3600  # 12.76 h
    assert best_hours > 12
    assert bw003.evidence["run_hours"]["low"] == pytest.approx(best_hours, abs=0.01)
    [net002] = findings(report, "NET002")
    assert net002.severity is Severity.FAIL
    assert net002.evidence["share"] == pytest.approx(EXPOSED / COMPUTE, abs=1e-3)  # 5.77
    assert f"{3 * 15 / 16 * 2 * L3_8B_PARAMS / GB:.2f} GB per GPU per step" in net002.message  # 45.17


def test_pipeline_bubble_is_p_minus_1_over_m_of_the_compute() -> None:
    """1F1B: a bubble of (p - 1) / m; without a topology nothing is communicated."""
    inputs = MemoryInputs(
        preset("llama-3-8b"), precision="bf16-mixed", micro_batch=1, seq_len=4096, pp=2, grad_accum=4
    )
    step = step_time(
        inputs,
        matmul=L3_8B_MATMUL,
        peak_tflops=H100_BF16,
        facts=THROUGHPUT,
        topology=None,
        architecture="Hopper",
    )
    hfu = 0.45 * 0.75  # no framework named: training_hfu default 0.45 x Hopper 0.75
    compute = 4 * 4096 * FLOPS_PER_TOKEN / (2 * H100_BF16 * 1e12 * hfu)
    assert step.compute_seconds == pytest.approx(compute, rel=1e-9)
    assert step.bubble_seconds == pytest.approx(compute * (2 - 1) / 4, rel=1e-9)
    assert step.steps[0] == pytest.approx(compute * 1.25, rel=1e-9)


# -- efficiencies and the GPU's speed facts --------------------------------------------------------------------


def test_hfu_by_framework_generation_and_precision() -> None:
    foundry_a100 = hfu_for("llm-foundry", THROUGHPUT, architecture="Ampere", precision="bf16-mixed")
    assert foundry_a100.default == pytest.approx(0.66)  # llm-foundry 0.66 x Ampere 1.0
    assert foundry_a100.low == pytest.approx(0.66 * 0.70) and foundry_a100.high == pytest.approx(0.66 * 1.20)
    foundry_h100 = hfu_for("llm-foundry", THROUGHPUT, architecture="Hopper", precision="bf16-mixed")
    assert foundry_h100.default == pytest.approx(0.66 * 0.75)  # x Hopper 0.75
    megatron_fp8 = hfu_for("megatron", THROUGHPUT, architecture="Hopper", precision="fp8-mixed")
    assert megatron_fp8.default == pytest.approx(0.67 * 0.75 * 0.8)  # x fp8 0.8
    assert hfu_for(None, THROUGHPUT, architecture="Ada Lovelace").default == pytest.approx(
        0.45
    )  # default, Ada 1.0
    assert hfu_for("megatron", THROUGHPUT, architecture="Ampere").high == pytest.approx(
        0.67 * 1.2
    )  # under 0.9


def gpu_view(gpus: str) -> Any:
    ctx = context(rig(gpus), workload("llama-2-7b", "full_finetune", ""))
    return ctx.nodes[0].gpus[0]


def test_power_limit_scales_tflops_by_the_clock_curve_not_bandwidth() -> None:
    ada, notes = speed_facts(gpu_view("{model: RTX 4090, count: 1, power_limit_w: 315}"), THROUGHPUT)
    # 315 / 450 W = 0.7 of the board power: the Ada curve's point (0.7, 0.956)
    assert ada.bf16_dense_tflops == pytest.approx(RTX4090_BF16 * 0.956)  # 157.9
    assert ada.fp8_dense_tflops == pytest.approx(RTX4090_FP8 * 0.956)
    assert ada.memory_bandwidth_gbps == RTX4090_GDDR  # memory clocks do not drop
    assert any("power limit 315 W of 450 W" in note for note in notes)
    ampere, _ = speed_facts(gpu_view("{model: RTX 3090, count: 1, power_limit_w: 280}"), THROUGHPUT)
    # 280 / 350 W = 0.8: the Ampere curve's point (0.8, 0.95), Puget's "over 95%"
    assert ampere.bf16_dense_tflops == pytest.approx(RTX3090_BF16 * 0.95)  # 67.45
    assert ampere.memory_bandwidth_gbps == RTX3090_GDDR
    stock, none = speed_facts(gpu_view("{model: RTX 3090, count: 1, power_limit_w: 350}"), THROUGHPUT)
    assert (stock.bf16_dense_tflops, none) == (RTX3090_BF16, [])  # at the board power nothing changes
    measured, _ = speed_facts(gpu_view("{model: RTX 4090, count: 1, memory_bandwidth_gbps: 900}"), THROUGHPUT)
    assert (measured.memory_bandwidth_gbps, measured.bf16_dense_tflops) == (900, RTX4090_BF16)
    # between the points the curve is linear; below the lowest, the clock falls in proportion to the power
    assert clock_share(0.75, "Ada Lovelace", THROUGHPUT) == pytest.approx((0.956 + 0.989) / 2)
    assert clock_share(0.5, "Ampere", THROUGHPUT) == pytest.approx(0.897 * 0.5 / 0.667)


def test_power_limit_reaches_the_training_estimate() -> None:
    estimate = on_rig(
        rig("{model: RTX 4090, count: 1, power_limit_w: 315}"),
        workload("gpt2-124m", "pretrain", "precision: bf16\nbatch: {micro: 8, seq_len: 1024}\n"),
    )
    assert estimate.estimate.training.peak_tflops == pytest.approx(RTX4090_BF16 * 0.956)  # type: ignore[union-attr]
    assert estimate.gpu_notes


# -- decoding -------------------------------------------------------------------------------------------------


def test_q4_k_m_weights_are_the_whole_model_at_its_bits_per_weight() -> None:
    inputs = MemoryInputs(
        preset("llama-3-8b"), task="inference", quantization="q4_k_m", quantization_scope="all"
    )
    weights = estimate_memory(inputs).component("weights")
    assert weights is not None
    assert weights.bytes == pytest.approx(L3_8B_PARAMS * Q4_K_M / 8, rel=1e-12)  # 4.913 GB
    # a workload naming the GGUF type gets scope "all" without saying so
    spec = parse_spec(
        workload("llama-3-8b", "inference", "quantization: q4_k_m\ninference: {engine: llama.cpp}\n")
    )
    component = estimate_workload(spec.model).memory.component("weights")
    assert component is not None and component.bytes == pytest.approx(L3_8B_PARAMS * Q4_K_M / 8, rel=1e-12)
    # {bits, applies_to: linear}: the block linears at those bits, the rest 16-bit
    linear = replace(inputs, quantization="bits", quantization_bits=4.5, quantization_scope="linear")
    linear_bytes = 32 * L3_8B_LINEAR_PER_LAYER * 4.5 / 8 + (L3_8B_PARAMS - 32 * L3_8B_LINEAR_PER_LAYER) * 2
    assert estimate_memory(linear).component("weights").bytes == pytest.approx(linear_bytes, rel=1e-12)  # type: ignore[union-attr]


LLAMA_CPP_W4_GDDR = 0.65  # throughput.yaml decode_mbu llama.cpp / gddr / w4 default


def llama_70b_q4(gpus: int, pp: int) -> Any:
    return on_rig(
        rig(f"{{model: RTX 3090, count: {gpus}}}"),
        workload(
            "llama-3-70b",
            "inference",
            f"quantization: q4_k_m\nparallelism: {{pp: {pp}}}\n"
            "inference: {engine: llama.cpp, concurrency: 1, context_len: 4096}\n",
        ),
    ).estimate.decode


def test_batch_1_pipeline_decode_reads_all_weights_at_one_gpus_bandwidth() -> None:
    """llama.cpp's layer split: one token goes through the stages in turn, so a step is stages x one stage's
    (weights + KV) / (bandwidth x MBU)."""
    assert THROUGHPUT["decode_mbu"]["engines"]["llama.cpp"]["gddr"]["w4"]["default"] == LLAMA_CPP_W4_GDDR
    # the worst stage: 40 of the 80 layers and the embedding (the last stage holds the head, as large)
    stage_weights = (40 * L3_70B_LAYER + L3_70B_EMBEDDING + 8192) * Q4_K_M / 8  # 21.58 GB
    average = 4096 / 2  # no output length: half the context on average
    stage_kv = (
        2 * 40 * 8 * 128 * 2 * average
    )  # K and V x layers x KV heads x head_dim x bf16 x tokens: 335.5 MB
    per_token = 2 * (stage_weights + stage_kv) / (RTX3090_GDDR * GB * LLAMA_CPP_W4_GDDR)  # 72.05 ms
    pp2 = llama_70b_q4(2, 2)
    assert pp2.serving.weight_bytes == pytest.approx(stage_weights, rel=1e-12)
    assert pp2.serving.kv_bytes_per_sequence == pytest.approx(stage_kv, rel=1e-12)
    assert pp2.serving.steps[0] == pytest.approx(per_token, rel=1e-9)
    assert pp2.tokens_per_second_per_seq.default == pytest.approx(1 / per_token, rel=1e-9)  # 13.9 tokens/s
    assert pp2.binds == "memory bandwidth"
    # the same model on one GPU of the same bandwidth: the whole model and all 80 layers' KV in one read
    whole = (L3_70B_PARAMS * Q4_K_M / 8 + 2 * 80 * 8 * 128 * 2 * average) / (
        RTX3090_GDDR * GB * LLAMA_CPP_W4_GDDR
    )
    pp1 = llama_70b_q4(1, 1)
    assert pp1.serving.steps[0] == pytest.approx(whole, rel=1e-9)
    assert pp2.serving.steps[0] == pytest.approx(
        pp1.serving.steps[0], rel=1e-6
    )  # up to the second final norm


def test_tensor_parallel_decode_adds_two_latency_bound_all_reduces_per_layer() -> None:
    decode = on_rig(
        rig("{model: H100 SXM, count: 8}", extra="    gpu_interconnect: {kind: nvswitch}\n"),
        workload(
            "llama-3-70b",
            "inference",
            "parallelism: {tp: 8}\ninference: {engine: vllm, concurrency: 1, context_len: 4096}\n",
        ),
    ).estimate.decode
    busbw = H100_NVLINK / 2 * BUS_EFFICIENCY  # 360 GB/s
    one = 2 * (8 - 1) / 8 * 8192 * 2 / (busbw * GB) + LATENCY_NVLINK  # 1 x 8192 bf16 activations: 15.08 us
    tp_seconds = 2 * 80 * one  # 2 per layer per token: 2.413 ms
    assert decode.serving.tp_seconds == pytest.approx(tp_seconds, rel=1e-9)
    assert LATENCY_NVLINK / one > 0.99  # latency-bound
    # the step: each GPU reads 1/8 of the bf16 linears, embedding and head, the norms whole (Megatron-LM
    # replicates them across the TP group), and its one KV head's cache, at vLLM's HBM w16 MBU 0.62
    linears = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672
    per_gpu = (80 * linears + 2 * L3_70B_EMBEDDING) / 8 + 80 * 2 * 8192 + 8192  # 8.82e9 parameters
    memory = (per_gpu * 2 + 2 * 80 * 1 * 128 * 2 * 2048) / (H100_HBM * GB * 0.62)
    assert decode.serving.steps[0] == pytest.approx(memory + tp_seconds, rel=1e-9)


def test_moe_batch_1_reads_the_dense_part_and_k_of_e_experts() -> None:
    inputs = MemoryInputs(preset("mixtral-8x7b"), task="inference", context_len=4096)
    experts_share = MIXTRAL_EXPERTS / MIXTRAL_PARAMS  # 0.9656 of the weights are experts
    one = 1 - experts_share * (1 - 2 / 8)  # top-2 of 8: 0.2758 of the weights
    assert expert_share_read(inputs, 1) == pytest.approx(one, rel=1e-12)
    four = 1 - experts_share * (1 - (1 - (1 - 2 / 8) ** 4))  # four tokens routed independently
    assert expert_share_read(inputs, 4) == pytest.approx(four, rel=1e-12)
    assert expert_share_read(MemoryInputs(preset("llama-3-8b")), 1) == 1.0
    decode = on_rig(
        rig("{model: H100 SXM, count: 1}"),
        workload(
            "mixtral-8x7b", "inference", "inference: {engine: vllm, concurrency: 1, context_len: 4096}\n"
        ),
    ).estimate.decode
    read = MIXTRAL_PARAMS * 2 * one + 2 * 32 * 8 * 128 * 2 * 2048  # bf16 weights x share + one sequence's KV
    assert decode.serving.memory_seconds == pytest.approx(read / (H100_HBM * GB * 0.62), rel=1e-9)


def test_aggregate_serving_pays_every_prompt_s_prefill() -> None:
    """Offline throughput of Llama-3-8B on one H100 under TRT-LLM: 16 sequences, 1024-token prompts, 256 out."""
    decode = on_rig(
        rig("{model: H100 SXM, count: 1}"),
        workload(
            "llama-3-8b",
            "inference",
            "inference: {engine: trt-llm, concurrency: 16, prompt_len: 1024, output_len: 256}\n",
        ),
    ).estimate.decode
    c, prompt, out = 16, 1024, 256
    mbu = 0.75  # decode_mbu trt-llm any / any default
    average = min(prompt + out, prompt + out / 2)  # the context grows through the output: 1152 tokens
    kv = 2 * 32 * 8 * 128 * 2 * average  # 151 MB per sequence
    step = (2 * L3_8B_PARAMS + c * kv) / (H100_HBM * GB * mbu)  # 7.354 ms, memory-bound
    compute = 2 * L3_8B_MATMUL * c / (H100_BF16 * 1e12 * 0.5)  # decode_mfu 0.5: 0.49 ms
    assert compute < step and decode.binds == "memory bandwidth"
    prefill = (
        (2 * L3_8B_MATMUL + 2 * 32 * 4096 * prompt) * prompt / (H100_BF16 * 1e12 * 0.5)
    )  # prefill_mfu: 31.6 ms
    serving = decode.serving
    assert serving.steps[0] == pytest.approx(step, rel=1e-9)
    assert serving.prefill_seconds is not None
    assert serving.prefill_seconds[0] == pytest.approx(prefill, rel=1e-9)
    assert decode.ttft_ms.default == pytest.approx(prefill * 1e3, rel=1e-9)  # type: ignore[union-attr]
    aggregate = c * out / (c * prefill + out * step)  # 1715 tokens/s
    assert decode.aggregate_tokens_per_second.default == pytest.approx(aggregate, rel=1e-9)
    assert aggregate < c / step  # without the prefills it would be 2176 tokens/s
    # the pessimistic end combines the pessimistic step with the pessimistic prefill the same way
    worst = c * out / (c * serving.prefill_seconds[1] + out * serving.steps[1])
    assert decode.aggregate_tokens_per_second.low == pytest.approx(worst, rel=1e-12)
    assert serving.steps[1] == pytest.approx(step * mbu / 0.60, rel=1e-9)  # MBU low 0.60


# -- ICX005 -----------------------------------------------------------------------------------------------------

RIG_8X4090 = rig("{model: RTX 4090, count: 8}")


def ddp_job(grad_accum: int) -> str:
    return workload(
        "llama-3-8b",
        "full_finetune",
        f"precision: bf16\nbatch: {{micro: 1, grad_accum: {grad_accum}, seq_len: 512}}\nparallelism: {{dp: 8}}\n",
    )


@pytest.mark.parametrize(
    ("grad_accum", "severity"), [(1, Severity.FAIL), (32, Severity.WARN), (64, Severity.PASS)]
)
def test_icx005_by_exposed_share(check, grad_accum: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    """DDP over 8 x RTX 4090 without P2P: one all-reduce of the fp32 gradients (bf16-mixed keeps fp32 parameters)
    per optimizer step, hidden only in the last micro-batch's backward."""
    all_reduce = (
        2 * (8 - 1) / 8 * 4 * L3_8B_PARAMS / (PCIE4_X16 * BUS_EFFICIENCY * NO_P2P * GB) + LATENCY_PCIE
    )
    flops = 6 * L3_8B_MATMUL + 12 * 32 * 4096 * 512  # per token at seq_len 512
    forward = 2 * L3_8B_MATMUL + 12 * 32 * 4096 * 512 / 3
    micro_compute = 8 * 512 * flops / (8 * RTX4090_BF16 * 1e12 * 0.45)  # no framework: HFU 0.45 (Ada x 1.0)
    exposed = all_reduce - OVERLAP * micro_compute * (1 - forward / flops)  # 4.46 s - 0.17 s
    share = exposed / (grad_accum * micro_compute)  # 13.6, 0.42, 0.21
    [finding] = findings(check(RIG_8X4090, ddp_job(grad_accum), select=("ICX005",)), "ICX005")
    assert finding.severity is severity
    assert finding.evidence["comm_seconds"] == pytest.approx(all_reduce, abs=1e-4)
    assert finding.evidence["exposed_seconds"] == pytest.approx(exposed, abs=1e-4)
    assert finding.evidence["share"] == pytest.approx(share, abs=1e-3)


def test_no_collective_is_timed_over_no_network(check) -> None:  # type: ignore[no-untyped-def]
    """Issue 47: two nodes with no network declared: the FSDP collectives cannot be timed, so the step
    is the compute alone as a lower bound, no part reads "exposed communication 0 s", and BW003 is not
    checked where that bound fits the plan; it still fails where even the compute misses it."""
    no_network = rig("{model: H100 SXM, count: 8}", count=2, extra="    gpu_interconnect: {kind: nvswitch}\n")
    step = on_rig(no_network, FSDP_8B_JOB).estimate.training.step  # type: ignore[union-attr]
    assert step.untimed and all(seconds for _, seconds in step.parts())
    assert [name for name, _ in step.parts()] == ["compute"]
    [bw003] = findings(check(no_network, FSDP_8B_JOB, select=("BW003",)), "BW003")
    assert bw003.severity is Severity.SKIP and "not timed" in bw003.message and " 0 s" not in bw003.message
    short = FSDP_8B_JOB.replace("run: {hours: 12}", "run: {hours: 1}")
    [missed] = findings(check(no_network, short, select=("BW003",)), "BW003")
    assert missed.severity is Severity.FAIL  # 1e9 tokens at compute speed alone take more than 1 h


@pytest.mark.parametrize(("gpu", "ratio"), [("H100 SXM", 989.4 / 1978.9), ("A100 SXM 80GB", 1.0)])
def test_an_fp8_model_prefills_at_the_fp8_rate_of_a_gpu_that_has_one(gpu: str, ratio: float) -> None:
    """Issue 47: FP8 checkpoints (vLLM's Fp8LinearMethod) run FP8 GEMMs: Llama-3-8B, one 4,096-token
    prompt on one GPU, prefill = FLOPs / (peak x MFU), so the FP8 model's prefill is the bf16 one's x
    989.4 / 1,978.9 on an H100; an A100 has no FP8 tensor cores (weight-only FP8) and keeps the bf16 rate."""
    one_gpu = rig(f"{{model: {gpu}, count: 1}}")

    def prefill(quantization: str) -> float:
        job = workload(
            "llama-3-8b",
            "inference",
            f"precision: bf16\n{quantization}inference: {{engine: vllm, prompt_len: 4096, output_len: 64}}\n",
        )
        decode = on_rig(one_gpu, job).estimate.decode
        assert decode is not None and decode.serving.prefill_seconds is not None
        return decode.serving.prefill_seconds[0]

    assert prefill("quantization: fp8\n") == pytest.approx(prefill("") * ratio, rel=1e-9)


def test_meta_fp8_checkpoint_prefills_its_mlp_at_fp8_and_the_rest_at_bf16() -> None:
    """``fp8-mlp`` (Meta's FP8 checkpoints): the MLP of blocks 1-124 of Llama-3.1-405B runs FP8 GEMMs, attention,
    the outer blocks and the head bf16; each share's time adds: 1 / (s / 1,978.9 + (1 - s) / 989.4) TFLOPS on an
    H100, s = 124 x 3 x 16,384 x 53,248 / the matmul parameters of one token (blocks and head)."""
    from rigcheck.core.estimate.throughput import matmul_params, serving_peak

    arch = preset("llama-3.1-405b")
    inputs = MemoryInputs(arch, task="inference", precision="bf16-true", quantization="fp8-mlp", tp=8)
    share = 124 * 3 * 16384 * 53248 / matmul_params(inputs)
    assert 0.75 < share < 0.85
    h100, a100 = (_catalog().lookup(name) for name in ("h100-sxm", "A100 SXM 80GB"))
    peak, field = serving_peak(h100, inputs)
    assert peak == pytest.approx(1 / (share / 1978.9 + (1 - share) / 989.4))
    assert field.startswith(f"fp8_dense_tflops for {share:.0%} of the matmuls")
    # an A100 has no FP8 tensor cores (weight-only FP8): the bf16 rate throughout
    assert serving_peak(a100, inputs) == (312.0, "bf16_dense_tflops")


def test_zero_1_and_2_all_gather_after_the_step_and_reduce_on_the_compute_stream() -> None:
    """Issue 47: DeepSpeed ZeRO-1/2 all-gather the updated 16-bit partitions inside step(), after the
    optimizer (stage_1_and_2.py: all_gather_dp_groups), with no compute left to hide them; the gradient
    reduce-scatter overlaps the backward only with overlap_comm, off by default below stage 3
    (config.py overlap_comm_valid). ZeRO-2 over 16 ranks, 2 micro-batches: each micro-batch reduce-scatters
    the 16-bit gradients, one all-gather after the step; exposed = all of it, or the all-gather and what
    the compute does not hide of the reduce-scatters."""
    inputs = replace(fsdp_inputs(2), fsdp=None, zero=2)
    items = collectives(inputs, TWO_H100_NODES)
    assert [(item.kind, item.calls, item.overlappable) for item in items] == [
        ("reduce-scatter", 2, False),
        ("all-gather", 1, False),
    ]
    assert [item.bytes_per_call for item in items] == [2 * L3_8B_PARAMS] * 2
    compute = 10.0
    assert exposed_seconds(items, compute, 2, 2 / 3, 0.8) == pytest.approx(sum(i.seconds for i in items))
    overlapped = collectives(replace(inputs, deepspeed_overlap_comm=True), TWO_H100_NODES)
    reduce, gather = overlapped
    assert reduce.overlappable and reduce.every_micro_batch and not gather.overlappable
    assert exposed_seconds(overlapped, compute, 2, 2 / 3, 0.8) == pytest.approx(
        gather.seconds + max(0.0, reduce.seconds - 0.8 * compute)
    )
    zero1 = collectives(replace(inputs, zero=1), TWO_H100_NODES)
    assert [(item.kind, item.calls, item.every_micro_batch) for item in zero1] == [
        ("reduce-scatter", 1, False),
        ("all-gather", 1, False),
    ]


def test_interleaved_1f1b_shrinks_the_bubble_by_the_chunks_per_stage() -> None:
    """Issue 47: the 1F1B bubble is (p - 1) / m of the compute; with v model chunks per stage (interleaved
    1F1B) it is (p - 1) / (v m), and the pipeline sends happen at every chunk boundary, v times as often
    (Narayanan et al., arXiv:2104.04473 section 2.2). Llama-3-8B, pp 4, 8 micro-batches: 3/8, then 3/16."""
    base = MemoryInputs(
        preset("llama-3-8b"), precision="bf16-mixed", micro_batch=1, seq_len=4096, grad_accum=8, pp=4
    )
    facts = load_rule_facts("throughput")

    def step(v: int):  # type: ignore[no-untyped-def]
        return step_time(
            replace(base, virtual_stages=v),
            matmul=7.5e9,
            peak_tflops=989.4,
            facts=facts,
            topology=TWO_H100_NODES,
        )

    one, two = step(1), step(2)
    assert one.bubble_seconds == pytest.approx(one.compute_seconds * 3 / 8)
    assert two.bubble_seconds == pytest.approx(two.compute_seconds * 3 / 16)
    [send1] = [item for item in one.collectives if item.kind == "send"]
    [send2] = [item for item in two.collectives if item.kind == "send"]
    assert (send1.calls, send2.calls) == (2 * 8, 2 * 8 * 2)


def test_megatrons_distributed_optimizer_overlaps_both() -> None:
    """NeMo's and Megatron-Bridge's recipes turn on Megatron-Core's overlap_grad_reduce and
    overlap_param_gather (frameworks.yaml megatron zero_overlap; framework nemo is megatron): the
    reduce-scatter hides in the backward and the all-gather of the updated parameters in the next
    forward. DeepSpeed (no framework default) keeps both exposed."""
    nemo, _ = estimate_parts("nemo")
    deepspeed, _ = estimate_parts("deepspeed")
    assert [item.overlappable for item in nemo] == [True, True]
    assert [item.overlappable for item in deepspeed] == [False, False]


def estimate_parts(framework: str):  # type: ignore[no-untyped-def]
    from rigcheck.core.estimate.estimate import memory_inputs

    text = workload(
        "llama-3-8b",
        "pretrain",
        f"precision: bf16\nframework: {framework}\nbatch: {{micro: 1, seq_len: 4096}}\n"
        "parallelism: {dp: 16, zero: 1}\n",
    )
    document = parse_spec(text, "w.yaml")
    inputs = memory_inputs(document.model, preset("llama-3-8b"))
    return collectives(inputs, TWO_H100_NODES), inputs
