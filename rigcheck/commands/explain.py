"""``rigcheck explain CODE``: print the documentation of one rule as Markdown."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.cli import EXIT_OK
from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import load_registry


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("explain", help="print the documentation of one rule")
    parser.add_argument("code", metavar="CODE")
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.docgen import rule_markdown
    from rigcheck.core.errors import UsageError
    from rigcheck.core.fields import did_you_mean

    registry = load_registry(args.plugins)
    entry = registry.rule(args.code)
    if entry is None:
        raise UsageError(
            f"rigcheck explain: no rule {args.code!r}{did_you_mean(args.code.upper(), registry.rules)} "
            f"(rigcheck rules lists them)"
        )
    print(rule_markdown(entry), end="")
    return EXIT_OK
