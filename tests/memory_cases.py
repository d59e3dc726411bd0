"""The published memory measurements (tests/data/memory_measurements.yaml) as rigcheck workloads,
estimated on each case's measurement basis. Shared by tests/test_memory_accuracy.py and
benchmarks/memory_accuracy.py."""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.estimate.architecture import resolve_architecture
from rigcheck.core.estimate.estimate import GIB, estimate_workload, spread_of
from rigcheck.core.spec.documents import parse_spec
from rigcheck.core.spec.loader import load_yaml_file

DATA = Path(__file__).resolve().parent / "data"


#: The rounds of new cases: each was written down, translated and split before rigcheck was scored on it.
ROUNDS = ("2026-12-01", "2026-12-08")
#: The first round (issue 12), the set the spread of specs/rules/memory.yaml was fitted on (its dev half).
NEW_SET = ROUNDS[0]


def split_of(case_id: str) -> str:
    """``holdout`` for a third of the new cases, by a hash of the id (fixed before any scoring)."""
    import hashlib

    return "holdout" if hashlib.sha256(case_id.encode()).digest()[0] % 3 == 0 else "dev"


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    basis: str
    measured_gib: float | None
    estimated_gib: float
    accelerate_gib: float
    scored: bool
    reason: str
    quality: str
    added: str = ""
    expected_fit: str = ""  # refuse | fits, for cases scored on the fit decision
    verdict: str = ""  # pass | warn | fail, MEM001's verdict on the case's GPU
    share: float = 0.0  # need / capacity on that GPU
    training: bool = True
    saved_gib: float = 0.0  # what the spread of saved activations applies to (memory.yaml spread)
    low_gib: float = 0.0  # MEM001's range on the case's basis (rigcheck.core.estimate.estimate.spread_of)
    high_gib: float = 0.0

    @property
    def in_range(self) -> bool:
        return self.measured_gib is not None and self.low_gib <= self.measured_gib <= self.high_gib

    @property
    def round(self) -> str:
        """The round of new cases it came in (``ROUNDS``), or "" for the published set."""
        return self.added if self.added in ROUNDS else ""

    @property
    def new(self) -> bool:
        return self.round == NEW_SET

    @property
    def split(self) -> str:
        return split_of(self.case_id) if self.round else "published"

    @property
    def has_number(self) -> bool:
        return self.measured_gib is not None

    @property
    def error(self) -> float:
        return self.estimated_gib / self.measured_gib - 1

    @property
    def accelerate_error(self) -> float:
        return self.accelerate_gib / self.measured_gib - 1

    @property
    def fit_right(self) -> bool:
        """A refused run must fail MEM001; a run that started must not."""
        if self.expected_fit == "refuse":
            return self.verdict == "fail"
        return self.verdict != "fail"


def load_cases() -> tuple[dict, dict]:  # type: ignore[type-arg]
    measurements = {
        case["id"]: case for case in load_yaml_file(str(DATA / "memory_measurements.yaml")).data["cases"]
    }
    workloads = load_yaml_file(str(DATA / "memory_cases_workloads.yaml")).data["cases"]
    return measurements, workloads


def workload_yaml(case_id: str, fields: dict) -> str:  # type: ignore[type-arg]
    import json

    lines = ["apiVersion: rigcheck/v1", "kind: Workload", f"name: {case_id}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


def accelerate_rule(estimate) -> float:  # type: ignore[no-untyped-def]
    """The rule of thumb of `accelerate estimate-memory`: the weights at their dtype, x 4 for training
    with Adam, x 1.2 for inference (docs/research/vram.md section 1)."""
    weights = estimate.memory.component("weights").bytes
    factor = 1.2 if estimate.inputs.task == "inference" else 4
    return weights * factor / GIB


def estimate_case(case_id: str, measurement: dict, spec: dict) -> CaseResult:  # type: ignore[type-arg]
    document = parse_spec(workload_yaml(case_id, spec["workload"]), f"{case_id}.yaml")
    arch = resolve_architecture(document.model.model, document=document)
    estimate = estimate_workload(document.model, arch=arch)
    if spec.get("cuda_context_gib") is not None:
        from rigcheck.core.estimate.memory import estimate_memory

        inputs = replace(estimate.inputs, cuda_context_gib=float(spec["cuda_context_gib"]))
        estimate = estimate._replace(inputs=inputs, memory=estimate_memory(inputs))
    memory = estimate.memory
    basis = spec["basis"]
    value = basis_gib(memory, basis)
    expected = spec.get("fit") or ("refuse" if basis == "refuse" else "")
    verdict, share = "", 0.0
    if expected:
        verdict, share = _fit(estimate, spec)
    measured = measurement.get("measured_peak_gib")
    facts = load_rule_facts("memory")
    components = set(facts["spread"]["saved_activations"]["components"])
    saved = sum(c.bytes for c in memory.components if c.at_peak and c.name in components) / GIB
    low, high = basis_range(spread_of(memory, facts), basis)
    return CaseResult(
        case_id,
        basis,
        float(measured) if measured is not None and basis != "refuse" else None,
        value,
        accelerate_rule(estimate),
        spec.get("scored", True),
        spec.get("reason", ""),
        str(measurement.get("quality", "")),
        str(measurement.get("added", "")),
        expected,
        verdict,
        share,
        estimate.inputs.training,
        saved,
        value + low / GIB,
        value + high / GIB,
    )


#: The mechanisms a measurement basis leaves out: allocated memory has no allocator slack and no context,
#: reserved memory no context; a weights figure holds nothing that spreads. (vLLM's estimates have no
#: allocator or context spread to leave out: rigcheck.core.estimate.estimate.spread_of.)
_BASIS_LEAVES_OUT = {
    "allocated": {"allocator_reserve", "cuda_context"},
    "reserved": {"cuda_context"},
    "weights": {"saved_activations", "engine_workspace", "allocator_reserve", "cuda_context"},
}


def basis_range(spread: dict[str, tuple[float, float]], basis: str) -> tuple[float, float]:
    """The spread's bytes below and above the estimate on a measurement basis."""
    parts = [value for name, value in spread.items() if name not in _BASIS_LEAVES_OUT.get(basis, set())]
    return sum(low for low, _ in parts), sum(high for _, high in parts)


def basis_gib(memory, basis: str) -> float:  # type: ignore[no-untyped-def]
    """The estimate on a measurement's basis (see the header of memory_cases_workloads.yaml)."""
    if basis == "weights":
        return memory.gib("weights")
    if basis == "vllm_non_kv":  # vLLM V0: everything but the KV cache, CUDA context and NCCL included
        return sum(memory.gib(name) for name in ("weights", "activations", "cuda_context", "nccl_buffers"))
    if basis == "vllm_v1_non_kv":  # vLLM V1: weights + torch peak + non-torch memory of the forward
        return sum(memory.gib(name) for name in ("weights", "activations", "nccl_buffers"))
    if basis == "vllm_torch_peak":
        return memory.gib("weights") + memory.gib("activations")
    if basis == "refuse":
        return memory.device / GIB
    return memory.total(basis) / GIB


@functools.cache
def _catalog():  # type: ignore[no-untyped-def]
    from rigcheck.core.catalog.catalog import Catalog, load_catalog_file
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    return catalog


def _fit(estimate, spec: dict) -> tuple[str, float]:  # type: ignore[no-untyped-def,type-arg]
    """MEM001's verdict for the case's GPU (the catalog's usable memory, or the capacity the source prints)."""
    from rigcheck.core.estimate.estimate import fit_verdict, usable_bytes

    gpu = _catalog().lookup(spec["gpu"])
    usable, _ = usable_bytes(gpu, memory_gib=spec.get("memory_gib"))
    if spec.get("memory_gib"):  # the capacity the source printed is what the process could use
        usable = float(spec["memory_gib"]) * GIB
    verdict = fit_verdict(estimate.memory, usable)
    return verdict.severity, verdict.share


def all_results() -> list[CaseResult]:
    measurements, workloads = load_cases()
    missing = set(measurements) - set(workloads)
    if missing:
        raise AssertionError(f"cases without a workload translation: {sorted(missing)}")
    return [estimate_case(case_id, measurements[case_id], workloads[case_id]) for case_id in measurements]


def summary(results: list[CaseResult]) -> dict[str, float]:
    scored = [result for result in results if result.scored and result.has_number]
    errors = [abs(result.error) for result in scored]
    accelerate = [abs(result.accelerate_error) for result in scored]
    fits = [result for result in results if result.scored and result.expected_fit]
    return {
        "cases": len(results),
        "scored": len(scored),
        "fit_cases": len(fits),
        "fit_right": sum(result.fit_right for result in fits),
        "median_abs_error": statistics.median(errors) if errors else float("nan"),
        "within_15": sum(error <= 0.15 for error in errors) / max(1, len(errors)),
        "within_10": sum(error <= 0.10 for error in errors) / max(1, len(errors)),
        "accelerate_median_abs_error": statistics.median(accelerate) if accelerate else float("nan"),
        "accelerate_within_15": sum(error <= 0.15 for error in accelerate) / max(1, len(accelerate)),
    }


def _deciles(values: list[float]) -> tuple[float, float]:
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return deciles[0], deciles[8]


#: Bases that hold an inference forward (the engine's workspaces show in them).
FORWARD_BASES = ("allocated", "vllm_non_kv", "vllm_v1_non_kv", "vllm_torch_peak")


def weighted_quantile(pairs: list[tuple[float, float]], q: float) -> float:
    """The smallest value whose cumulative weight reaches ``q`` of the whole (the weighted inverted
    distribution function): ``pairs`` are (value, weight)."""
    ordered = sorted(pairs)
    total, running = sum(weight for _, weight in ordered), 0.0
    for value, weight in ordered:
        running += weight
        if running >= q * total:
            return value
    return ordered[-1][0]


def fitted_spread(results: list[CaseResult]) -> dict[str, dict[str, float]]:
    """The spreads of specs/rules/memory.yaml ``spread`` that are fitted on the dev cases, per mechanism.
    Saved activations: the 10th and 90th percentiles of (measured - estimate) / saved over training
    measured as allocated, each case weighted by its saved bytes (the spread multiplies bytes: a case
    with 0.6 GiB saved and a 1 GiB miss from something else must not set the share for 40 GiB). Engine
    workspaces: the 10th and 90th percentiles (numpy's linear interpolation) of measured - estimate in
    GiB over inference whose basis holds the forward. The published set and the first round's dev half
    (``NEW_SET``, what the written spread was fitted on); no holdout is ever read."""
    dev = [
        r for r in results if r.split != "holdout" and r.round in ("", NEW_SET) and r.scored and r.has_number
    ]
    saved = [
        ((r.measured_gib - r.estimated_gib) / r.saved_gib, r.saved_gib)  # type: ignore[operator]
        for r in dev
        if r.training and r.basis == "allocated" and r.saved_gib > 0
    ]
    workspace = [
        r.measured_gib - r.estimated_gib  # type: ignore[operator]
        for r in dev
        if not r.training and r.basis in FORWARD_BASES
    ]
    work_low, work_high = _deciles(workspace)
    return {
        "saved_activations": {
            "low": weighted_quantile(saved, 0.1),
            "high": weighted_quantile(saved, 0.9),
            "cases": len(saved),
        },
        "engine_workspace": {"low_gib": work_low, "high_gib": work_high, "cases": len(workspace)},
    }


def coverage(results: list[CaseResult]) -> dict[str, tuple[int, int]]:
    """How many measured values lie within MEM001's range on their basis, of how many, by split."""
    out = {}
    for split in ("dev", "holdout"):
        chosen = [
            r for r in results if r.scored and r.has_number and (r.split == "holdout") == (split == "holdout")
        ]
        out[split] = (sum(r.in_range for r in chosen), len(chosen))
    return out


def table(results: list[CaseResult]) -> str:
    rows = [
        f"{'case':44} {'basis':11} {'measured':>9} {'rigcheck':>9} {'error':>7} {'accel.':>8} {'error':>7}"
    ]
    for r in results:
        mark = "" if r.scored else "  (not scored: " + r.reason + ")"
        if r.expected_fit:
            ok = "right" if r.fit_right else "WRONG"
            mark = f"  [{r.expected_fit}: MEM001 {r.verdict} at {r.share:.0%} of the GPU, {ok}]" + mark
        if r.has_number:
            rows.append(
                f"{r.case_id:44} {r.basis:11} {r.measured_gib:9.2f} {r.estimated_gib:9.2f} {r.error:+7.1%} "
                f"{r.accelerate_gib:8.2f} {r.accelerate_error:+7.1%}{mark}"
            )
        else:
            rows.append(
                f"{r.case_id:44} {r.basis:11} {'-':>9} {r.estimated_gib:9.2f} {'':7} {'':8} {'':7}{mark}"
            )
    return "\n".join(rows)
