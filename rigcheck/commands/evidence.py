"""``rigcheck evidence FILE...``: what each tool output was read as, and the facts parsed from it, as text,
JSON or YAML (``rigcheck schema evidence`` is the JSON Schema)."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import emit
from rigcheck.exit_codes import EXIT_FINDINGS, EXIT_OK

FORMATS = ("text", "json", "yaml")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "evidence",
        help="show what rigcheck reads from tool outputs (nvidia-smi, df, pip, torch, nccl-tests...)",
        description="Parse each FILE as check --evidence does and print what it was read as and the facts found "
        "(GPUs, topology, bandwidths, IOPS, InfiniBand ports, DCGM results, mounts, Python packages, versions), "
        "with the problems met (a cut paste, a malformed row). Exit 1 when a file is not recognised.",
    )
    parser.add_argument("files", metavar="FILE", nargs="+", help="tool output files")
    parser.add_argument(
        "-f", "--format", choices=FORMATS, default="text", help="text (default), json or yaml"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_plugin_options(parser)
    parser.set_defaults(handler=run, confined=True)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.commands._shared import load_registry
    from rigcheck.evidence.loader import load_evidence
    from rigcheck.evidence.render import render_json, render_text, render_yaml

    registry = load_registry(args.plugins)
    evidence = load_evidence(args.files, [parser for parser, _ in registry.evidence_parsers])
    render = {"text": render_text, "json": render_json, "yaml": render_yaml}[args.format]
    emit(render(evidence), args.output)
    return EXIT_FINDINGS if any(item.tool == "unknown" for item in evidence) else EXIT_OK
