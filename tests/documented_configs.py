"""The library of documented configurations (tests/data/documented_configs.yaml, issue 46 point 5):
configurations that vendors or public projects document as working, and reported out-of-memory runs,
each as a rig and a workload, with MEM001's verdict on it.

A case's rig is its GPUs, eight to a node (a job of 16 is two nodes of 8), with the source's usable
memory where it states one. What MEM001 must say: ``pass`` for a configuration documented to work,
``fail`` for one reported out of memory. The split into dev and holdout is by a hash of the id, as for
the published measurements (tests/memory_cases.py)."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.core.spec.loader import load_yaml_file
from rigcheck.core.spec.yaml_writer import dump_yaml
from tests.memory_cases import split_of

DATA = Path(__file__).parent / "data" / "documented_configs.yaml"
#: GPUs in one node of a case's rig (the DGX/HGX size every multi-node source uses).
GPUS_PER_NODE = 8
WANTED = {"works": "pass", "oom": "fail"}


@dataclass(frozen=True)
class Case:
    id: str
    outcome: str
    url: str
    gpu: dict[str, Any]
    workload: dict[str, Any]

    @property
    def wanted(self) -> str:
        return WANTED[self.outcome]

    @property
    def split(self) -> str:
        return split_of(self.id)

    def rig(self) -> dict[str, Any]:
        count = int(self.gpu["count"])
        per_node = min(count, GPUS_PER_NODE)
        node: dict[str, Any] = {"name": "node", "gpus": {"model": self.gpu["model"], "count": per_node}}
        if self.gpu.get("memory_gib"):
            node["gpus"]["memory_gib"] = self.gpu["memory_gib"]
        if count > per_node:
            node["count"] = count // per_node
        return {"apiVersion": "rigcheck/v1", "kind": "Rig", "name": f"{self.id}-rig", "nodes": [node]}

    def workload_spec(self) -> dict[str, Any]:
        return {"apiVersion": "rigcheck/v1", "kind": "Workload", "name": self.id, **self.workload}


def load_cases() -> list[Case]:
    data = load_yaml_file(str(DATA)).data
    return [
        Case(item["id"], item["outcome"], item["url"], dict(item["gpu"]), dict(item["workload"]))
        for item in data["cases"]
    ]


def mem001(case: Case) -> dict[str, Any]:
    """MEM001's finding on the case (the worst over its GPU models), from ``rigcheck check`` as a user
    runs it."""
    from rigcheck.cli import main

    with tempfile.TemporaryDirectory() as folder:
        rig, workload = Path(folder, "rig.yaml"), Path(folder, "workload.yaml")
        rig.write_text(dump_yaml(case.rig()), encoding="utf-8")
        workload.write_text(dump_yaml(case.workload_spec()), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", str(rig), str(workload), "--select", "MEM001", "-f", "json"])
        if code not in (0, 1):
            raise RuntimeError(f"{case.id}: rigcheck check exited {code}: {err.getvalue().strip()}")
    findings = [f for f in json.loads(out.getvalue())["findings"] if f["code"] == "MEM001"]
    order = {"pass": 0, "skip": 1, "warn": 2, "fail": 3}
    return max(findings, key=lambda f: order[f["severity"]])
