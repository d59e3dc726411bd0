"""Nodes written alike are checked once and the first one's findings stamped onto the others
(``CheckContext.walk_nodes``): the report must be the one that checking every node gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcheck.core import context
from rigcheck.core.context import CheckContext

NODE = """\
  - name: {name}
    gpus: {{model: H100 SXM, count: 8}}
    gpu_interconnect: {{kind: nvswitch}}
    cpu: {{model: Intel Xeon Platinum 8480+, sockets: 2, cores: 112}}
    memory_gib: 2048
    psu: {{watts: 3300, count: 6}}
    storage: [{{kind: nvme, count: 8, capacity_gb: 3840}}]
    network: [{{kind: infiniband, gbps: 400, count: 8}}]
    software: {{driver: '535.104.05', torch: 2.3.0+cu121}}
"""


def _report(run_cli, rig: Path, workload: Path, *, stamped: bool) -> list[dict]:  # type: ignore[no-untyped-def]
    with pytest.MonkeyPatch.context() as patch:
        if not stamped:  # no node is anyone's twin: each is checked
            patch.setattr(CheckContext, "twins", property(lambda self: {}))
        result = run_cli("check", str(rig), str(workload), "-f", "json")
    assert result.exit_code in (0, 1), result.err
    return result.json()["findings"]


@pytest.mark.parametrize("names", [["a1", "a2", "a3", "a4", "a5"], ["", "", "", "", ""]])
def test_stamped_findings_are_the_checked_ones(tmp_path, run_cli, names) -> None:  # type: ignore[no-untyped-def]
    body = "".join(
        NODE.format(name=name) if name else NODE.replace("  - name: {name}\n    ", "  - ").format()
        for name in names
    )
    rig = tmp_path / "rig.yaml"
    rig.write_text(f"apiVersion: rigcheck/v1\nkind: Rig\nname: alike\nnodes:\n{body}", encoding="utf-8")
    workload = tmp_path / "workload.yaml"
    workload.write_text(
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: llama-3-8b}\ntask: full-finetune\n"
        "precision: bf16\nbatch: {micro: 1, seq_len: 4096}\n",
        encoding="utf-8",
    )
    calls: dict[object, int] = {}  # the stamps themselves as keys: kept alive, so never confused
    onto = context._Stamp.onto

    def counted(stamp, node):  # type: ignore[no-untyped-def]
        calls[stamp] = calls.get(stamp, 0) + 1
        return onto(stamp, node)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(context._Stamp, "onto", counted)
        stamped = _report(run_cli, rig, workload, stamped=True)
    # each stamp was verified on the second and last node (2 calls) and then trusted for the 2 between
    assert calls and set(calls.values()) == {4}
    checked = _report(run_cli, rig, workload, stamped=False)
    assert len(stamped) > 5 * 10  # every node has findings of its own
    assert json.dumps(stamped) == json.dumps(checked)  # the same findings, in the same order
    lines = {finding["location"]["line"] for finding in stamped if finding.get("location")}
    assert len(lines) > 5  # the stamped findings point at their own node's lines
