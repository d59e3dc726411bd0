"""ICX001-ICX006 with numbers worked by hand from docs/research/rules_facts.md NET-4, NET-9, NET-10, PLT-2/3."""

from __future__ import annotations

import pytest

from rigcheck.core.engine.findings import Severity


def rig(gpus: str, extra: str = "") -> str:
    return f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: box\n    gpus: {gpus}\n{extra}"


def workload(parallelism: str, model: str = "llama-2-7b", batch: str = "{micro: 1, seq_len: 2048}") -> str:
    return (
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {{preset: {model}}}\ntask: pretrain\n"
        f"precision: bf16\nbatch: {batch}\nparallelism: {parallelism}\n"
    )


def only(report, code):  # type: ignore[no-untyped-def]
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


PCIE4 = "    pcie: {gen: 4, lanes_per_gpu: 16}\n"


@pytest.mark.parametrize(
    ("tp", "ratio", "severity"),
    [(2, 0.249, Severity.PASS), (4, 0.747, Severity.WARN), (8, 1.743, Severity.FAIL)],
)
def test_tp_over_pcie_without_p2p(check, tp: int, ratio: float, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    """RTX 4090: bus bandwidth 31.5 GB/s x 0.8 x 0.5 (no P2P) = 12.6 GB/s; F = 165.2 x 0.35 = 57.8 TFLOP/s;
    r = (t - 1) x 2 x 57.8e12 / (9 x 4096 x 12.6e9) = 0.249 x (t - 1)."""
    report = check(rig("{model: RTX 4090, count: 8}", PCIE4), workload(f"{{tp: {tp}}}"), select=("ICX001",))
    finding = only(report, "ICX001")
    assert finding.severity is severity
    assert finding.evidence["busbw_gbps"] == 12.6
    assert finding.evidence["ratio"] == pytest.approx(ratio, abs=0.001)


def test_tp_over_nvswitch_is_cheap(check) -> None:  # type: ignore[no-untyped-def]
    """H100 SXM: 450 GB/s x 0.8 = 360 GB/s; F = 989.4 x 0.35 = 346.3 TFLOP/s; h = 8192; t = 8:
    r = 7 x 2 x 346.3e12 / (9 x 8192 x 360e9) = 0.1827 (NET-10 gets 0.4 for h = 4096 at F = 400)."""
    report = check(
        rig("{model: H100 SXM, count: 8}", "    gpu_interconnect: {kind: nvswitch}\n"),
        workload("{tp: 8}", model="llama-3-70b"),
        select=("ICX001",),
    )
    finding = only(report, "ICX001")
    assert finding.severity is Severity.PASS and finding.evidence["ratio"] == pytest.approx(
        0.1827, abs=0.0005
    )


def test_tp_across_nodes(check) -> None:  # type: ignore[no-untyped-def]
    report = check(
        rig("{model: H100 SXM, count: 8}", "    count: 2\n"), workload("{tp: 16}"), select=("ICX002",)
    )
    assert only(report, "ICX002").severity is Severity.FAIL


def test_peer_to_peer_and_bridges(check) -> None:  # type: ignore[no-untyped-def]
    no_p2p = only(check(rig("{model: RTX 4090, count: 2}"), select=("ICX003",)), "ICX003")
    assert no_p2p.severity is Severity.WARN
    patched = only(
        check(
            rig("{model: RTX 4090, count: 2}", "    gpu_interconnect: {kind: pcie, p2p: true}\n"),
            select=("ICX003",),
        ),
        "ICX003",
    )
    assert patched.severity is Severity.PASS and "patched driver" in patched.message
    bridge_4090 = only(
        check(
            rig("{model: RTX 4090, count: 2}", "    gpu_interconnect: {kind: nvlink-bridge}\n"),
            select=("ICX004",),
        ),
        "ICX004",
    )
    assert bridge_4090.severity is Severity.FAIL
    four = only(
        check(
            rig("{model: RTX 3090, count: 4}", "    gpu_interconnect: {kind: nvlink-bridge}\n"),
            select=("ICX004",),
        ),
        "ICX004",
    )
    assert four.severity is Severity.WARN
    two = only(
        check(
            rig("{model: RTX 3090, count: 2}", "    gpu_interconnect: {kind: nvlink-bridge}\n"),
            select=("ICX004",),
        ),
        "ICX004",
    )
    assert two.severity is Severity.PASS and two.evidence["bridge_gbps"] == 112.5


@pytest.mark.parametrize(("micro", "severity"), [(2, Severity.FAIL), (4, Severity.WARN), (8, Severity.PASS)])
def test_dp_allreduce_share(check, micro: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    """GPT-2 124M under AMP, DDP over two RTX 4090s without P2P: one all-reduce of the fp32 gradients per
    step, 2(n-1)/n = 1 x 4 B x 124,439,808 params = 497.8 MB at 31.5 x 0.8 x 0.5 = 12.6 GB/s = 0.0395 s
    (+ 40 us), hidden in the backward of the micro-batch (2/3 of its compute) up to 0.8 of it. Compute per
    GPU: micro x 1024 tokens x 855,157,248 FLOPs / (165.2 TFLOPS x HFU 0.45, no framework named)."""
    from rigcheck.core.catalog.facts import load_rule_facts

    facts = load_rule_facts("throughput")
    hfu = facts["training_hfu"]["frameworks"]["default"]
    overlap = facts["communication"]["overlap"]["default"]
    comm = 497_759_232 / (31.5e9 * 0.8 * 0.5) + 40e-6
    matmul = 6 * 123_651_840
    flops = matmul + 12 * 12 * 768 * 1024
    compute = micro * 1024 * flops / (165.2e12 * hfu)
    backward = 1 - (2 * 123_651_840 + 12 * 12 * 768 * 1024 / 3) / flops
    exposed = max(0.0, comm - overlap * compute * backward)
    report = check(
        rig("{model: RTX 4090, count: 2}", PCIE4),
        workload("{dp: 2}", model="gpt2-124m", batch=f"{{micro: {micro}, grad_accum: 1, seq_len: 1024}}"),
        select=("ICX005",),
    )
    finding = only(report, "ICX005")
    assert finding.severity is severity
    assert finding.evidence["comm_seconds"] == pytest.approx(comm, abs=0.0005)
    assert finding.evidence["compute_seconds"] == pytest.approx(compute, rel=0.01)
    assert finding.evidence["share"] == pytest.approx(exposed / compute, abs=0.01)


def test_a_gen4_card_links_at_gen4_in_a_gen5_slot(check) -> None:  # type: ignore[no-untyped-def]
    """A PCIe link trains to the lower of slot and card (NVML's max link generation is "the maximum PCIe link
    generation possible with this device and system"): two RTX 4090s, Gen4 x16 cards, in Gen5 x16 slots
    all-reduce at 31.5 x 0.8 x 0.5 = 12.6 GB/s, as in Gen4 slots (497.8 MB: 0.0395 s + 40 us)."""
    load = workload("{dp: 2}", model="gpt2-124m", batch="{micro: 2, grad_accum: 1, seq_len: 1024}")
    gen5 = rig("{model: RTX 4090, count: 2}", "    pcie: {gen: 5, lanes_per_gpu: 16}\n")
    seconds = [
        only(check(text, load, select=("ICX005",)), "ICX005").evidence["comm_seconds"]
        for text in (rig("{model: RTX 4090, count: 2}", PCIE4), gen5)
    ]
    assert seconds[0] == seconds[1] == pytest.approx(497_759_232 / (31.5e9 * 0.8 * 0.5) + 40e-6, abs=0.0005)
    lanes = only(check(gen5, select=("ICX006",)), "ICX006")
    assert "PCIe 5.0 x16 slots; the NVIDIA GeForce RTX 4090 links at PCIe 4.0 x16 (31.5 GB/s each way)" in (
        lanes.message
    )
    assert (lanes.evidence["link_gen"], lanes.evidence["link_lanes"]) == (4, 16)


@pytest.mark.parametrize(
    ("pcie", "interconnect", "severity"),
    [
        ("{gen: 4, lanes_per_gpu: 16}", "", Severity.PASS),
        ("{gen: 4, lanes_per_gpu: 8}", "", Severity.WARN),
        ("{gen: 4, lanes_per_gpu: 8}", "    gpu_interconnect: {kind: nvlink-bridge}\n", Severity.PASS),
        ("{gen: 4, lanes_per_gpu: 16, chipset_gpus: 1}", "", Severity.WARN),
    ],
)
def test_pcie_lanes(check, pcie: str, interconnect: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
    text = rig("{model: RTX 3090, count: 2}", f"    pcie: {pcie}\n{interconnect}")
    assert only(check(text, select=("ICX006",)), "ICX006").severity is severity


def test_export_variants_have_cut_nvlink(check) -> None:  # type: ignore[no-untyped-def]
    """A800: NVLink 400 GB/s instead of the A100's 600 (NET-7): 200 x 0.8 = 160 GB/s bus bandwidth, so the TP
    ratio is 1.5x the A100's."""
    load = workload("{tp: 8}", model="llama-3-70b")
    a100 = only(
        check(
            rig("{model: NVIDIA A100-SXM4-80GB, count: 8}", "    gpu_interconnect: {kind: nvswitch}\n"),
            load,
            select=("ICX001",),
        ),
        "ICX001",
    )
    a800 = only(
        check(
            rig("{model: A800 SXM4 80GB, count: 8}", "    gpu_interconnect: {kind: nvswitch}\n"),
            load,
            select=("ICX001",),
        ),
        "ICX001",
    )
    assert (a100.evidence["busbw_gbps"], a800.evidence["busbw_gbps"]) == (240.0, 160.0)
    assert a800.evidence["ratio"] == pytest.approx(1.5 * a100.evidence["ratio"], abs=0.002)


@pytest.mark.parametrize(
    ("count", "interconnect", "busbw"),
    [
        (
            8,
            "    gpu_interconnect: {kind: infinity-fabric}\n",
            318.976,
        ),  # 7 links x 64 GB/s = 448 each way x 0.712
        (8, "", 318.976),  # an OAM MI300X with no interconnect declared has its xGMI mesh
        (2, "    gpu_interconnect: {kind: xgmi}\n", 45.568),  # two GPUs share one link: 64 GB/s x 0.712
    ],
)
def test_amd_infinity_fabric_is_a_mesh_of_links(check, count: int, interconnect: str, busbw: float) -> None:  # type: ignore[no-untyped-def]
    """Issue 47: an MI300X node's TP traffic runs over xGMI, not PCIe 5.0 (50.4 GB/s). The MI300X has 7
    links of 128 GB/s (64 each way), one to each other GPU of the node: g GPUs use g - 1 of them, up to
    the 896 GB/s total (448 each way); x 0.712, the share RCCL's all-reduce reached on 8 MI300X in AMD's
    measurement (318.98 GB/s busbw: the 8-GPU case comes out at the measured figure; AMD measured 45.21 GB/s
    on its slowest single link, against 45.6 here)."""
    report = check(
        rig(f"{{model: MI300X, count: {count}}}", interconnect),
        workload(f"{{tp: {count}}}", model="llama-3-70b"),
        select=("ICX001",),
    )
    finding = only(report, "ICX001")
    assert finding.evidence["busbw_gbps"] == pytest.approx(busbw, abs=0.005)  # printed to 2 decimals
    assert "infinity-fabric" in finding.message or "infinity-fabric" in str(finding.evidence)
