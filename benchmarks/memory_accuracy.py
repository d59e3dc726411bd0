"""Memory estimator accuracy: rigcheck against published measurements, and the accelerate-style rule.

    python benchmarks/memory_accuracy.py

Cases: tests/data/memory_measurements.yaml (each with its source); how each is written as a
workload: tests/data/memory_cases_workloads.yaml. The accelerate-style rule is weights x 4 for
training with Adam and x 1.2 for inference (`accelerate estimate-memory`, research/vram.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.memory_cases import all_results, summary, table

OWN = "rigcheck-"  # cases rigcheck measured itself (benchmarks/device/), not published ones


def main() -> int:
    results = all_results()
    print(table(results))
    stats = summary(results)
    print()
    print(f"scored cases: {stats['scored']} of {stats['cases']}")
    print(
        f"rigcheck:          median |error| {stats['median_abs_error']:.1%}, within 15%: "
        f"{stats['within_15']:.0%}, within 10%: {stats['within_10']:.0%}"
    )
    print(
        f"accelerate rule:   median |error| {stats['accelerate_median_abs_error']:.1%}, within 15%: "
        f"{stats['accelerate_within_15']:.0%}"
    )
    published = summary([result for result in results if not result.case_id.startswith(OWN)])
    print(
        f"published only:    {published['scored']} cases, median |error| {published['median_abs_error']:.1%}, "
        f"within 15%: {published['within_15']:.0%} (without rigcheck's own measurements, ids {OWN}*)"
    )
    ok = stats["median_abs_error"] <= 0.10 and stats["within_15"] >= 0.80
    print("target (median <= 10%, >= 80% within 15%):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
