"""``rigcheck measure``: measure copy and all-reduce bandwidth on this machine with PyTorch and write them
as an evidence file for ``rigcheck check RIG --evidence FILE``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "measure",
        help="measure copy and all-reduce bandwidth on this machine (needs torch), as evidence",
        description="Measure host-device, device-device and peer copy bandwidth and a local all-reduce with "
        "PyTorch, and write them as an evidence file for `rigcheck check RIG --evidence FILE`. Without a GPU it "
        "measures host memory bandwidth and says so.",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the evidence here (default: standard output)"
    )
    parser.add_argument("--size-mib", type=int, default=256, help="bytes per copy, MiB (default 256)")
    parser.add_argument("--iterations", type=int, default=5, help="timed runs per measurement (default 5)")
    parser.set_defaults(handler=run, plugins=[])
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.live.measure import measure, write_evidence

    def progress(message: str) -> None:
        print(f"rigcheck measure: {message}", file=sys.stderr, flush=True)

    evidence = measure(
        size_mib=args.size_mib,
        iterations=args.iterations,
        progress=progress,
        source=args.output or "rigcheck measure",
    )
    text = write_evidence(evidence, args.output)
    if not args.output:
        sys.stdout.write(text)
    else:
        print(f"rigcheck measure: wrote {args.output}", file=sys.stderr)
    return EXIT_OK
