"""``rigcheck check RIG [WORKLOAD]``: check one rig (rig-only rules), or a workload against a rig, and
write the report."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rigcheck.commands._options import add_report_options, add_stdin_option

if TYPE_CHECKING:
    from rigcheck.core.engine.registry import Registry
    from rigcheck.core.lint.lint import Pipeline
    from rigcheck.core.report.report import Report


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="check a rig, or a rig and a workload",
        description="Check a rig (rig-only rules), or a workload against a rig. "
        "RIG and WORKLOAD are files, or the name of a shipped spec.",
    )
    parser.add_argument(
        "rig",
        metavar="RIG",
        help="rig spec file, the name of a shipped rig (home-2x3090), or - for standard input",
    )
    parser.add_argument("workload", metavar="WORKLOAD", nargs="?", help="workload spec file or shipped name")
    add_report_options(parser)
    add_stdin_option(parser)
    parser.set_defaults(handler=run, confined=True)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.commands.reporting import run_report
    from rigcheck.core.engine.collector import collector_paused
    from rigcheck.core.spec.specs_index import resolve_spec_argument

    rig_path = resolve_spec_argument(args.rig, "Rig")
    workload_path = resolve_spec_argument(args.workload, "Workload") if args.workload else None
    with collector_paused():  # one pair: what it loads and finds lives to the end, with no cycles
        return run_report(args, [rig_path], report_builder(rig_path, workload_path, args.evidence))


def report_builder(
    rig_path: str, workload_path: str | None, evidence_paths: list[str]
) -> Callable[[Pipeline], Report]:
    """What ``check`` does with the pipeline its options configure: load the pair and the evidence,
    check them (also :func:`rigcheck.api.check`)."""
    from rigcheck.commands._shared import load_specs

    def build(pipeline: Pipeline) -> Report:
        started = time.perf_counter()
        rig_doc, workload_doc = load_specs(rig_path, workload_path)
        evidence, evidence_inputs = _load_evidence(evidence_paths, pipeline.registry)
        report = pipeline.check(
            rig_doc, workload_doc, load_ms=(time.perf_counter() - started) * 1000, evidence=evidence
        )
        if evidence_inputs:
            report = report.model_copy(update={"inputs": [*report.inputs, *evidence_inputs]})
        return report

    return build


def _load_evidence(paths: list[str], registry: Registry) -> tuple[list[Any], list[Any]]:
    """Parse the --evidence files with the registered parsers (imported only when evidence is given)."""
    if not paths:
        return [], []
    from rigcheck.core.report.report import InputFile
    from rigcheck.evidence.loader import file_sha256, load_evidence

    parsers = [parser for parser, _ in registry.evidence_parsers]
    evidence: list[Any] = []
    inputs = []
    for path in paths:
        parts = load_evidence([path], parsers)  # one per tool output the file holds
        evidence.extend(parts)
        digest = file_sha256(path)
        if digest is None:  # read a moment ago: removed or made unreadable since
            from rigcheck.core.engine.errors import UsageError

            raise UsageError(f"cannot read evidence file {path}")
        tools = ", ".join(dict.fromkeys(item.tool for item in parts))
        inputs.append(InputFile(path=path, kind="Evidence", name=tools, sha256=digest))
    return evidence, inputs
