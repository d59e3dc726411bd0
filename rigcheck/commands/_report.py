"""The report path that ``check`` and ``lint`` share: settings and plugins into a core ``Pipeline``,
``--show-config``, the outputs (checked before any work is done), and the report written to each."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rigcheck.cli import EXIT_OK
from rigcheck.commands._options import output_files
from rigcheck.commands._shared import emit, load_registry, render_options, renderer, rule_codes
from rigcheck.core import spec_codes

if TYPE_CHECKING:
    from rigcheck.core.config import Settings
    from rigcheck.core.lint import Pipeline
    from rigcheck.core.registry import Registry
    from rigcheck.core.report import Report


class Output(NamedTuple):
    """One report to write: the format, its render function and the file (None: standard output)."""

    format: str
    render: Any
    path: str | None


def run_report(args: argparse.Namespace, paths: list[str], build: Callable[[Pipeline], Report]) -> int:
    """Run a command of :func:`rigcheck.commands._options.add_report_options`: ``build`` makes the
    report from the pipeline configured for ``paths``; the exit code is the report's."""
    pipeline = build_pipeline(args, paths)
    if args.show_config:
        sys.stdout.write(pipeline.settings.show())
        return EXIT_OK
    outputs = report_outputs(args.format, output_files(args), pipeline.registry)
    report = build(pipeline)
    if args.create_baseline:
        from rigcheck.core.baseline import write_baseline

        count = write_baseline(report.findings, args.create_baseline)
        print(f"rigcheck: wrote {count} baseline entries to {args.create_baseline}", file=sys.stderr)
        return EXIT_OK
    write_report(report, outputs, pipeline.registry, color=args.color, verbose=args.verbose)
    return report.exit_code


def build_pipeline(args: argparse.Namespace, paths: list[str]) -> Pipeline:
    """The project config found for ``paths`` with the command line over it, the plugins it names, the
    catalog, the time limit and the baseline."""
    from rigcheck.core.config import load_settings
    from rigcheck.core.engine import DEFAULT_TIMEOUT_S, build_catalog
    from rigcheck.core.lint import Pipeline
    from rigcheck.core.sandbox import isolation_requested

    cli: dict[str, Any] = {}
    if args.select:
        cli["select"] = list(rule_codes(args.select))
    if args.ignore:
        cli["ignore"] = list(rule_codes(args.ignore))
    if args.fail_on:
        cli["fail-on"] = args.fail_on
    settings = load_settings(paths, config_path=args.config, isolated=args.isolated, cli=cli)
    registry = load_registry(args.plugins, isolate=args.isolate_plugins, config=settings)
    baseline = args.baseline
    if baseline is None and settings["baseline"] and not args.create_baseline:
        baseline = str(settings.base / settings["baseline"])
        _inside_root(baseline, settings, "/baseline")
    return Pipeline(
        registry,
        build_catalog(registry),
        settings,
        args.timeout if args.timeout is not None else DEFAULT_TIMEOUT_S,
        no_ignores=args.no_ignores,
        baseline=None if args.create_baseline else baseline,
        isolate_plugins=isolation_requested(args.isolate_plugins),
    )


def _inside_root(path: str, settings: Settings, pointer: str) -> None:
    """A path the project config names must be inside the checked root (SPEC014), else exit 2."""
    from rigcheck.core.boundary import outside_reason
    from rigcheck.core.errors import Problem, SpecError

    reason = outside_reason(path)
    if reason is not None:
        line, column = settings.location(pointer)
        raise SpecError(
            Problem(
                settings.path or "config",
                f"{reason}; not read",
                line,
                column,
                pointer,
                spec_codes.OUTSIDE_ROOT,
            )
        )


def report_outputs(formats: Sequence[str], files: Mapping[int, str], registry: Registry) -> list[Output]:
    """Each ``--format`` with its renderer and the ``--output`` after it (``files``, by the format's
    position); no format means text (github under GitHub Actions). At most one goes to standard output."""
    from rigcheck.core.errors import UsageError

    formats = list(formats)
    if not formats:
        formats = ["github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"]
    if any(slot >= len(formats) for slot in files):
        raise UsageError(f"{len(files)} --output for {len(formats)} --format: give a --format for each")
    paired = [Output(name, renderer(registry, name), files.get(i)) for i, name in enumerate(formats)]
    to_stdout = [output.format for output in paired if output.path is None]
    if len(to_stdout) > 1:
        raise UsageError(
            f"formats {', '.join(to_stdout)} would all go to standard output: give each an --output"
        )
    return paired


def write_report(
    report: Report, outputs: Sequence[Output], registry: Registry, *, color: str, verbose: bool
) -> None:
    """Render ``report`` into each output; under GitHub Actions the github format also appends the
    Markdown report to the job summary (GITHUB_STEP_SUMMARY)."""
    for output in outputs:
        options = render_options(registry, color=color, verbose=verbose, to_file=output.path is not None)
        emit(output.render(report, options), output.path)
        if output.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
            markdown = renderer(registry, "markdown")
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
                summary.write(markdown(report, options))
