"""Published speed measurements (tests/data/speed_measurements.yaml) estimated by rigcheck, with the two
rules of thumb beside them. Shared by tests/test_speed_accuracy.py and benchmarks/speed_accuracy.py.

Each case's ``rigcheck:`` block becomes a rig (its GPUs, their link, the nodes' network) and a workload;
the estimate is read on the case's basis:

- ``per_seq`` tokens/s of one sequence; ``per_seq_ms`` the same given as ms per output token;
- ``aggregate`` output tokens/s of all sequences; ``aggregate_per_gpu`` that over the GPUs;
- ``prompt_tps`` prompt tokens/s of the prefill; ``ttft_ms`` time to first token;
- ``tps`` training tokens/s of the job; ``tps_per_gpu``; ``step_s`` seconds per optimizer step (scored as
  tokens/s); ``tflops_executed_per_gpu`` achieved TFLOPS per GPU counting the recomputed forward.

Anchors: the bandwidth rule (tokens/s per sequence = bandwidth / weight bytes, every sequence at that
rate) and the flat-MFU rule (tokens/s = GPUs x peak x 0.35 / (6 P + 12 L q s), no communication) that
rigcheck's own estimate was before issue 13.
"""

from __future__ import annotations

import functools
import hashlib
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.core.spec.loader import load_yaml_file

DATA = Path(__file__).resolve().parent / "data" / "speed_measurements.yaml"
BEFORE = Path(__file__).resolve().parents[1] / "benchmarks" / "speed_accuracy_before.yaml"
#: The cases of a later round (new sources, split by the same hash before they were scored) and rigcheck's
#: estimates of them before that round's changes.
ROUND = "2026-12-07"
BEFORE_ROUND = Path(__file__).resolve().parents[1] / "benchmarks" / "speed_round_2026-12-07_before.yaml"
GIB = 2**30
TRAINING_BASES = ("tps", "tps_per_gpu", "step_s", "tflops_executed_per_gpu", "tflops", "mfu")


def split_of(case_id: str) -> str:
    """``holdout`` for a third of the cases, by a hash of the id (fixed before any scoring)."""
    return "holdout" if hashlib.sha256(case_id.encode()).digest()[0] % 3 == 0 else "dev"


@dataclass(frozen=True)
class SpeedResult:
    case_id: str
    kind: str  # decode | serving | prefill | training
    basis: str
    measured: float  # on the basis, in the unit the comparison uses (tokens/s, ms)
    estimated: float
    bandwidth_rule: float | None  # the naive anchor, decode and serving only
    flat_mfu_rule: float | None  # the naive anchor, training only
    scored: bool
    reason: str
    binds: str = ""
    quality: str = ""
    before: float | None = None  # rigcheck's estimate before issue 13 (benchmarks/speed_accuracy_before.yaml)
    added: str = ""  # the date the case was added (ROUND: the later round)
    group: str = ""  # the engine (inference) or framework (training) the case ran on

    @property
    def split(self) -> str:
        return split_of(self.case_id)

    @property
    def error(self) -> float:
        return self.estimated / self.measured - 1

    def before_error(self) -> float | None:
        return None if self.before is None else self.before / self.measured - 1

    def anchor_error(self) -> float | None:
        anchor = self.bandwidth_rule if self.bandwidth_rule is not None else self.flat_mfu_rule
        return None if anchor is None else anchor / self.measured - 1

    @property
    def training(self) -> bool:
        return self.basis in TRAINING_BASES


@functools.cache
def load_cases() -> tuple[dict[str, Any], ...]:
    return tuple(load_yaml_file(str(DATA)).data["cases"])


def _yaml(kind: str, name: str, fields: dict[str, Any]) -> str:
    lines = ["apiVersion: rigcheck/v1", f"kind: {kind}", f"name: {name}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


def rig_fields(tr: dict[str, Any], training: bool) -> dict[str, Any]:
    gpus = {"model": tr["gpu"], "count": tr["per_node"] if training else tr["gpus"]}
    if tr.get("power"):
        gpus["power_limit_w"] = tr["power"]
    gpus.update(tr.get("rig_gpu") or {})
    node: dict[str, Any] = {"name": "n", "count": tr["nodes"] if training else 1, "gpus": gpus}
    icx = tr.get("icx") if training else None
    if icx:
        node["gpu_interconnect"] = {"kind": icx}
    if training and tr.get("net"):
        node["network"] = tr["net"]
    return {"nodes": [node]}


def workload_fields(tr: dict[str, Any], training: bool, case_id: str) -> dict[str, Any]:
    model = tr["model"]
    fields: dict[str, Any] = {"model": {"preset": model} if isinstance(model, str) else model}
    if training:
        fields["task"] = tr["task"]
        fields["precision"] = tr["precision"]
        fields["framework"] = tr["framework"]
        fields["activation_checkpointing"] = tr["ac"]
        fields["batch"] = {"micro": tr["micro"], "seq_len": tr["seq"], "grad_accum": tr["accum"]}
        fields["parallelism"] = tr["par"]
        if tr.get("lora"):
            fields["lora"] = tr["lora"]
        return fields
    fields["task"] = "inference"
    fields["precision"] = tr.get("precision", "bf16-true")
    if tr.get("quant"):
        fields["quantization"] = tr["quant"]
    par: dict[str, int] = {}
    if tr.get("par"):
        kind, degree = tr["par"].split()
        par[kind] = int(degree)
    fields["parallelism"] = par or {"dp": 1}
    inference: dict[str, Any] = {"engine": tr["engine"], "concurrency": tr.get("conc") or 1}
    prompt, output, context = tr.get("prompt"), tr.get("output"), tr.get("context")
    if prompt:
        inference["prompt_len"] = prompt
    if output:
        inference["output_len"] = output
    inference["context_len"] = context or (prompt or 0) + (output or 0) or 2048
    if tr.get("kv"):
        inference["kv_cache_dtype"] = tr["kv"]
    fields["inference"] = inference
    return fields


@functools.cache
def _catalog() -> Any:
    from rigcheck.core.catalog.catalog import Catalog, load_catalog_file
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    return catalog


def context_of(case: dict[str, Any]) -> Any:
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.spec.documents import parse_spec

    tr = case["rigcheck"]
    training = tr["basis"] in TRAINING_BASES
    rig = parse_spec(_yaml("Rig", "r", rig_fields(tr, training)), "rig.yaml")
    workload = parse_spec(
        _yaml("Workload", case["id"], workload_fields(tr, training, case["id"])), "workload.yaml"
    )
    return CheckContext(rig, workload, _catalog())


def estimate_case(case: dict[str, Any]) -> SpeedResult:
    from rigcheck.core.engine.rig_estimate import estimate_on
    from rigcheck.core.estimate.throughput import matmul_params, peak_tflops

    tr = case["rigcheck"]
    basis = tr["basis"]
    scored = tr.get("scored", True)
    reason = tr.get("reason", "")
    ctx = context_of(case)
    node = ctx.nodes[0]
    gpu = node.gpus[0]
    on_rig = estimate_on(ctx, node, gpu)
    estimate = on_rig.estimate
    measured = float(case["measured_value"])
    inputs = estimate.inputs
    bandwidth_rule = flat = None
    binds = ""
    if basis in TRAINING_BASES:
        speed = estimate.training
        if speed is None:
            return SpeedResult(
                case["id"], "training", basis, measured, float("nan"), None, None, False, "no TFLOPS"
            )
        world = max(1, inputs.world)
        tps = speed.tokens_per_second.default
        peak, _ = peak_tflops(gpu.facts, inputs.precision)
        naive = world * (peak or 0) * 1e12 * 0.35 / speed.flops_per_token
        binds = speed.binds
        if basis == "tps":
            value, flat = tps, naive
        elif basis == "tps_per_gpu":
            value, flat = tps / world, naive / world
        elif basis == "step_s":
            seconds = measured / 1000 if "ms" in str(case.get("measured_unit", "")) else measured
            measured = speed.tokens_per_step / seconds  # seconds per step -> tokens/s
            value, flat = tps, naive
        elif basis in ("tflops", "mfu"):  # not scored: the source's FLOP count is not known
            value, flat = (
                tps / world * speed.flops_per_token / 1e12,
                naive / world * speed.flops_per_token / 1e12,
            )
        else:  # achieved TFLOPS per GPU, recomputation counted
            value = tps / world * speed.executed_flops_per_token / 1e12
            flat = naive / world * speed.executed_flops_per_token / 1e12
        kind = "training"
    else:
        speed = estimate.decode
        if speed is None:
            return SpeedResult(
                case["id"], "decode", basis, measured, float("nan"), None, None, False, "no bandwidth"
            )
        weights = estimate.memory.component("weights").bytes * inputs.tp * inputs.pp  # the whole model's
        bandwidth = gpu.facts.memory_bandwidth_gbps * 1e9
        per_seq_rule = bandwidth * inputs.tp / weights
        binds = speed.binds
        gpus = inputs.tp * inputs.pp
        if basis == "per_seq":
            value, bandwidth_rule, kind = speed.tokens_per_second_per_seq.default, per_seq_rule, "decode"
        elif basis == "per_seq_ms":
            measured = 1000 / measured
            value, bandwidth_rule, kind = speed.tokens_per_second_per_seq.default, per_seq_rule, "decode"
        elif basis in ("aggregate", "aggregate_per_gpu"):
            value = speed.aggregate_tokens_per_second.default
            bandwidth_rule = per_seq_rule * inputs.concurrency
            if basis == "aggregate_per_gpu":
                value, bandwidth_rule = value / gpus, bandwidth_rule / gpus
            kind = "serving"
        elif basis == "prompt_tps":
            kind = "prefill"
            value = (
                speed.serving.prompt_tokens / (speed.ttft_ms.default / 1e3) if speed.ttft_ms else float("nan")
            )
            peak, _ = peak_tflops(gpu.facts, inputs.precision)
            bandwidth_rule = gpus * (peak or 0) * 1e12 * 0.5 / (2 * matmul_params(inputs))
        else:  # ms to first token
            kind = "prefill"
            value = speed.ttft_ms.default if speed.ttft_ms else float("nan")
            peak, _ = peak_tflops(gpu.facts, inputs.precision)
            prompt = speed.serving.prompt_tokens
            bandwidth_rule = 2 * matmul_params(inputs) * prompt / (gpus * (peak or 1) * 1e12 * 0.5) * 1e3
    return SpeedResult(
        case["id"],
        kind,
        basis,
        measured,
        value,
        bandwidth_rule,
        flat,
        scored,
        reason,
        binds,
        str(case.get("quality", "")),
        (_before_round() if str(case.get("added", "")) == ROUND else _before()).get(case["id"]),
        str(case.get("added", "")),
        str(tr.get("framework") or tr.get("engine") or "other"),
    )


@functools.cache
def _before() -> dict[str, float | None]:
    estimates = load_yaml_file(str(BEFORE)).data["estimates"]
    return {key: (float(value) if value is not None else None) for key, value in estimates.items()}


@functools.cache
def _before_round() -> dict[str, float | None]:
    estimates = load_yaml_file(str(BEFORE_ROUND)).data["estimates"]
    return {key: (float(value) if value is not None else None) for key, value in estimates.items()}


def all_results() -> list[SpeedResult]:
    return [estimate_case(case) for case in load_cases()]


def summary(results: list[SpeedResult]) -> dict[str, float]:
    scored = [r for r in results if r.scored]
    errors = [abs(r.error) for r in scored]
    anchors = [abs(e) for r in scored if (e := r.anchor_error()) is not None]
    before = [abs(e) for r in scored if (e := r.before_error()) is not None]
    return {
        "before_median_abs_error": statistics.median(before) if before else float("nan"),
        "before_within_20": sum(e <= 0.20 for e in before) / max(1, len(before)),
        "cases": len(results),
        "scored": len(scored),
        "median_abs_error": statistics.median(errors) if errors else float("nan"),
        "within_20": sum(e <= 0.20 for e in errors) / max(1, len(errors)),
        "within_50": sum(e <= 0.50 for e in errors) / max(1, len(errors)),
        "anchor_median_abs_error": statistics.median(anchors) if anchors else float("nan"),
    }


def table(results: list[SpeedResult]) -> str:
    rows = [
        f"{'case':58} {'basis':12} {'measured':>10} {'rigcheck':>10} {'error':>7} {'anchor':>10} {'error':>7}  binds"
    ]
    for r in results:
        anchor = r.bandwidth_rule if r.bandwidth_rule is not None else r.flat_mfu_rule
        anchor_error = r.anchor_error()
        mark = "" if r.scored else f"  (not scored: {r.reason})"
        rows.append(
            f"{r.case_id:58} {r.basis:12} {r.measured:10.4g} {r.estimated:10.4g} {r.error:+7.1%} "
            f"{(anchor if anchor is not None else float('nan')):10.4g} "
            f"{(anchor_error if anchor_error is not None else float('nan')):+7.1%}  {r.binds[:40]}{mark}"
        )
    return "\n".join(rows)
