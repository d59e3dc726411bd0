"""``rigcheck probe --from``: a rig spec from saved tool outputs alone (rigcheck/live/probe_from.py), and
``rigcheck evidence``, which shows what those outputs were read as."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from rigcheck.core.spec.validate import validate_files
from rigcheck.evidence.model import Evidence, IbPort, MountEvidence, TopologyEvidence
from rigcheck.live.probe_from import (
    Sources,
    network_from_ports,
    spec_from_evidence,
    storage_from_mounts,
    torch_facts,
)

from .conftest import REPO
from .test_evidence_parsers import DATA, EXPECTED, FILES

#: The saved outputs of one 8-GPU node (SOURCES.md, "node8/").
NODE8 = sorted((DATA / "node8").glob("*"))
EVIDENCE_SCHEMA = json.loads((REPO / "schemas" / "evidence.schema.json").read_text(encoding="utf-8"))


# -- rigcheck evidence -------------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", FILES)
def test_evidence_json_of_every_tool_output_fits_the_schema_and_holds_its_facts(relative, run_cli) -> None:  # type: ignore[no-untyped-def]
    """What ``rigcheck evidence FILE -f json`` prints validates against schemas/evidence.schema.json, and the
    facts SOURCES.md lists for the file (the expectations of test_evidence_parsers.py) are in it."""
    result = run_cli("evidence", str(DATA / relative), "-f", "json")
    assert result.exit_code == 0, result.err
    data = result.json()
    jsonschema.Draft202012Validator(EVIDENCE_SCHEMA).validate(data)
    assert [entry["source"] for entry in data["evidence"]] == [str(DATA / relative)]
    tool, check = EXPECTED[relative]
    entry = data["evidence"][0]
    assert entry["tool"] == tool
    check(Evidence.model_validate(entry))  # only what the JSON holds: defaults were left out of it


def test_evidence_schema_is_the_published_one(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("schema", "evidence")
    assert json.loads(result.out) == EVIDENCE_SCHEMA


def test_evidence_text_and_yaml(run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [str(DATA / "topo/8x-a100-sxm4-nv12-17nic.txt"), str(DATA / "nvlink/8x-a100-nvlink-status.txt")]
    text = run_cli("evidence", *files).out
    assert f"{files[0]}: read as nvidia-smi-topo" in text
    assert "topology (nvidia-smi topo -m): 8 GPU(s), 28 pair(s) NV12; 17 NIC(s)" in text
    assert "GPU 0: NVIDIA A100-SXM4-80GB, 12/12 NVLinks active" in text
    as_yaml = yaml.safe_load(run_cli("evidence", *files, "-f", "yaml").out)
    as_json = run_cli("evidence", *files, "-f", "json").json()
    assert as_yaml == as_json


def test_evidence_exit_codes(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    odd = tmp_path / "notes.txt"
    odd.write_text("nothing a tool printed\n", encoding="utf-8")
    result = run_cli("evidence", str(odd))
    assert result.exit_code == 1 and "read as unknown" in result.out and "no parser recognised" in result.out
    missing = run_cli("evidence", str(tmp_path / "absent.txt"))
    assert missing.exit_code == 2 and "evidence file not found" in missing.err


# -- the parts of a spec -----------------------------------------------------------------------------------


def _mount(
    filesystem: str, mounted_on: str, size: float, free: float, kind: str | None = None
) -> MountEvidence:
    return MountEvidence(
        filesystem=filesystem, type=kind, size_bytes=size, available_bytes=free, mounted_on=mounted_on
    )


def test_storage_from_df_keeps_what_df_can_name() -> None:
    tib = 1024**4
    df = Evidence(
        source="df.txt",
        tool="df",
        mounts=[
            _mount("overlay", "/", 100 * 1024**3, 90 * 1024**3, "overlay"),
            _mount("/dev/nvme0n1p1", "/workspace", 1.8 * tib, 1.3 * tib, "ext4"),
            _mount("10.0.0.5:/export", "/data", 50 * tib, 20 * tib, "nfs4"),
            _mount("tmpfs", "/dev/shm", 64 * 1024**3, 64 * 1024**3, "tmpfs"),
            _mount("/dev/vda1", "/mnt/disk", 500 * 1024**3, 400 * 1024**3),
        ],
    )
    storage, notes = storage_from_mounts([df], Sources([df]))
    assert storage == [
        # 1.8 TiB = 1.979e12 bytes: capacity_gb is in GB (1e9 bytes)
        {
            "kind": "nvme",
            "name": "nvme0n1p1",
            "capacity_gb": 1979.1,
            "free_gb": 1429.4,
            "mount": "/workspace",
        },
        {
            "kind": "network-fs",
            "protocol": "nfs",
            "name": "/data",
            "capacity_gb": 54975.6,
            "free_gb": 21990.2,
            "mount": "/data",
        },
        {
            "kind": "cloud-volume",
            "name": "vda1",
            "capacity_gb": 536.9,
            "free_gb": 429.5,
            "mount": "/mnt/disk",
        },
    ]
    assert len(notes) == 1 and notes[0].startswith("df: / (overlay, overlay, 107 GB) left out of storage")


def test_network_from_active_ports_only() -> None:
    ports = [
        IbPort(ca=f"mlx5_{n}", state="Active", rate_gbps=400, link_layer="InfiniBand") for n in range(4)
    ] + [
        IbPort(ca="mlx5_4", state="Down", rate_gbps=400, link_layer="InfiniBand"),
        IbPort(ca="mlx5_5", state="Active", rate_gbps=200, link_layer="Ethernet"),
    ]
    ib = Evidence(source="ibstat.txt", tool="ibstat", ib_ports=ports)
    assert network_from_ports([ib], Sources([ib])) == [
        {"kind": "infiniband", "gbps": 400, "count": 4, "interface": "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
        {"kind": "roce", "gbps": 200, "interface": "mlx5_5"},
    ]


def test_torch_from_pip_takes_cuda_from_the_runtime_wheel(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """PyPI's Linux torch wheels carry no +cu tag: the CUDA is that of nvidia-cuda-runtime-cu12."""
    from rigcheck.evidence.loader import load_evidence

    listing = tmp_path / "freeze.txt"
    listing.write_text(
        "nvidia-cuda-runtime-cu12==12.4.127\nnvidia-nccl-cu12==2.21.5\ntorch==2.5.1\ntransformers==4.46.3\n",
        encoding="utf-8",
    )
    evidence = load_evidence([listing])
    assert evidence[0].tool == "pip-freeze"
    assert torch_facts(evidence, Sources(evidence)) == {"version": "2.5.1", "cuda": "12.4", "nccl": "2.21.5"}


def test_topology_levels_and_p2p_become_the_interconnect() -> None:
    gpus = ["GPU0", "GPU1"]
    table = Evidence(
        source="smi.txt",
        tool="nvidia-smi-table",
        gpus=[
            {"index": 0, "name": "NVIDIA GeForce RTX 3090"},
            {"index": 1, "name": "NVIDIA GeForce RTX 3090"},
        ],
    )
    topo = Evidence(
        source="topo.txt",
        tool="nvidia-smi-topo",
        topology=TopologyEvidence(
            devices=gpus, matrix={"GPU0": {"GPU0": "X", "GPU1": "NV4"}, "GPU1": {"GPU0": "NV4", "GPU1": "X"}}
        ),
    )
    p2p = Evidence(
        source="p2p.txt",
        tool="nvidia-smi-topo",
        topology=TopologyEvidence(
            kind="p2p", devices=gpus, matrix={"GPU0": {"GPU1": "OK"}, "GPU1": {"GPU0": "OK"}}
        ),
    )
    spec, _ = spec_from_evidence([table, topo, p2p])
    node = spec["nodes"][0]
    # an NVLink pair of PCIe cards (the catalog's form factor) is a bridge; both peers read: p2p true
    assert node["gpu_interconnect"] == {"kind": "nvlink-bridge", "p2p": True}
    assert spec["probe"]["topology"] == {"GPU0": {"GPU1": "NVLINK"}, "GPU1": {"GPU0": "NVLINK"}}
    assert [gpu["nvlinks_active"] for gpu in spec["probe"]["gpus"]] == [4, 4]  # NV4: four links
    facts = {entry["file"]: entry["facts"] for entry in spec["probe"]["sources"]}
    assert "nodes[0].gpu_interconnect" in facts["topo.txt"] and "nodes[0].gpus" in facts["smi.txt"]


# -- one 8-GPU node, end to end ----------------------------------------------------------------------------


def _probe_from(run_cli, tmp_path: Path, files: list[Path]) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path / "rig.yaml"
    result = run_cli("probe", "--from", *map(str, files), "-o", str(out))
    assert result.exit_code == 0, result.err
    return out


def test_probe_from_an_8_gpu_node_writes_a_valid_spec_with_what_it_could_not_fill(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    assert len(NODE8) >= 3, "tests/data/tool-outputs/node8/ holds one node's saved outputs"
    out = _probe_from(run_cli, tmp_path, NODE8)
    [result] = validate_files([str(out)])
    assert not result.problems, [problem.format() for problem in result.problems]
    text = out.read_text(encoding="utf-8")
    assert "#   nodes[0].cpu: " in text and "#   nodes[0].memory_gib: " in text
    spec = yaml.safe_load(text)
    node = spec["nodes"][0]
    assert sum(group["count"] for group in node["gpus"]) == 8
    sources = spec["probe"]["sources"]
    assert [entry["file"] for entry in sources] == [str(path) for path in NODE8]
    assert all(entry["facts"] for entry in sources), sources  # every file gave something


def test_check_finds_the_topology_of_the_files_in_the_spec_written_from_them(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The spec ``probe --from`` writes, checked with its own probe section as evidence, gives the topology
    findings that ``check --evidence`` gives with the saved files themselves: the two agree."""
    out = _probe_from(run_cli, tmp_path, NODE8)

    def topology(*evidence: Path) -> list[tuple[str, str, str]]:
        args = [arg for path in evidence for arg in ("--evidence", str(path))]
        result = run_cli("check", str(out), *args, "--select", "EVD005,EVD012", "-f", "json")
        assert result.exit_code in (0, 1), result.err
        return sorted(
            (
                f["code"],
                f["severity"],
                json.dumps({k: v for k, v in f["evidence"].items() if k != "evidence"}),
            )
            for f in result.json()["findings"]
        )

    from_files = topology(*NODE8)
    from_spec = topology(out)
    assert from_files == from_spec
    # GPU 0's 18 links (nvlink -s saw only GPU 0) and every pair on NVLink (topo -m), both passing
    assert [(code, severity) for code, severity, _ in from_files] == [("EVD005", "pass"), ("EVD005", "pass")]
    spec = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert spec["nodes"][0]["gpu_interconnect"] == {"kind": "nvswitch"}  # 8 GPUs, NV18 between every pair


def test_probe_from_needs_neither_nvml_nor_torch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "rig.yaml"
    code = (
        "import sys; sys.modules['pynvml'] = None; sys.modules['torch'] = None\n"
        "from rigcheck.cli import main\n"
        f"sys.exit(main(['probe', '--from', *{[str(path) for path in NODE8]!r}, '-o', {str(out)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["nodes"][0]["gpus"]


def test_the_worked_example_of_docs_live_md_prints_what_it_shows(run_cli) -> None:  # type: ignore[no-untyped-def]
    """docs/live.md's ``rigcheck evidence box/topo.txt box/pip-list.txt`` output, on the files it stands for."""
    text = (REPO / "docs" / "live.md").read_text(encoding="utf-8")
    shown = text.split("To see what rigcheck read from a file", 1)[1].split("```\n", 3)[2]
    files = {
        "box/topo.txt": DATA / "node8" / "a3-h100-topo-m.txt",
        "box/pip-list.txt": DATA / "pip" / "pip-list-vllm-0.6.3-torch-2.4.0-cu121.txt",
    }
    out = run_cli("evidence", *map(str, files.values())).out
    for name, path in files.items():
        out = out.replace(str(path), name)
    assert out.replace("\n\n", "\n") == shown


def test_files_from_two_hosts_are_named_in_the_notes() -> None:
    first = Evidence(source="a.txt", tool="nccl-tests", host="node-a")
    second = Evidence(source="b.txt", tool="nccl-tests", host="node-b")
    spec, _ = spec_from_evidence([first, second])
    assert any(
        "2 hosts (node-a, node-b)" in note and "rigcheck merge" in note for note in spec["probe"]["notes"]
    )


def test_names_from_a_hostile_df_cannot_write_lines_into_the_spec(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Line breaks YAML knows (CR, NEL, U+2028) split the df rows before parsing, and the comment lines are
    escaped besides: what a file says can only be a value, never a line of the spec."""
    df = tmp_path / "df.txt"
    df.write_bytes(
        "Filesystem     Type   Size  Used Avail Use% Mounted on\n"
        "/dev/sda1      ext4   100G   10G   90G  10% /data\rsite: {circuit: {volts: 1, amps: 1}}\n"
        "/dev/sdb1      ext4   100G   10G   90G  10% /x\u2028probe: {}\x85kind: Workload\x1b]0;t\x07\n".encode()
    )
    out = tmp_path / "rig.yaml"
    result = run_cli("probe", "--from", str(df), "-o", str(out))
    assert result.exit_code == 0, result.err
    written = out.read_bytes().decode("utf-8")
    assert not [char for char in written if char != "\n" and (ord(char) < 32 or 0x7F <= ord(char) <= 0x9F)]
    assert "\u2028" not in written
    spec = yaml.safe_load(written)
    assert spec["kind"] == "Rig" and "site" not in spec
    [checked] = validate_files([str(out)])
    assert not checked.problems
    shown = run_cli("evidence", str(df)).out
    assert not [char for char in shown if char != "\n" and ord(char) < 32]


def test_evidence_text_shows_busbw_by_size(run_cli) -> None:  # type: ignore[no-untyped-def]
    text = run_cli("evidence", str(DATA / "node8" / "a3-h100-allreduce-8gpu.txt")).out
    assert "nccl-tests all_reduce: busbw 479.93 GB/s at 8,589,934,592 bytes, 8 ranks, 31 sizes" in text
    assert "busbw by size (GB/s): 1.0 MiB 46.22, 2.0 MiB 84.68," in text and text.rstrip().endswith(
        "8.0 GiB 479.93"
    )


def test_evidence_json_writes_no_nan_nor_raw_controls() -> None:
    """A plugin parser's non-finite float is null; C1 and bidirectional controls are \\u escapes."""
    from rigcheck.evidence.model import Bandwidth
    from rigcheck.evidence.render import render_json

    item = Evidence(source="x\u202e.txt", tool="plugin", bandwidth=[Bandwidth(kind="h2d", gbps=float("nan"))])
    text = render_json([item])
    assert "NaN" not in text and "\u202e" not in text and "\\u202e" in text
    assert json.loads(text)["evidence"][0]["bandwidth"][0]["gbps"] is None
