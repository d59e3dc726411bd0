"""``rigcheck estimate --trace`` where it must not trace: without the extra ``trace``, and for workloads
the tracer cannot run. Nothing here needs torch, transformers, peft or bitsandbytes (tests/test_trace.py
runs real traces)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rigcheck.trace
from rigcheck.trace import INSTALL_HINT, REQUIRED, missing_modules

from .conftest import REPO, CliResult
from .test_import_hygiene import PAIR, imported

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MODEL = "{name: tiny, layers: 2, hidden: 256, heads: 4, kv_heads: 2, ffn: 512, vocab: 1000, mlp: swiglu}"
TRACE_MODULES = {"torch", "transformers", "peft", "bitsandbytes"}
TRAIN = "task: full_finetune\nbatch: {micro: 1, seq_len: 64}\n"


def workload(tmp_path: Path, body: str, name: str = "tiny") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"apiVersion: rigcheck/v1\nkind: Workload\nname: {name}\nmodel: {MODEL}\n{body}")
    return str(path)


@pytest.fixture
def hide(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Make ``importlib.util.find_spec`` answer None for some of the trace extra's modules and "found"
    for the others (whatever this environment has installed); every other name is looked up as usual."""

    def apply(*hidden: str) -> None:
        real = importlib.util.find_spec

        def find_spec(name: str, package: str | None = None) -> Any:
            if name in hidden:
                return None
            if name in TRACE_MODULES:
                return object()
            return real(name, package)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    return apply


# -- the extra --------------------------------------------------------------------------------------


def test_the_trace_extra_is_what_missing_modules_checks() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    assert extras["trace"] == ["torch>=2.4", "transformers>=4.56", "peft>=0.17"]
    # bitsandbytes is installed on its own (CI's package index does not carry it)
    assert not any("bitsandbytes" in requirement for requirement in extras["trace"])
    assert tuple(requirement.split(">=")[0] for requirement in extras["trace"]) == REQUIRED
    assert extras["torch"] == ["torch>=2.1"] and extras["live"] == ["nvidia-ml-py>=12.535"]
    assert "pip install 'rigcheck[trace]'" in INSTALL_HINT and "pip install bitsandbytes" in INSTALL_HINT


def test_missing_modules_reports_what_find_spec_cannot_find(
    hide: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    hide("transformers", "bitsandbytes")
    assert missing_modules() == ["transformers"]  # bitsandbytes is not in the extra's default set
    assert missing_modules((*REQUIRED, "bitsandbytes")) == ["transformers", "bitsandbytes"]
    assert missing_modules(("json",)) == []  # a real lookup

    def broken(name: str, package: str | None = None) -> Any:
        raise ValueError(f"{name}.__spec__ is None")  # a half-imported module

    monkeypatch.setattr(importlib.util, "find_spec", broken)
    assert missing_modules(("peft",)) == ["peft"]


# -- without the extra: exit 2, one line --------------------------------------------------------------


@pytest.mark.parametrize(
    ("hidden", "body", "named"),
    [
        (("transformers",), TRAIN, "transformers"),
        (("torch", "peft"), "task: lora\nlora: {rank: 8}\nbatch: {micro: 1, seq_len: 64}\n", "torch, peft"),
        (("bitsandbytes",), "task: qlora\nlora: {rank: 8}\nbatch: {micro: 1, seq_len: 64}\n", "bitsandbytes"),
        (("bitsandbytes",), "task: inference\nquantization: nf4\n", "bitsandbytes"),
    ],
)
def test_estimate_trace_without_the_extra_is_one_line(
    run_cli: Callable[..., CliResult],
    hide: Callable[..., None],
    tmp_path: Path,
    hidden: tuple[str, ...],
    body: str,
    named: str,
) -> None:
    hide(*hidden)
    result = run_cli("estimate", workload(tmp_path, body), "--trace")
    assert result.exit_code == 2
    assert result.out == ""
    assert result.err == f"rigcheck estimate --trace needs {named}: {INSTALL_HINT}\n"


def test_without_bitsandbytes_only_4bit_workloads_need_it(
    hide: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rigcheck.core.engine.errors import UsageError

    hide("bitsandbytes")
    reached: list[str] = []

    def fake_step(inputs: Any, progress: Any = None) -> str:
        reached.append(inputs.task)
        return "traced"

    import rigcheck.trace.step

    monkeypatch.setattr(rigcheck.trace.step, "trace_step", fake_step)
    from .traced_grid import inputs_of

    model = {"name": "tiny", "layers": 2, "hidden": 256, "heads": 4, "ffn": 512, "vocab": 1000}
    lora = {"model": model, "task": "lora", "lora": {"rank": 8}, "batch": {"micro": 1, "seq_len": 64}}
    assert rigcheck.trace.trace_memory(inputs_of({"id": "lora", "workload": lora})) == "traced"
    with pytest.raises(UsageError, match=r"needs bitsandbytes: "):
        rigcheck.trace.trace_memory(inputs_of({"id": "qlora", "workload": {**lora, "task": "qlora"}}))
    assert reached == ["lora"]


# -- workloads the tracer cannot run: exit 2, one line ------------------------------------------------

CANNOT = "rigcheck estimate --trace cannot run this workload: "


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("parallelism: {tp: 2}", "tensor, pipeline, context or expert parallelism"),
        ("parallelism: {pp: 2}", "tensor, pipeline, context or expert parallelism"),
        ("parallelism: {dp: 2, zero: 2}", "DeepSpeed ZeRO (write the sharding as parallelism.fsdp"),
        ("parallelism: {dp: 2}", "plain data parallelism"),
        ("parallelism: {dp: 2, fsdp: full_shard, offload: cpu}", "CPU/NVMe offload"),
        ("precision: fp8-mixed", "precision fp8-mixed"),
        ("optimizer: adamw8bit", "8-bit optimizers have no fake kernels"),
        ("activation_checkpointing: selective", "selective activation checkpointing"),
        ("parallelism: {dp: 2, fsdp: no_shard}", "plain data parallelism"),
    ],
)
def test_estimate_trace_of_an_untraceable_workload_is_one_line(
    run_cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, body: str, why: str
) -> None:
    # as if the extra were installed: trace_step refuses these before it imports torch
    monkeypatch.setattr(rigcheck.trace, "missing_modules", lambda names=REQUIRED: [])
    path = workload(tmp_path, f"{TRAIN}{body}\n")
    result = run_cli("estimate", path, "--trace")
    assert result.exit_code == 2
    assert result.out == ""
    [line] = result.err.splitlines()
    assert line.startswith(CANNOT) and why in line, line


# -- the check path never imports the tracer ---------------------------------------------------------


def test_check_lint_and_plain_estimate_never_import_the_tracer(tmp_path: Path) -> None:
    """tests/test_import_hygiene.py forbids torch, which rigcheck.trace and transformers do not import
    at module level; this forbids them by name."""
    runs = [
        ("check", *PAIR, "--format", "json", "-o", os.devnull),
        ("lint", "specs", "--format", "text", "-o", str(tmp_path / "out.txt")),
        ("estimate", PAIR[1], "-f", "json", "-o", os.devnull),
    ]
    for args in runs:
        modules = imported(*args)
        loaded = {m for m in modules if m.startswith("rigcheck.trace") or m.split(".")[0] in TRACE_MODULES}
        assert not loaded, (args[0], sorted(loaded))


def test_estimate_json_without_trace_has_no_trace_key(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    result = run_cli("estimate", workload(tmp_path, TRAIN), "-f", "json")
    assert result.exit_code == 0, result.err
    assert "trace" not in json.loads(result.out)
