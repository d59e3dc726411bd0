"""``rigcheck merge FILE...``: fold the rig specs that ``rigcheck probe`` wrote on each node into one
cluster rig with node groups, and report what differs between the nodes (drift)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rigcheck.commands._shared import emit, load_registry, render_options, renderer

if TYPE_CHECKING:
    from rigcheck.core.engine.findings import Finding
    from rigcheck.core.report.report import Report
    from rigcheck.core.spec.documents import SpecDocument


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "merge",
        help="fold per-node probe files into one cluster rig and report drift between nodes",
        description="Merge rig specs written by `rigcheck probe` on each node into one rig with node groups "
        "(count:, hostnames:), and report what differs between nodes (GPUs, driver, CUDA, torch, ECC, VBIOS).",
    )
    parser.add_argument("files", metavar="FILE", nargs="+", help="probe files (rigcheck probe -o node.yaml)")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the merged rig here (default: standard output)"
    )
    parser.add_argument("--name", default="cluster", help="name of the merged rig (default: cluster)")
    parser.add_argument(
        "-f", "--format", choices=("text", "json"), default="text", help="format of the drift report"
    )
    parser.add_argument("--fail-on", choices=("warn", "fail"), default="fail")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    parser.set_defaults(handler=run, plugins=[])
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the merged rig (to ``-o`` or standard output) and the drift report (to standard output,
    or standard error when the rig went there); the exit code is the drift report's."""
    from rigcheck.core.lint.merge import merge_probes
    from rigcheck.core.spec.yaml_writer import dump_yaml

    docs = _load_probe_files(args.files)
    merged, findings = merge_probes(docs, name=args.name)
    text = "# Written by rigcheck merge; edit freely.\n" + dump_yaml(merged)
    report = _drift_report(docs, findings, name=args.name, fail_on=args.fail_on)
    registry = load_registry()
    rendered = renderer(registry, args.format)(
        report, render_options(registry, color=args.color, verbose=False, to_file=False)
    )
    if args.output:
        emit(text, args.output)
        emit(rendered, None)
    else:
        emit(text, None)
        sys.stderr.write(rendered)
    return report.exit_code


def _load_probe_files(paths: list[str]) -> list[SpecDocument]:
    """The probe files as rig documents of one node each; the problems of every file before giving up."""
    from rigcheck.core.engine.errors import Problem, SpecError
    from rigcheck.core.spec.documents import load_spec

    docs: list[SpecDocument] = []
    problems = []
    for path in paths:
        try:
            docs.append(load_spec(path, kind="Rig"))
        except SpecError as exc:
            problems.extend(exc.problems)
    for doc in docs:
        if len(doc.model.nodes) != 1:
            problems.append(
                Problem(
                    doc.path, "a probe file describes one node; this rig has several groups", 1, 1, "/nodes"
                )
            )
    if problems:
        raise SpecError(problems)
    return docs


def _drift_report(docs: list[SpecDocument], findings: list[Finding], *, name: str, fail_on: str) -> Report:
    """The drift findings as a report, rendered by the same formats as ``rigcheck check``'s."""
    from rigcheck.core.engine.findings import Severity
    from rigcheck.core.report.report import build_report

    subject = f"merge of {len(docs)} probe file(s) into {name}"
    return build_report(subject, findings, Severity(fail_on), documents=docs, kind="Rig")
