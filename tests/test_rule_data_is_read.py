"""Every value in specs/rules/*.yaml is read by some rule (issue 16): a threshold that nothing reads
is a number the docs promise and the code ignores (``throughput.yaml targets.warn_margin`` was one).

A key counts as read when reading the case library and the shipped specs through ``rigcheck check``
and ``rigcheck lint`` reads it (:func:`rigcheck.core.catalog.facts.record_reads`), or when the code names the
section and the key in one module (a branch the corpus does not reach), or when its section is a
table looked up by a spec value (``TABLES``: each row is one choice of that value).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import yaml

from rigcheck.cli import main
from rigcheck.core.catalog.facts import load_rule_facts, record_reads
from rigcheck.core.estimate.fixes import KEPT
from rigcheck.resources import rules_data_file

REPO = Path(__file__).resolve().parents[1]
META = {"source", "as_of", "confidence", "notes", "note"}
#: Sections whose keys are the values of a spec field: one row per choice.
TABLES = {
    "frameworks.*": "workload framework (each section is one framework)",
    "memory.optimizer_states": "workload optimizer",
    "memory.adapters": "adapter precision",
    "memory.quantization_bits": "quantization method",
    "memory.partial_quantization": "quantization method (the schemes that quantise only the MLP)",
    "power.efficiency_80plus": "PSU efficiency rating",
    "power.connectors": "GPU power connector",
    "storage.device_defaults": "storage kind",
    "storage.cloud_volumes": "cloud volume type",
    "reliability.failure_rate": "workload failure_prior",
}


def _quietly(args: list[str], cwd: Path) -> None:
    os.chdir(cwd)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(args)


def _spec(kind: str, name: str, body: dict[str, object]) -> str:
    lines = ["apiVersion: rigcheck/v1", f"kind: {kind}", f"name: {name}"]
    return "\n".join(lines + [f"{key}: {json.dumps(value)}" for key, value in body.items()]) + "\n"


def _read_by_the_corpus(tmp_path: Path) -> set[tuple[str, str, str]]:
    KEPT.clear()  # the searches for fixes estimate afresh: every value they read is read here
    with record_reads() as reads:
        _quietly(["lint", "specs/", "-f", "json"], REPO)
        for path in sorted((REPO / "tests" / "rules").glob("*/*.yaml")):
            case = yaml.safe_load(path.read_text(encoding="utf-8"))
            name = path.stem.replace("_", "-")
            files = [tmp_path / f"{name}.rig.yaml"]
            files[0].write_text(_spec("Rig", name, case["rig"]), encoding="utf-8")
            if case.get("workload"):
                files.append(tmp_path / f"{name}.workload.yaml")
                files[1].write_text(_spec("Workload", name, case["workload"]), encoding="utf-8")
            _quietly(["check", *map(str, files), "-f", "json"], tmp_path)
    return reads


def _named_in_code() -> list[str]:
    return [path.read_text(encoding="utf-8") for path in sorted((REPO / "rigcheck").rglob("*.py"))]


def _quoted(word: str) -> re.Pattern[str]:
    return re.compile(r"[\"']" + re.escape(word) + r"[\"']")


def test_every_rule_value_is_read(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    reads = _read_by_the_corpus(tmp_path)
    sources = _named_in_code()
    unread = []
    for data in sorted(rules_data_file("x").parent.glob("*.yaml")):
        for section, values in load_rule_facts(data.stem).items():
            if f"{data.stem}.{section}" in TABLES or f"{data.stem}.*" in TABLES:
                assert any((data.stem, section, key) in reads for key in values) or any(
                    _quoted(section).search(text) for text in sources
                ), f"the table {data.stem}.{section} is never read"
                continue
            for key in values:
                if key in META or (data.stem, section, key) in reads:
                    continue
                if any(_quoted(section).search(text) and _quoted(key).search(text) for text in sources):
                    continue
                unread.append(f"{data.stem}.{section}.{key}")
    assert not unread, "read these where the rule uses the value, or remove them:\n" + "\n".join(unread)
