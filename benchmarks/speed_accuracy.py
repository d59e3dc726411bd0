"""Speed estimator accuracy: rigcheck against published decode, serving and training measurements.

    python benchmarks/speed_accuracy.py            # the summary
    python benchmarks/speed_accuracy.py --cases    # and every case

Cases: tests/data/speed_measurements.yaml (each with its source and the quoted row), split by a hash of
the id into dev (used while the efficiency tables were set) and holdout (scored once, after). Beside
rigcheck: what it estimated before issue 13 (benchmarks/speed_accuracy_before.yaml) and the two rules
of thumb: decode tokens/s = bandwidth / weight bytes (serving: x the concurrency), training tokens/s =
GPUs x peak x 0.35 / (6 P + 12 L q s) with no communication.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.speed_cases import ROUND, all_results, summary, table

KINDS = ("decode", "serving", "prefill", "training")
TARGETS = {"decode": 0.15, "training": 0.20}  # issue 13: median |error| at most


def _row(label: str, stats: dict) -> str:  # type: ignore[type-arg]
    if not stats["scored"]:
        return f"  {label:22} {stats['cases']:3} cases, none scored"
    head = f"  {label:22} {stats['cases']:3} cases {stats['scored']:3} scored: "
    median = (
        f"median |error| {stats['median_abs_error']:6.1%} (before {stats['before_median_abs_error']:6.1%}), "
    )
    within = f"within 20% {stats['within_20']:4.0%} (before {stats['before_within_20']:4.0%}); "
    return head + median + within + f"rule of thumb {stats['anchor_median_abs_error']:7.1%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="print every case")
    args = parser.parse_args(argv)
    everything = all_results()
    results = [r for r in everything if r.added != ROUND]
    ok = True
    print("issue 13's cases (before: rigcheck before issue 13)")
    for split in ("dev", "holdout", "all"):
        chosen = [r for r in results if split == "all" or r.split == split]
        if args.cases and split != "all":
            print(f"\n== {split}\n{table(sorted(chosen, key=lambda r: (r.kind, r.error)))}")
        print(f"\n{split}")
        for kind in KINDS:
            stats = summary([r for r in chosen if r.kind == kind])
            print(_row(kind, stats))
            if split == "dev" and kind in TARGETS:
                ok &= stats["median_abs_error"] <= TARGETS[kind]
    print("\ntargets on dev (decode median <= 15%, training <= 20%):", "met" if ok else "MISSED")
    later = [r for r in everything if r.added == ROUND]
    print(f"\n{ROUND} round: new sources, split by the hash before scoring (before: rigcheck at 38c38d8)")
    for split in ("dev", "holdout"):
        chosen = [r for r in later if r.split == split]
        if args.cases:
            print(f"\n== {ROUND} {split}\n{table(sorted(chosen, key=lambda r: (r.kind, r.error)))}")
        print(f"\n{split}")
        for kind in KINDS:
            print(_row(kind, summary([r for r in chosen if r.kind == kind])))
        groups = sorted({r.group for r in chosen})
        for group in groups:
            for kind in KINDS:
                picked = [r for r in chosen if r.group == group and r.kind == kind]
                if picked and summary(picked)["scored"]:
                    print(_row(f"  {kind} / {group}", summary(picked)))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
