"""How ``rigcheck plan`` scales with the number of candidates (issue 18 target: at least 300 candidates in
at most 5 s on this machine, in process, one registry and catalog for all).

    python benchmarks/plan_speed.py [--runs 3] [--out benchmarks/plan_speed.yaml]

Each row is one plan of a shipped workload with a wider candidate set: the median wall time of
``--runs`` runs (after one warm-up, so the price data and the rules are loaded once, as in a real run
where start-up is a separate cost), the candidates checked, the rule runs (sizing a built rig runs a few
rules per part) and the time per candidate.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rigcheck.core.engine.engine import build_catalog  # noqa: E402
from rigcheck.core.engine.plugin_manager import PluginHost  # noqa: E402
from rigcheck.core.plan.planner import PlanRequest, make_plan  # noqa: E402
from rigcheck.core.spec.documents import load_spec  # noqa: E402
from rigcheck.core.spec.yaml_writer import dump_yaml  # noqa: E402

SETS = {
    "rent, one GPU model (A10G)": {"mode": "rent", "gpus": ("a10g",), "references": False},
    "rent, every instance": {"mode": "rent", "references": False},
    "buy, every priced GPU": {"mode": "buy", "references": False},
    "both, with reference rigs": {"mode": "both"},
    "both, every catalog GPU (--all-gpus)": {"mode": "both", "all_gpus": True},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "plan_speed.yaml"))
    args = parser.parse_args()
    registry = PluginHost(autoload=False).load()
    catalog = build_catalog(registry)
    workload = load_spec(str(REPO / "specs" / "workloads" / "llama-2-7b-lora-4090.yaml"), kind="Workload")
    make_plan(PlanRequest(workload=workload, mode="rent", references=False), registry, catalog)  # warm-up
    rows = []
    for label, options in SETS.items():
        seconds, report = [], None
        for _ in range(args.runs):
            started = time.perf_counter()
            report = make_plan(PlanRequest(workload=workload, **options), registry, catalog)  # type: ignore[arg-type]
            seconds.append(time.perf_counter() - started)
        assert report is not None
        median = statistics.median(seconds)
        rows.append(
            {
                "set": label,
                "candidates": report.candidates,
                "rule_runs": report.checks_run,
                "seconds": round(median, 3),
                "ms_per_candidate": round(median / report.candidates * 1000, 2),
            }
        )
        print(
            f"{label:<40} {report.candidates:>4} candidates {report.checks_run:>5} rule runs {median:6.2f} s"
        )
    Path(args.out).write_text(
        "# benchmarks/plan_speed.py: rigcheck plan over growing candidate sets (medians)\n"
        + dump_yaml(
            {
                "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
                "workload": workload.name,
                "runs": args.runs,
                "target": "at least 300 candidates in at most 5 s",
                "results": rows,
            }
        ),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
