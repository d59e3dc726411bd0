"""The traced grid (tests/data/traced/grid.yaml, written by benchmarks/trace_grid.py) against the analytic
estimate, on the allocated basis. Shared by tests/test_traced_grid.py and benchmarks/memory_accuracy.py."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rigcheck.core.estimate.architecture import resolve_architecture
from rigcheck.core.estimate.estimate import GIB, memory_inputs
from rigcheck.core.estimate.memory import estimate_memory
from rigcheck.core.spec.documents import parse_spec
from rigcheck.core.spec.loader import load_yaml_file

GRID = Path(__file__).resolve().parent / "data" / "traced" / "grid.yaml"
NOTES = ("implied", "assumed")  # the wording of the estimate's notes, not what the trace ran


@dataclass(frozen=True)
class GridResult:
    case_id: str
    split: str
    traced_gib: float
    analytic_gib: float
    traced_phase: str
    analytic_phase: str
    traced: dict[str, float]
    analytic: dict[str, float]

    @property
    def error(self) -> float:
        return self.analytic_gib / self.traced_gib - 1


def load_grid() -> dict[str, Any]:
    return load_yaml_file(str(GRID)).data


def inputs_of(case: dict[str, Any]) -> Any:
    lines = ["apiVersion: rigcheck/v1", "kind: Workload", f"name: {case['id']}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in case["workload"].items()]
    document = parse_spec("\n".join(lines) + "\n", f"{case['id']}.yaml")
    arch = resolve_architecture(document.model.model, document=document)
    return memory_inputs(document.model, arch)


def stale_inputs(case: dict[str, Any], inputs: Any) -> dict[str, tuple[Any, Any]]:
    """Estimator inputs that resolve differently today from when the case was traced (the trace would
    then measure another workload: rerun benchmarks/trace_grid.py)."""
    now = asdict(inputs)
    now.pop("arch")
    now["layers"] = inputs.arch.layers
    out = {}
    for key, then in case["inputs"].items():
        if key in NOTES:
            continue
        value = now.get(key)
        value = list(value) if isinstance(value, tuple) else value
        if key in now and value != then:
            out[key] = (then, value)
    return out


def grid_results() -> list[GridResult]:
    results = []
    for case in load_grid()["cases"]:
        inputs = inputs_of(case)
        estimate = estimate_memory(inputs)
        trace = case["trace"]
        results.append(
            GridResult(
                case["id"],
                case["split"],
                float(trace["peak_gib"]),
                estimate.allocated / GIB,
                trace["phase"],
                estimate.peak_phase,
                {key: float(value) for key, value in trace["categories_gib"].items()},
                {key: value / GIB for key, value in estimate.by_category().items()},
            )
        )
    return results


def grid_summary(results: list[GridResult]) -> dict[str, float]:
    errors = [abs(result.error) for result in results]
    return {
        "cases": len(results),
        "median_abs_error": statistics.median(errors) if errors else float("nan"),
        "max_abs_error": max(errors) if errors else float("nan"),
        "within_3": sum(error <= 0.03 for error in errors) / max(1, len(errors)),
        "within_10": sum(error <= 0.10 for error in errors) / max(1, len(errors)),
    }


def grid_table(results: list[GridResult]) -> str:
    rows = [
        f"{'traced case':52} {'split':7} {'traced':>8} {'analytic':>9} {'error':>7}  phase (traced / analytic)"
    ]
    for r in results:
        rows.append(
            f"{r.case_id:52} {r.split:7} {r.traced_gib:8.2f} {r.analytic_gib:9.2f} {r.error:+7.1%}  "
            f"{r.traced_phase} / {r.analytic_phase}"
        )
    return "\n".join(rows)
