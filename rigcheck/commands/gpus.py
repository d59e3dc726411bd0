"""``rigcheck gpus [QUERY]``: list the GPU catalog (built-in and plugin entries), or show one GPU."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import load_registry
from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("gpus", help="list or search the GPU catalog")
    parser.add_argument("query", nargs="?", help="a GPU name to look up (case and punctuation ignored)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.catalog.catalog import CatalogLookupError
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.engine.errors import UsageError
    from rigcheck.core.report.render.escape import dump_json, escape_line

    catalog = build_catalog(load_registry(args.plugins))
    if args.query:
        try:
            entries = [catalog.lookup(args.query)]
        except CatalogLookupError as exc:
            raise UsageError(f"rigcheck gpus: {exc}") from None
    else:
        entries = sorted(catalog, key=lambda spec: (spec.vendor, spec.segment or "", spec.name))
    if args.format == "json":
        print(dump_json([spec.model_dump(mode="json", exclude_none=True) for spec in entries]))
        return EXIT_OK
    if args.query:
        spec = entries[0]
        for key, value in spec.model_dump(mode="json", exclude_none=True).items():
            print(escape_line(f"{key:<26} {value}"))
        return EXIT_OK
    for spec in entries:
        bandwidth = f"{spec.memory_bandwidth_gbps:g} GB/s" if spec.memory_bandwidth_gbps else "?"
        power = f"{spec.tdp_w:g} W" if spec.tdp_w else "?"
        print(
            escape_line(
                f"{spec.id:<26} {spec.name:<42} {spec.memory_gib:>6g} GiB  {bandwidth:>10}  {power:>7}"
            )
        )
    return EXIT_OK
