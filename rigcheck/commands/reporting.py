"""The report path that ``check`` and ``lint`` share: settings and plugins into a core ``Pipeline``,
``--show-config``, the outputs (checked before any work is done), and the report written to each."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rigcheck.commands._options import output_files
from rigcheck.commands._shared import emit, load_registry, render_options, renderer, rule_codes
from rigcheck.core.spec import spec_codes
from rigcheck.exit_codes import EXIT_OK

if TYPE_CHECKING:
    from rigcheck.core.engine.config import Settings
    from rigcheck.core.engine.registry import Registry
    from rigcheck.core.lint.lint import Pipeline
    from rigcheck.core.report.report import Report


class Output(NamedTuple):
    """One report to write: the format, its render function and the file (None: standard output)."""

    format: str
    render: Any
    path: str | None


class ReportRequest(NamedTuple):
    """What a ``check`` or ``lint`` asks for, read from the command line once: the specs, the rule
    selection and config, the plugins, the baseline and time limit, and the outputs. The core gets
    the pipeline built from it; nothing below reads the argparse namespace."""

    paths: tuple[str, ...]
    select: tuple[str, ...] | None  # None: not given (an empty --select selects nothing)
    extend_select: tuple[str, ...] | None
    ignore: tuple[str, ...] | None
    fail_on: str | None
    config: str | None
    isolated: bool
    plugins: tuple[str, ...]
    isolate_plugins: bool | None
    baseline: str | None
    create_baseline: str | None
    checker_timeout: float | None
    #: ``--timeout``: when the run must end, on time.monotonic()'s clock (None: no limit).
    deadline: float | None
    no_ignores: bool
    formats: tuple[str, ...]
    output_files: Mapping[int, str]
    color: str
    verbose: bool
    show_passes: bool
    show_config: bool
    #: ``-q``: the text format lists only the warnings and failures.
    quiet: bool = False
    #: ``lint --exclude`` (None: not given) and ``--extend-exclude``: globs relative to the working folder.
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    #: ``lint --jobs``: worker processes (``check`` has one run: 1).
    jobs: int = 1
    #: ``--exit-zero``: findings never make the exit code 1.
    exit_zero: bool = False
    #: ``--statistics``: counts per rule instead of the report.
    statistics: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace, paths: Sequence[str]) -> ReportRequest:
        return cls(
            paths=tuple(paths),
            select=rule_codes(args.select) if args.select else None,
            extend_select=rule_codes(args.extend_select) if getattr(args, "extend_select", None) else None,
            ignore=rule_codes(args.ignore) if args.ignore else None,
            fail_on=args.fail_on,
            config=args.config,
            isolated=args.isolated,
            plugins=tuple(args.plugins or ()),
            isolate_plugins=args.isolate_plugins,
            baseline=args.baseline,
            create_baseline=args.create_baseline,
            checker_timeout=args.checker_timeout,
            deadline=None if args.timeout is None else time.monotonic() + args.timeout,
            no_ignores=args.no_ignores,
            formats=tuple(args.format),
            output_files=output_files(args),
            color=args.color,
            verbose=args.verbose,
            show_passes=args.show_passes,
            show_config=args.show_config,
            quiet=bool(getattr(args, "quiet", False)),
            exclude=globs(args.exclude) if getattr(args, "exclude", None) else None,
            extend_exclude=globs(getattr(args, "extend_exclude", None) or ()),
            jobs=jobs_to_use(getattr(args, "jobs", 1)),
            exit_zero=bool(getattr(args, "exit_zero", False)),
            statistics=bool(getattr(args, "statistics", False)),
        )


def globs(values: Sequence[str]) -> tuple[str, ...]:
    """``--exclude a,b --exclude c`` as ("a", "b", "c")."""
    return tuple(glob.strip() for value in values for glob in value.split(",") if glob.strip())


def jobs_to_use(given: int | None) -> int:
    """``--jobs`` as given, else the number of CPUs this process may use."""
    if given is not None:
        return given
    from rigcheck.core.lint.cpus import usable_cpus

    return usable_cpus()


def run_report(args: argparse.Namespace, paths: list[str], build: Callable[[Pipeline], Report]) -> int:
    """Run a command of :func:`rigcheck.commands._options.add_report_options`: ``build`` makes the
    report from the pipeline configured for ``paths``; the exit code is the report's."""
    from rigcheck.core.engine.errors import RigcheckError

    request = ReportRequest.from_args(args, paths)
    check_output_paths([*request.output_files.values(), *filter(None, [request.create_baseline])])
    # Until its report replaces it, each output says the run did not finish: a run that a plugin ends
    # (os._exit) or that the watching parent ends past --timeout leaves no stale or committed report.
    # (--show-config and --create-baseline write no report: their outputs are left as they are.)
    if not (request.show_config or request.create_baseline):
        write_failed(request.formats, request.output_files, UNFINISHED)
    if request.deadline is not None:
        from rigcheck import supervisor

        supervisor.end_at(request.deadline + supervisor.GRACE_S)
    try:
        pipeline = build_pipeline(request)
        if request.show_config:
            sys.stdout.write(pipeline.settings.show())
            return EXIT_OK
        outputs = report_outputs(request.formats, request.output_files, pipeline.registry)
        pipeline.chunk_text = stored_chunk_text(outputs)
        report = build(pipeline)
    except RigcheckError as exc:  # exit 2: each output says why nothing was checked, never a stale report
        write_failed(request.formats, request.output_files, str(exc))
        raise
    if request.create_baseline:
        from rigcheck.core.engine.baseline import write_baseline

        count = write_baseline(report.findings, request.create_baseline)
        print(f"rigcheck: wrote {count} baseline entries to {request.create_baseline}", file=sys.stderr)
        return EXIT_OK
    if request.statistics:
        sys.stdout.write(statistics(report))
    else:
        write_report(
            report,
            outputs,
            pipeline.registry,
            color=request.color,
            verbose=request.verbose,
            show_passes=request.show_passes,
            quiet=request.quiet,
        )
    return EXIT_OK if request.exit_zero and report.exit_code == 1 else report.exit_code


def statistics(report: Report) -> str:
    """``--statistics``: one line per rule with warnings or failures, ``COUNT  CODE  severity  name``,
    most first (ruff's ``--statistics``)."""
    from collections import Counter

    from rigcheck.core.report.render.escape import escape_text

    counted: Counter[tuple[str, str]] = Counter()
    names: dict[str, str] = {}
    for finding in report.findings:
        if finding.severity.value in ("warn", "fail"):
            counted[(finding.code, finding.severity.value)] += 1
            names[finding.code] = finding.name
    rows = sorted(counted.items(), key=lambda item: (-item[1], item[0]))
    lines = [
        f"{count:5}  {escape_text(code):10} {severity:5}  {escape_text(names[code])}".rstrip()
        for (code, severity), count in rows
    ]
    return "\n".join(lines) + ("\n" if lines else "")


#: What each output says until the run's report replaces it.
UNFINISHED = "the run did not finish its report (it was ended: a plugin, a signal, or --timeout)"


def check_output_paths(paths: Sequence[str]) -> None:
    """A usage error, before any work is done, for an output rigcheck would not write
    (:func:`rigcheck.core.spec.boundary.output_problem`: not a regular file, a missing folder, a folder
    linked out of the repository) and for two outputs that name one file."""
    from rigcheck.core.engine.errors import UsageError
    from rigcheck.core.report.render.escape import escape_text
    from rigcheck.core.spec.boundary import output_problem

    seen: dict[str, str] = {}
    for path in paths:
        reason = output_problem(path)
        if reason is not None:
            raise UsageError(f"cannot write {escape_text(path)}: {reason}")
        key = os.path.normcase(os.path.realpath(path))
        if key in seen:
            raise UsageError(
                f"{escape_text(seen[key])} and {escape_text(path)} name the same file: give each output its own"
            )
        seen[key] = path


def write_failed(formats: Sequence[str], files: Mapping[int, str], reason: str) -> None:
    """Replace each output file with a report, in its format, that says nothing was checked and why
    (:mod:`rigcheck.core.report.render.failed`); an output that cannot be written is left as it is."""
    if not files:  # nothing to replace: a run to standard output imports none of this
        return
    from rigcheck._version import __version__
    from rigcheck.core.report.render.failed import failed_report
    from rigcheck.core.spec.boundary import BoundaryError

    for slot, path in files.items():
        name = formats[slot] if slot < len(formats) else "text"
        try:
            emit(failed_report(name, reason, __version__), path)
        except (BoundaryError, OSError):
            continue


def build_pipeline(request: ReportRequest) -> Pipeline:
    """The project config found for the request's paths with the command line over it, the plugins it
    names, the catalog, the time limit and the baseline."""
    from rigcheck.core.engine.config import load_settings
    from rigcheck.core.engine.engine import DEFAULT_TIMEOUT_S, build_catalog
    from rigcheck.core.engine.sandbox import isolation_requested
    from rigcheck.core.lint.lint import Pipeline

    cli: dict[str, Any] = {}
    if request.select is not None:
        cli["select"] = list(request.select)
    if request.extend_select:
        cli["extend-select"] = list(request.extend_select)
    if request.ignore is not None:
        cli["ignore"] = list(request.ignore)
    if request.fail_on:
        cli["fail-on"] = request.fail_on
    if request.exclude is not None:
        cli["exclude"] = list(request.exclude)
    if request.extend_exclude:
        cli["extend-exclude"] = list(request.extend_exclude)
    settings = load_settings(
        list(request.paths), config_path=request.config, isolated=request.isolated, cli=cli
    )
    registry = load_registry(list(request.plugins), isolate=request.isolate_plugins, config=settings)
    baseline = request.baseline
    if baseline is None and settings["baseline"] and not request.create_baseline:
        baseline = str(settings.base / settings["baseline"])
        _inside_root(baseline, settings, "/baseline")
    return Pipeline(
        registry,
        build_catalog(registry),
        settings,
        request.checker_timeout if request.checker_timeout is not None else DEFAULT_TIMEOUT_S,
        no_ignores=request.no_ignores,
        baseline=None if request.create_baseline else baseline,
        isolate_plugins=isolation_requested(request.isolate_plugins),
        jobs=request.jobs,
        fold=not request.create_baseline,  # a baseline lists every finding
        deadline=request.deadline,
    )


def _inside_root(path: str, settings: Settings, pointer: str) -> None:
    """A path the project config names must be inside the checked root (SPEC014), else exit 2."""
    from rigcheck.core.engine.errors import Problem, SpecError
    from rigcheck.core.spec.boundary import outside_reason

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
    from rigcheck.core.engine.errors import UsageError

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


def stored_chunk_text(outputs: Sequence[Output]) -> Any:
    """What a lint's finding stores should write each chunk into as they keep it: the JSON writer's text
    when one of ``outputs`` is rigcheck's JSON report (it then writes those chunks as they are), else
    None."""
    # imported by report_outputs only when it is asked for: a check or lint to text never loads it
    json = sys.modules.get("rigcheck.core.report.render.json")
    if json is not None and any(output.render is json.render_json for output in outputs):
        return json.stored_chunk
    return None


def write_report(
    report: Report,
    outputs: Sequence[Output],
    registry: Registry,
    *,
    color: str,
    verbose: bool,
    show_passes: bool = False,
    quiet: bool = False,
) -> None:
    """Render ``report`` into each output; under GitHub Actions the github format also appends the
    Markdown report to the job summary (GITHUB_STEP_SUMMARY)."""
    for output in outputs:
        options = render_options(
            registry,
            color=color,
            verbose=verbose,
            to_file=output.path is not None,
            show_passes=show_passes,
            quiet=quiet,
        )
        emit(output.render(report, options), output.path)
        if output.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
            markdown = renderer(registry, "markdown")
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
                summary.write(markdown(report, options))
