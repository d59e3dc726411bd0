"""Issue 48: the pod self-check saved as one file (``ssh pod "nvidia-smi && df -h && pip show torch" >
pod.txt``) is split where each tool's output begins and each part is read: ``probe --from`` gets the
GPUs, the driver, the storage and the torch build, and ``check`` then fails a +cpu torch (CUDA004), as
it does when the three outputs are three files."""

from __future__ import annotations

import json
from pathlib import Path

from rigcheck.evidence.split import split_outputs

SMI = """Mon Dec  7 10:12:01 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   33C    P0             69W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |
| N/A   31C    P0             68W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""
DF = """Filesystem      Size  Used Avail Use% Mounted on
overlay         2.0T  120G  1.8T   7% /
/dev/nvme0n1    3.5T  1.2T  2.3T  35% /workspace
"""
PIP = """Name: torch
Version: 2.5.1+cpu
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
Location: /usr/local/lib/python3.11/site-packages
Requires: filelock, jinja2
Required-by:
"""


def _files(tmp_path: Path) -> tuple[str, list[str]]:
    one = tmp_path / "pod.txt"
    one.write_text(SMI + DF + PIP)
    three = []
    for name, text in (("smi.txt", SMI), ("df.txt", DF), ("pip.txt", PIP)):
        (tmp_path / name).write_text(text)
        three.append(str(tmp_path / name))
    return str(one), three


def test_the_parts_are_where_each_tool_begins() -> None:
    parts = split_outputs(SMI + DF + PIP)
    smi_lines = SMI.count("\n")
    assert [(first, last) for first, last, _ in parts][:2] == [(1, smi_lines), (smi_lines + 1, smi_lines + 3)]
    assert [body for _, _, body in parts] == [SMI.rstrip("\n"), DF.rstrip("\n"), PIP]
    assert len(split_outputs(SMI)) == 1 and split_outputs(DF)[0][2] == DF  # one tool: one part, unchanged


def test_a_prompt_echoing_the_next_command_starts_a_part_and_is_left_out() -> None:
    text = "$ nvidia-smi\n" + SMI + "$ df -h\n" + DF
    bodies = [body for _, _, body in split_outputs(text)]
    assert len(bodies) == 2 and not any(line.startswith("$ ") for body in bodies for line in body.split("\n"))


def test_one_file_reads_as_the_three_files_do(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    one, three = _files(tmp_path)
    listed = run_cli("evidence", one, "-f", "json")
    assert listed.exit_code == 0
    tools = [item["tool"] for item in json.loads(listed.out)["evidence"]]
    assert tools == [
        item["tool"] for item in json.loads(run_cli("evidence", *three, "-f", "json").out)["evidence"]
    ]
    rigs = []
    for files, name in (([one], "one.yaml"), (three, "three.yaml")):
        out = tmp_path / name
        assert run_cli("probe", "--from", *files, "--name", "pod", "-o", str(out)).exit_code == 0
        rigs.append(out)
    checks = [run_cli("check", str(rig), "--select", "CUDA004", "-f", "json").json() for rig in rigs]
    assert [[(f["code"], f["severity"]) for f in c["findings"]] for c in checks] == [
        [("CUDA004", "fail")]
    ] * 2
    one_rig, three_rig = (rig.read_text().split("\nprobe:")[0].split("\napiVersion")[1] for rig in rigs)
    assert one_rig == three_rig  # the same spec: GPUs, driver, storage, torch
