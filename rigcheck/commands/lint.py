"""``rigcheck lint [PATH...]``: find the rig and workload specs under the paths, check every rig alone
and every workload against its rigs, and write one report (made for pull requests)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rigcheck.commands._options import add_jobs_option, add_report_options, add_stdin_option

if TYPE_CHECKING:
    from rigcheck.core.lint.lint import Pipeline
    from rigcheck.core.report.report import Report


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "lint",
        help="check every spec under PATHs: each rig, and each workload against its rigs",
        description="Find rig and workload specs under PATHs (default: the current folder), pair workloads "
        "with rigs (runs_on:, and pairs/matrix in .rigcheck.yaml), check every rig alone and every pair, "
        "and write one report. Made for pull requests: SARIF, JUnit, GitHub annotations, Markdown.",
    )
    parser.add_argument(
        "paths",
        metavar="PATH",
        nargs="*",
        default=[],
        help="files or folders (default: .; - reads a spec from standard input)",
    )
    add_report_options(parser)
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="paths not to read, relative to the working folder (folders, files, globs; comma-separated; "
        "repeatable); replaces the config's exclude",
    )
    parser.add_argument(
        "--extend-exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="like --exclude, but adds to the config's exclude",
    )
    add_jobs_option(parser)
    add_stdin_option(parser)
    parser.set_defaults(handler=run, confined=True)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.commands.reporting import run_report
    from rigcheck.core.engine.collector import collector_paused
    from rigcheck.core.lint.lint import lint

    paths = args.paths or ["."]

    def build(pipeline: Pipeline) -> Report:
        return lint(paths, pipeline)

    with collector_paused():  # the specs and findings live to the end or are freed by reference counts
        return run_report(args, paths, build)
