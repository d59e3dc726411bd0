"""The published memory measurements (tests/data/memory_measurements.yaml) as rigcheck workloads,
estimated on each case's measurement basis. Shared by tests/test_memory_accuracy.py and
benchmarks/memory_accuracy.py."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from rigcheck.core.documents import parse_spec
from rigcheck.core.estimate import GIB, estimate_workload
from rigcheck.core.estimation.architecture import resolve_architecture
from rigcheck.core.loader import load_yaml_file

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    basis: str
    measured_gib: float
    estimated_gib: float
    accelerate_gib: float
    scored: bool
    reason: str
    quality: str

    @property
    def error(self) -> float:
        return self.estimated_gib / self.measured_gib - 1

    @property
    def accelerate_error(self) -> float:
        return self.accelerate_gib / self.measured_gib - 1


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
    with Adam, x 1.2 for inference (research/vram.md section 1)."""
    weights = estimate.memory.component("weights").bytes
    factor = 1.2 if estimate.inputs.task == "inference" else 4
    return weights * factor / GIB


def estimate_case(case_id: str, measurement: dict, spec: dict) -> CaseResult:  # type: ignore[type-arg]
    document = parse_spec(workload_yaml(case_id, spec["workload"]), f"{case_id}.yaml")
    arch = resolve_architecture(document.model.model, document=document)
    estimate = estimate_workload(document.model, arch=arch)
    if spec.get("cuda_context_gib") is not None:
        from rigcheck.core.estimation.memory import estimate_memory

        inputs = replace(estimate.inputs, cuda_context_gib=float(spec["cuda_context_gib"]))
        estimate = replace(estimate, inputs=inputs, memory=estimate_memory(inputs))
    memory = estimate.memory
    basis = spec["basis"]
    if basis == "weights":
        value = memory.gib("weights")
    elif basis == "vllm_non_kv":
        value = (
            memory.gib("weights")
            + memory.gib("activations")
            + memory.gib("cuda_context")
            + memory.gib("nccl_buffers")
        )
    else:
        value = memory.total(basis) / GIB
    return CaseResult(
        case_id,
        basis,
        float(measurement["measured_peak_gib"]),
        value,
        accelerate_rule(estimate),
        spec.get("scored", True),
        spec.get("reason", ""),
        str(measurement.get("quality", "")),
    )


def all_results() -> list[CaseResult]:
    measurements, workloads = load_cases()
    missing = set(measurements) - set(workloads)
    if missing:
        raise AssertionError(f"cases without a workload translation: {sorted(missing)}")
    return [estimate_case(case_id, measurements[case_id], workloads[case_id]) for case_id in measurements]


def summary(results: list[CaseResult]) -> dict[str, float]:
    scored = [result for result in results if result.scored]
    errors = [abs(result.error) for result in scored]
    accelerate = [abs(result.accelerate_error) for result in scored]
    return {
        "cases": len(results),
        "scored": len(scored),
        "median_abs_error": statistics.median(errors),
        "within_15": sum(error <= 0.15 for error in errors) / len(errors),
        "within_10": sum(error <= 0.10 for error in errors) / len(errors),
        "accelerate_median_abs_error": statistics.median(accelerate),
        "accelerate_within_15": sum(error <= 0.15 for error in accelerate) / len(accelerate),
    }


def table(results: list[CaseResult]) -> str:
    rows = [
        f"{'case':44} {'basis':11} {'measured':>9} {'rigcheck':>9} {'error':>7} {'accel.':>8} {'error':>7}"
    ]
    for r in results:
        mark = "" if r.scored else "  (not scored: " + r.reason + ")"
        rows.append(
            f"{r.case_id:44} {r.basis:11} {r.measured_gib:9.2f} {r.estimated_gib:9.2f} {r.error:+7.1%} "
            f"{r.accelerate_gib:8.2f} {r.accelerate_error:+7.1%}{mark}"
        )
    return "\n".join(rows)
