"""``rigcheck models``: list the model presets, their architecture numbers and sources."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "models", help="list the model presets (architecture numbers with sources)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset, preset_ids
    from rigcheck.core.report.render.escape import dump_json, escape_line

    rows = []
    for model_id in preset_ids():
        entry = find_preset(model_id)
        assert entry is not None  # every preset id is in the preset index
        arch = architecture_from_mapping(entry, name=model_id)
        rows.append(
            {
                "id": model_id,
                "name": entry["name"],
                "params_b": entry["params_b"],
                "layers": arch.layers,
                "hidden": arch.hidden,
                "heads": arch.heads,
                "kv_heads": arch.kv_heads,
                "ffn": arch.ffn,
                "vocab": arch.vocab,
                "family": arch.family,
                "aliases": entry.get("aliases", []),
                "source": entry["source"],
            }
        )
    if args.format == "json":
        print(dump_json(rows))
        return EXIT_OK
    for row in rows:
        print(
            escape_line(
                f"{row['id']:<18} {row['params_b']:>8g}B  L{row['layers']:<3} h{row['hidden']:<6} "
                f"heads {row['heads']}/{row['kv_heads']:<3} ffn {row['ffn']:<6} vocab {row['vocab']:<7} {row['name']}"
            )
        )
    return EXIT_OK
