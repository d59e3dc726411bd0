"""``rigcheck estimate WORKLOAD [--rig RIG]``: a workload's per-GPU memory, component by component, and
with a rig the fit, the largest micro-batch that fits and the speed; ``--trace`` adds the peak of one
real step on fake tensors."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from rigcheck.commands._options import add_offline_option, add_plugin_options
from rigcheck.commands._shared import emit, load_registry, load_specs
from rigcheck.exit_codes import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.spec.documents import SpecDocument
    from rigcheck.trace.result import TraceResult


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "estimate",
        help="per-GPU memory breakdown and speed of a workload",
        description="Estimate a workload's per-GPU memory (every component, and the "
        "allocated / reserved / device totals), and with --rig the fit, "
        "the largest micro-batch that fits and the speed. Exits 1 when the workload does not fit the rig.",
    )
    parser.add_argument("workload", metavar="WORKLOAD", help="workload spec file or shipped name")
    parser.add_argument("--rig", metavar="RIG", help="rig spec file or shipped name to fit the workload on")
    parser.add_argument("-f", "--format", choices=("text", "json", "markdown", "html"), default="text")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="also run one real step of the model code on fake tensors and show its traced peak beside the "
        "estimate (extra trace: torch, transformers, peft; bitsandbytes for QLoRA and NF4)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_offline_option(parser)
    add_plugin_options(parser)
    parser.set_defaults(handler=run, confined=True)
    return parser


def run(args: argparse.Namespace) -> int:
    import json

    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.report import estimate_report
    from rigcheck.core.spec.specs_index import resolve_spec_argument

    workload_path = resolve_spec_argument(args.workload, "Workload")
    rig_path = resolve_spec_argument(args.rig, "Rig") if args.rig else None
    rig_doc, workload_doc = (
        load_specs(rig_path, workload_path) if rig_path else (None, load_workload(workload_path))
    )
    ctx = None
    if rig_doc is not None:
        ctx = CheckContext(rig_doc, workload_doc, build_catalog(load_registry(args.plugins)))
    traced = _trace(workload_doc, ctx) if args.trace else None
    result = estimate_report.build(workload_doc, ctx, trace=traced)
    if args.format == "json":
        text = json.dumps(result, indent=2, allow_nan=False) + "\n"
    elif args.format == "markdown":
        text = estimate_report.render_markdown(result)
    elif args.format == "html":
        from rigcheck.core.report.render.html import render_estimate

        text = render_estimate(result)
    else:
        text = estimate_report.render_text(result)
    emit(text, args.output)
    fit = result["fit"]
    return EXIT_FINDINGS if fit is not None and fit["verdict"] == "fail" else EXIT_OK


def load_workload(path: str) -> SpecDocument:
    """The workload alone, its model resolved: a bad preset or LoRA target is an error at its line."""
    from rigcheck.core.engine.context import resolve_model
    from rigcheck.core.spec.documents import load_spec

    document = load_spec(path, kind="Workload")
    resolve_model(document)
    return document


def _trace(workload_doc: SpecDocument, ctx: CheckContext | None) -> TraceResult:
    """Trace the workload (rigcheck.trace), with progress on standard error."""
    from rigcheck.core.report import estimate_report
    from rigcheck.trace import trace_memory

    inputs = estimate_report.inputs_for(workload_doc, ctx)
    interactive = sys.stderr.isatty()
    started = time.monotonic()

    def progress(message: str) -> None:
        line = f"rigcheck: tracing ({time.monotonic() - started:4.0f} s) {message}"
        if interactive:
            print(f"\r{line:<78.78}", end="", file=sys.stderr, flush=True)
        elif "block" not in message:  # a log gets the phases, a terminal every block
            print(line, file=sys.stderr)

    try:
        return trace_memory(inputs, progress=progress)
    finally:
        if interactive:
            print("\r" + " " * 78 + "\r", end="", file=sys.stderr, flush=True)
