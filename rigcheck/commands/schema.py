"""``rigcheck schema rig|workload|report|config|plan|evidence``: print the JSON Schema of a spec kind, the
report, the project config, a plan or ``rigcheck evidence -f json``."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._shared import emit
from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("schema", help="print the JSON Schema of a spec kind or of the report")
    parser.add_argument("which", choices=("rig", "workload", "report", "config", "plan", "evidence"))
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.spec.schemas import schema_text

    emit(schema_text(args.which), args.output)
    return EXIT_OK
