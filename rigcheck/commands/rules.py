"""``rigcheck rules``: list every rule, built-in and from plugins, optionally only the selected codes."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import load_registry, rule_codes
from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("rules", help="list every rule (built-in and from plugins)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--select", action="append", default=[], metavar="CODES")
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.engine.rules import matches
    from rigcheck.core.report.render.escape import dump_json, escape_line

    registry = load_registry(args.plugins)
    selectors = rule_codes(args.select)
    entries = [
        entry for entry in registry.sorted_rules() if not selectors or matches(entry.rule.code, selectors)
    ]
    if args.format == "json":
        payload = [
            {**entry.rule.as_dict(), "checker": entry.checker, "plugin": entry.plugin.name}
            for entry in entries
        ]
        print(dump_json(payload))
        return EXIT_OK
    width = max((len(entry.rule.name) for entry in entries), default=10)
    for entry in entries:
        rule = entry.rule
        origin = "" if entry.plugin.builtin else f"  [{entry.plugin.name}]"
        print(
            escape_line(
                f"{rule.code:<10} {rule.name:<{width}}  {rule.severity.value:<4}  {rule.summary}{origin}"
            )
        )
    return EXIT_OK
