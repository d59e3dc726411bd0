"""rigcheck merge (per-node probe files into one rig, drift between nodes) and rigcheck measure
(on the CPU here; the GPU path runs on a real machine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml


def probe_file(
    tmp: Path,
    host: str,
    *,
    gpus: int = 8,
    driver: str = "550.54.15",
    vbios: str = "96.00.89.00.01",
    ecc_off: int = 0,
) -> str:
    spec = {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": host,
        "probed_at": "2026-11-29T10:00:00+00:00",
        "probe": {
            "probed_at": "2026-11-29T10:00:00+00:00",
            "hostname": host,
            "driver_version": driver,
            "cuda_driver_version": "12.4",
            "gpus": [
                {"index": i, "name": "NVIDIA H100 80GB HBM3", "vbios": vbios, "ecc_current": i >= ecc_off}
                for i in range(gpus)
            ],
        },
        "nodes": [
            {
                "name": host,
                "gpus": {"model": "NVIDIA H100 80GB HBM3", "count": gpus},
                "gpu_interconnect": {"kind": "nvswitch"},
                "cpu": {"model": "Intel Xeon Platinum 8480C", "sockets": 2, "cores": 112, "threads": 224},
                "memory_gib": 2015.6,
                "software": {"os": "linux", "driver": driver, "torch": "2.3.0+cu121"},
            }
        ],
    }
    path = tmp / f"{host}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return str(path)


def test_identical_nodes_become_one_group(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [probe_file(tmp_path, f"node{i:02d}") for i in range(4)]
    out = tmp_path / "cluster.yaml"
    result = run_cli("merge", *files, "-o", str(out), "--name", "pod-a")
    assert result.exit_code == 0, result.err
    merged = yaml.safe_load(out.read_text())
    assert merged["name"] == "pod-a" and len(merged["nodes"]) == 1
    group = merged["nodes"][0]
    assert group["count"] == 4 and group["hostnames"] == ["node00", "node01", "node02", "node03"]
    assert "probe" not in merged and group["gpus"] == {"model": "NVIDIA H100 80GB HBM3", "count": 8}
    check = run_cli("check", str(out), "--select", "PLT001", "--format", "json")  # the merged rig checks
    assert check.exit_code == 0 and check.json()["findings"][0]["code"] == "PLT001"


def test_drift_is_reported_at_the_odd_node(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [probe_file(tmp_path, f"node{i:02d}") for i in range(3)]
    files.append(
        probe_file(tmp_path, "node03", gpus=7, driver="535.129.03", vbios="96.00.5E.00.01", ecc_off=2)
    )
    out = tmp_path / "cluster.yaml"
    result = run_cli("merge", *files, "-o", str(out), "--format", "json")
    assert result.exit_code == 1  # DRIFT001 fails
    findings = {(f["code"], f["severity"]): f for f in result.json()["findings"] if f["severity"] != "pass"}
    assert set(findings) == {
        ("DRIFT001", "fail"),
        ("DRIFT002", "warn"),
        ("DRIFT004", "warn"),
        ("DRIFT005", "warn"),
    }
    gpus = findings[("DRIFT001", "fail")]
    assert gpus["message"] == (
        "node03: GPUs 7 x NVIDIA H100 80GB HBM3, while 3 of 4 nodes have 8 x NVIDIA H100 80GB HBM3"
    )
    assert gpus["location"]["file"].endswith("node03.yaml") and gpus["location"]["pointer"] == "/nodes/0/gpus"
    driver = findings[("DRIFT002", "warn")]
    assert driver["evidence"]["majority"] == "550.54.15" and driver["location"]["line"] > 1
    merged = yaml.safe_load(out.read_text())
    assert sorted(group["count"] for group in merged["nodes"]) == [1, 3]  # the odd node is its own group


def test_merge_rejects_non_probe_input(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: rigcheck/v1\nkind: Rig\nname: x\nnodes: []\n", encoding="utf-8")
    result = run_cli("merge", str(bad))
    assert result.exit_code == 2 and "bad.yaml" in result.err


def test_measure_on_cpu_writes_evidence_that_check_reads(tmp_path, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch", reason="measure needs torch: pip install torch==2.13.0 (CI does)")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the CPU path, also on a GPU machine
    out = tmp_path / "measure.json"
    result = run_cli("measure", "-o", str(out), "--size-mib", "8", "--iterations", "2")
    assert result.exit_code == 0, result.err
    assert "no CUDA GPU: measuring host memory" in result.err  # says so
    evidence = json.loads(out.read_text())
    assert evidence["tool"] == "rigcheck-measure" and evidence["torch"]["cuda_available"] is False
    (copy,) = evidence["bandwidth"]
    assert copy["kind"] == "host_memory" and copy["gbps"] > 0 and copy["size_bytes"] == 8 * 2**20
    rig = tmp_path / "rig.yaml"
    rig.write_text("apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {model: RTX 4090}\n")
    report = run_cli("check", str(rig), "--evidence", str(out), "--format", "json").json()
    evd = [f for f in report["findings"] if f["code"] == "EVD013"]
    assert evd and evd[0]["severity"] == "warn" and "only host memory bandwidth" in evd[0]["message"]
    assert report["inputs"][-1]["kind"] == "Evidence" and report["inputs"][-1]["name"] == "rigcheck-measure"


class FakeTensor:
    def __init__(self, device: str = "cpu") -> None:
        self.device = device

    def copy_(self, other, non_blocking: bool = False):  # type: ignore[no-untyped-def]
        return self


class FakeCuda:
    """torch.cuda for a machine with two GPUs: the GPU code path of measure, without a GPU."""

    def __init__(self) -> None:
        self.reduced: list[int] = []
        self.nccl = self

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 2

    def get_device_name(self, index: int) -> str:
        return "NVIDIA H100 80GB HBM3"

    def get_device_capability(self, index: int) -> tuple[int, int]:
        return (9, 0)

    def synchronize(self) -> None:
        pass

    def can_device_access_peer(self, a: int, b: int) -> bool:
        return True

    def all_reduce(self, tensors):  # type: ignore[no-untyped-def]
        self.reduced.append(len(tensors))


class FakeTorch:
    __version__ = "2.13.0+cu130"
    uint8 = float32 = object()

    def __init__(self) -> None:
        self.cuda = FakeCuda()
        self.version = type("V", (), {"cuda": "13.0"})

    def empty(self, size, dtype=None, device="cpu", pin_memory=False):  # type: ignore[no-untyped-def]
        return FakeTensor(device)

    def ones(self, size, dtype=None, device="cpu"):  # type: ignore[no-untyped-def]
        return FakeTensor(device)


def test_measure_gpu_path_with_a_fake_torch() -> None:
    from rigcheck.live.measure import measure

    fake = FakeTorch()
    messages: list[str] = []
    evidence = measure(fake, size_mib=1, iterations=1, progress=messages.append)
    kinds = [(b.kind, b.src, b.dst) for b in evidence.bandwidth]
    assert kinds == [
        ("h2d", "host", "cuda:0"),
        ("d2h", "cuda:0", "host"),
        ("d2d", "cuda:0", "cuda:0"),
        ("h2d", "host", "cuda:1"),
        ("d2h", "cuda:1", "host"),
        ("d2d", "cuda:1", "cuda:1"),
        ("p2p", "cuda:0", "cuda:1"),
        ("p2p", "cuda:1", "cuda:0"),
        ("all_reduce", "2 GPUs", None),
    ]
    assert fake.cuda.reduced == [2, 2]  # one warm-up and one timed run
    assert messages[0] == "[1/9] h2d cuda:0, 1 MiB" and messages[-1] == "[9/9] all_reduce over 2 GPUs, 1 MiB"
    assert evidence.torch.device_capabilities == ["9.0", "9.0"] and evidence.gpu_count == 2
