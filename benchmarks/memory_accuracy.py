"""Memory estimator accuracy: rigcheck against published measurements and against traces.

    python benchmarks/memory_accuracy.py            # the summary
    python benchmarks/memory_accuracy.py --cases    # and every case, side by side

Published cases: tests/data/memory_measurements.yaml (each with its source), written as workloads in
tests/data/memory_cases_workloads.yaml. The cases added on 2026-12-01 are split by a hash of the id
into ``dev`` (looked at while the formulas changed) and ``holdout`` (scored once the formulas were
frozen); both are printed beside what rigcheck said before those changes
(benchmarks/memory_accuracy_before.yaml). The accelerate-style rule of thumb is weights x 4 for
training with Adam and x 1.2 for inference (`accelerate estimate-memory`). The traced grid
(tests/data/traced/grid.yaml, benchmarks/trace_grid.py) holds the analytic model to the model code
itself, on the allocated basis.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rigcheck.core.spec.loader import load_yaml_file  # noqa: E402
from tests.memory_cases import ROUNDS, all_results, coverage, fitted_spread, summary, table  # noqa: E402
from tests.traced_grid import grid_results, grid_summary, grid_table  # noqa: E402

OWN = "rigcheck-"  # cases rigcheck measured itself (benchmarks/device/), not published ones


def _line(name: str, stats: dict) -> str:  # type: ignore[type-arg]
    fit = f"; fit decisions right {stats['fit_right']}/{stats['fit_cases']}" if stats.get("fit_cases") else ""
    return (
        f"{name:30} cases {stats['cases']:3} scored {stats['scored']:3}: median |error| "
        f"{stats['median_abs_error']:5.1%}, within 15% {stats['within_15']:4.0%}, "
        f"within 10% {stats['within_10']:4.0%}; "
        f"accelerate rule {stats['accelerate_median_abs_error']:6.1%}{fit}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="print every case")
    args = parser.parse_args(argv)

    results = all_results()
    sets = {
        "published (original)": [
            r for r in results if r.split == "published" and not r.case_id.startswith(OWN)
        ],
        "rigcheck's own (H200)": [r for r in results if r.case_id.startswith(OWN)],
        "new, dev": [r for r in results if r.new and r.split == "dev"],
        "new, holdout": [r for r in results if r.new and r.split == "holdout"],
        "new, all": [r for r in results if r.new],
    }
    for later in ROUNDS[1:]:
        for split in ("dev", "holdout"):
            sets[f"{later}, {split}"] = [r for r in results if r.round == later and r.split == split]
    if args.cases:
        for name, chosen in sets.items():
            if name != "new, all":
                print(f"\n== {name}\n{table(chosen)}")
    before = load_yaml_file(str(ROOT / "benchmarks" / "memory_accuracy_before.yaml")).data["sets"]
    print("\npublished measurements (estimate vs measured on each case's basis)")
    for name, chosen in sets.items():
        if not chosen:
            continue
        print("  now    " + _line(name, summary(chosen)))
        old = before.get(name) or (
            before.get("published (original 16)") if name == "published (original)" else None
        )
        if old:
            print("  before " + _line(name, old))

    print("\nMEM001's range: each mechanism's spread, fitted on dev (specs/rules/memory.yaml spread)")
    for name, values in fitted_spread(results).items():
        print(f"  {name:22} " + ", ".join(f"{key} {value:+.3f}" for key, value in values.items()))
    for split, (inside, cases) in coverage(results).items():
        print(
            f"  measured value within the range on its basis, {split:8} {inside}/{cases} ({inside / cases:.0%})"
        )

    grid = grid_results()
    if args.cases:
        print(f"\n== traced grid\n{grid_table(sorted(grid, key=lambda r: r.error))}")
    print("\ntraced grid (analytic vs trace, allocated basis)")
    ok = True
    for split in ("dev", "holdout"):
        stats = grid_summary([r for r in grid if r.split == split])
        ok &= stats["median_abs_error"] <= 0.03 and stats["max_abs_error"] <= 0.10
        print(
            f"  {split:8} {stats['cases']:3} cases: median |error| {stats['median_abs_error']:.1%}, worst "
            f"{stats['max_abs_error']:.1%}, within 3% {stats['within_3']:.0%}, within 10% {stats['within_10']:.0%}"
        )
    print("target (grid median <= 3%, none over 10%):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
