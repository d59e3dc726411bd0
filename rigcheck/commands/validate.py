"""``rigcheck validate FILE...``: check spec files against their schema and for YAML traps only, without
running the checkers."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._options import add_color_option, add_stdin_option
from rigcheck.commands._shared import emit, use_color
from rigcheck.exit_codes import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("validate", help="validate spec files (schema and YAML traps only)")
    parser.add_argument("files", metavar="FILE", nargs="+", help="spec files (- reads standard input)")
    parser.add_argument(
        "-f",
        "--format",
        choices=("text", "json"),
        default="text",
        help="report format: text (default) or json",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output"
    )
    add_color_option(parser)
    add_stdin_option(parser)
    parser.add_argument("--fail-on", choices=("warn", "fail"), default="fail")
    parser.set_defaults(handler=run, confined=True)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.spec.validate import render_validation, validate_files

    results = validate_files(args.files)
    emit(
        render_validation(results, args.format, color=use_color(args.color, to_file=bool(args.output))),
        args.output,
    )
    if any(result.problems for result in results):
        return EXIT_ERROR
    threshold = {"warn": ("warn", "fail"), "fail": ("fail",)}[args.fail_on]
    return EXIT_FINDINGS if any(trap.severity in threshold for r in results for trap in r.traps) else EXIT_OK
