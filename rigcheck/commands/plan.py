"""``rigcheck plan WORKLOAD``: which cloud instances and buildable rigs pass the workload, ranked by cost
and time, with the one-line answer on top (docs/plan.md)."""

from __future__ import annotations

import argparse
from typing import Any

from rigcheck.commands._options import add_offline_option, add_plugin_options
from rigcheck.commands._shared import emit, load_registry
from rigcheck.exit_codes import EXIT_FINDINGS, EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "plan",
        help="rank the rigs and cloud instances that pass a workload, by cost and time",
        description="Check a workload on every cloud instance size with a sourced price, on rigs built from "
        "each GPU (1, 2, 4, 8) on a platform template, on the shipped reference rigs and on --rig files; "
        "rank the ones that pass by the run's cost, then time. Exits 1 when nothing passes.",
    )
    parser.add_argument("workload", metavar="WORKLOAD", help="workload spec file or shipped name")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--rent", dest="mode", action="store_const", const="rent", help="cloud instances only")
    mode.add_argument("--buy", dest="mode", action="store_const", const="buy", help="rigs to buy only")
    mode.add_argument("--both", dest="mode", action="store_const", const="both", help="both (the default)")
    parser.add_argument(
        "--budget", type=float, metavar="AMOUNT", help="the most a run (rent) or a rig (buy) may cost"
    )
    parser.add_argument("--deadline", type=float, metavar="HOURS", help="the run must finish within HOURS")
    parser.add_argument("--gpus", metavar="NAMES", help="only these GPUs, comma-separated (catalog names)")
    parser.add_argument("--max-gpus", type=int, default=64, metavar="N", help="at most N GPUs (default 64)")
    parser.add_argument(
        "--rig",
        dest="rigs",
        action="append",
        default=[],
        metavar="FILE",
        help="also check this rig (repeatable)",
    )
    parser.add_argument("--currency", choices=("USD", "CNY", "EUR"), default="USD", type=str.upper)
    parser.add_argument(
        "--electricity",
        type=kwh_price,
        metavar="PRICE",
        help="the price of a kWh: a number in --currency, or the data's residential, industrial or commercial "
        "rate of the currency's region, or REGION:SECTOR (US:industrial, CN:residential). Default: residential",
    )
    parser.add_argument("--no-references", action="store_true", help="leave out the shipped reference rigs")
    parser.add_argument(
        "--all-gpus",
        action="store_true",
        help="build rigs from every catalog GPU, not only those with a price",
    )
    parser.add_argument(
        "--keep-parallelism",
        action="store_true",
        help="check the workload's data parallelism as written (default: dp = the candidate's GPUs / tp x pp)",
    )
    parser.add_argument("-f", "--format", choices=("text", "json", "markdown", "html"), default="text")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_offline_option(parser)
    add_plugin_options(parser)
    parser.set_defaults(handler=run, confined=True, mode="both")
    return parser


def kwh_price(text: str) -> float | str:
    """``--electricity``: a number above 0, or the name of a rate in the data (checked when the plan runs)."""
    try:
        value = float(text)
    except ValueError:
        if not text.strip() or len(text) > 64:
            raise argparse.ArgumentTypeError(f"{text!r}: give a number or a rate's name") from None
        return text.strip()
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: a price per kWh above 0")
    return value


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.plan import render
    from rigcheck.core.report.render.escape import dump_json

    report = plan_report(args)
    if args.format == "json":
        text = dump_json(report.model_dump(mode="json")) + "\n"
    elif args.format == "markdown":
        text = render.render_markdown(report)
    elif args.format == "html":
        from rigcheck.core.report.render.html import render_plan

        text = render_plan(report)
    else:
        text = render.render_text(report)
    emit(text, args.output)
    return EXIT_OK if any(row.passes for row in report.rows) else EXIT_FINDINGS


def plan_report(args: argparse.Namespace) -> Any:
    """The plan the options ask for (also :func:`rigcheck.api.plan`)."""
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.engine.errors import UsageError
    from rigcheck.core.plan.planner import PlanRequest, make_plan
    from rigcheck.core.spec.documents import load_spec
    from rigcheck.core.spec.specs_index import resolve_spec_argument

    registry = load_registry(args.plugins)
    catalog = build_catalog(registry)
    workload = load_spec(resolve_spec_argument(args.workload, "Workload"), kind="Workload")
    gpus = None
    if args.gpus:
        try:
            gpus = tuple(catalog.lookup(name.strip()).id for name in args.gpus.split(",") if name.strip())
        except Exception as error:  # an unknown or ambiguous name: say which
            raise UsageError(f"rigcheck plan --gpus: {error}") from None
    if args.max_gpus < 1:
        raise UsageError("rigcheck plan --max-gpus: must be at least 1")
    rigs = tuple(load_spec(resolve_spec_argument(path, "Rig"), kind="Rig") for path in args.rigs)
    request = PlanRequest(
        workload=workload,
        mode=args.mode,
        budget=args.budget,
        deadline_hours=args.deadline,
        gpus=gpus,
        max_gpus=args.max_gpus,
        rigs=rigs,
        currency=args.currency,
        electricity=args.electricity,
        references=not args.no_references,
        all_gpus=args.all_gpus,
        scale_data_parallel=not args.keep_parallelism,
    )
    return make_plan(request, registry, catalog)
