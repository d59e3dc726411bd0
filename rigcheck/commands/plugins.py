"""``rigcheck plugins``: list the loaded plugins with their hooks and rules, and the plugins that failed
to load."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import load_registry
from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("plugins", help="list the loaded plugins, their hooks and rules")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--all", action="store_true", help="include rigcheck's built-in plugins")
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.report.render.escape import dump_json, escape_line

    registry = load_registry(args.plugins)
    shown = [info for info in registry.plugins if args.all or not info.builtin]
    rows = []
    for info in shown:
        rules = sorted(code for code, entry in registry.rules.items() if entry.plugin.name == info.name)
        rows.append({**info.as_dict(), "rules": rules})
    if args.format == "json":
        print(dump_json(rows))
        return EXIT_OK
    if not rows:
        print("no plugins installed (rigcheck plugins --all includes the built-in ones)")
    for row in rows:
        print(
            escape_line(
                f"{row['name']} {row['version']}  hooks: {', '.join(row['hooks']) or '-'}  "
                f"rules: {', '.join(row['rules']) or '-'}"
            )
        )
    for fault in registry.faults:
        print(escape_line(f"! {fault.plugin} {fault.version}: failed in {fault.stage}: {fault.message}"))
    return EXIT_OK
