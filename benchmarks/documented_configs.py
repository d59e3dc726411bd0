"""MEM001 on the library of documented configurations (tests/data/documented_configs.yaml), by split.

    python benchmarks/documented_configs.py            # the score
    python benchmarks/documented_configs.py --cases    # and every case

A configuration documented to work must pass (no warning), a run reported out of memory must fail.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="print every case")
    args = parser.parse_args(argv)
    from tests.documented_configs import load_cases, mem001

    table: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for case in load_cases():
        finding = mem001(case)
        table[(case.split, case.outcome)][finding["severity"]] += 1
        if args.cases:
            mark = "ok  " if finding["severity"] == case.wanted else "MISS"
            print(f"{mark} {case.split:8} {case.outcome:6} {finding['severity']:5} {case.id}")
    for split in ("dev", "holdout"):
        works, oom = table[(split, "works")], table[(split, "oom")]
        print(
            f"{split:8} works: {works['pass']}/{sum(works.values())} pass "
            f"({works['warn']} warn, {works['fail']} fail); "
            f"oom: {oom['fail']}/{sum(oom.values())} fail ({oom['warn']} warn, {oom['pass']} pass)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
