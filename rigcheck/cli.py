"""The ``rigcheck`` command line: parse, call the core, render, exit.

Exit codes (as ruff and ESLint use them): 0 when no finding reaches ``--fail-on``, 1 when one
does, 2 for bad input, a bad command line, a broken plugin or an internal error. Errors are one
line each (``file:line:col: error: ...``); ``RIGCHECK_DEBUG=1`` adds the traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from rigcheck import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and ``python -m rigcheck``."""
    # A short-lived command that allocates many small objects and few cycles: collecting the youngest
    # generation every 700 allocations (Python's default) costs a third of a large run
    # (docs/performance.md). Collections still happen, 300 times less often.
    gc.set_threshold(200_000, 50, 100)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None and not args.version:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if args.command is None:
        args.handler, args.plugins = _cmd_version, []
    from rigcheck.core.errors import RigcheckError

    token = None
    try:
        token = _confine(args)
        return int(args.handler(args))
    except RigcheckError as exc:
        from rigcheck.core.render.escape import escape_stderr  # spec text: no control or workflow command

        lines = [problem.format() for problem in getattr(exc, "problems", ())] or [str(exc)]
        print("\n".join(escape_stderr(line) for line in lines), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("rigcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:  # never a traceback unless asked for
        if os.environ.get("RIGCHECK_DEBUG"):
            raise
        from rigcheck.core.render.escape import escape_stderr

        print(
            escape_stderr(
                f"rigcheck: internal error: {type(exc).__name__}: {exc} (RIGCHECK_DEBUG=1 shows the traceback; "
                f"please report it)"
            ),
            file=sys.stderr,
        )
        return EXIT_ERROR
    finally:
        if token is not None:
            from rigcheck.core.boundary import reset_root

            reset_root(token)


# -- the parser -------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rigcheck",
        description="Validate GPU rigs and ML workloads before you buy, build or change them.",
        epilog="Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and the loaded plugins")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")

    check = commands.add_parser(
        "check",
        help="check a rig, or a rig and a workload",
        description="Check a rig (rig-only rules), or a workload against a rig. "
        "RIG and WORKLOAD are files, or the name of a shipped spec.",
    )
    check.add_argument("rig", metavar="RIG", help="rig spec file, or the name of a shipped rig (home-2x3090)")
    check.add_argument("workload", metavar="WORKLOAD", nargs="?", help="workload spec file or shipped name")
    _add_report_options(check)
    check.set_defaults(handler=_cmd_check)

    lint = commands.add_parser(
        "lint",
        help="check every spec under PATHs: each rig, and each workload against its rigs",
        description="Find rig and workload specs under PATHs (default: the current folder), pair workloads "
        "with rigs (runs_on:, and pairs/matrix in .rigcheck.yaml), check every rig alone and every pair, "
        "and write one report. Made for pull requests: SARIF, JUnit, GitHub annotations, Markdown.",
    )
    lint.add_argument("paths", metavar="PATH", nargs="*", default=[], help="files or folders (default: .)")
    _add_report_options(lint)
    lint.set_defaults(handler=_cmd_lint)

    estimate = commands.add_parser(
        "estimate",
        help="per-GPU memory breakdown and speed of a workload",
        description="Estimate a workload's per-GPU memory (every component, and the "
        "allocated / reserved / device totals), and with --rig the fit, "
        "the largest micro-batch that fits and the speed.",
    )
    estimate.add_argument("workload", metavar="WORKLOAD", help="workload spec file or shipped name")
    estimate.add_argument("--rig", metavar="RIG", help="rig spec file or shipped name to fit the workload on")
    estimate.add_argument("-f", "--format", choices=("text", "json"), default="text")
    estimate.add_argument(
        "--trace",
        action="store_true",
        help="also run one real step of the model code on fake tensors and show its traced peak beside the "
        "estimate (extra trace: torch, transformers, peft; bitsandbytes for QLoRA and NF4)",
    )
    estimate.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    _add_plugin_options(estimate)
    estimate.set_defaults(handler=_cmd_estimate)

    models = commands.add_parser("models", help="list the model presets (architecture numbers with sources)")
    models.add_argument("--format", choices=("text", "json"), default="text")
    models.set_defaults(handler=_cmd_models)

    validate = commands.add_parser("validate", help="validate spec files (schema and YAML traps only)")
    validate.add_argument("files", metavar="FILE", nargs="+")
    _add_output_options(validate, formats_help="text (default) or json")
    validate.add_argument("--fail-on", choices=("warn", "fail"), default="fail")
    validate.set_defaults(handler=_cmd_validate)

    schema = commands.add_parser("schema", help="print the JSON Schema of a spec kind or of the report")
    schema.add_argument("which", choices=("rig", "workload", "report", "config"))
    schema.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    schema.set_defaults(handler=_cmd_schema)

    rules = commands.add_parser("rules", help="list every rule (built-in and from plugins)")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rules.add_argument("--select", action="append", default=[], metavar="CODES")
    _add_plugin_options(rules)
    rules.set_defaults(handler=_cmd_rules)

    explain = commands.add_parser("explain", help="print the documentation of one rule")
    explain.add_argument("code", metavar="CODE")
    _add_plugin_options(explain)
    explain.set_defaults(handler=_cmd_explain)

    gpus = commands.add_parser("gpus", help="list or search the GPU catalog")
    gpus.add_argument("query", nargs="?", help="a GPU name to look up (case and punctuation ignored)")
    gpus.add_argument("--format", choices=("text", "json"), default="text")
    _add_plugin_options(gpus)
    gpus.set_defaults(handler=_cmd_gpus)

    plugins = commands.add_parser("plugins", help="list the loaded plugins, their hooks and rules")
    plugins.add_argument("--format", choices=("text", "json"), default="text")
    plugins.add_argument("--all", action="store_true", help="include rigcheck's built-in plugins")
    _add_plugin_options(plugins)
    plugins.set_defaults(handler=_cmd_plugins)

    probe = commands.add_parser(
        "probe",
        help="read this machine (NVML, torch, /proc, /sys) and write its rig spec",
        description="Read this machine's GPUs through NVML (nvidia-ml-py), torch if installed, and the host's "
        "CPU, RAM, disks, network links and NCCL environment, and write a rig spec with one node and a probe: "
        "section of everything read. Needs the NVIDIA driver; exit code 2 without it.",
    )
    probe.add_argument(
        "-o", "--output", metavar="FILE", help="write the spec to FILE instead of standard output"
    )
    probe.add_argument("--no-torch", action="store_true", help="do not import torch (faster; no torch facts)")
    probe.add_argument("--name", metavar="NAME", help="the rig's name (default: the host name)")
    probe.set_defaults(handler=_cmd_probe, plugins=[])

    merge = commands.add_parser(
        "merge",
        help="fold per-node probe files into one cluster rig and report drift between nodes",
        description="Merge rig specs written by `rigcheck probe` on each node into one rig with node groups "
        "(count:, hostnames:), and report what differs between nodes (GPUs, driver, CUDA, torch, ECC, VBIOS).",
    )
    merge.add_argument("files", metavar="FILE", nargs="+", help="probe files (rigcheck probe -o node.yaml)")
    merge.add_argument(
        "-o", "--output", metavar="FILE", help="write the merged rig here (default: standard output)"
    )
    merge.add_argument("--name", default="cluster", help="name of the merged rig (default: cluster)")
    merge.add_argument(
        "-f", "--format", choices=("text", "json"), default="text", help="format of the drift report"
    )
    merge.add_argument("--fail-on", choices=("warn", "fail"), default="fail")
    merge.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    merge.set_defaults(handler=_cmd_merge, plugins=[])

    measure = commands.add_parser(
        "measure",
        help="measure copy and all-reduce bandwidth on this machine (needs torch), as evidence",
        description="Measure host-device, device-device and peer copy bandwidth and a local all-reduce with "
        "PyTorch, and write them as an evidence file for `rigcheck check RIG --evidence FILE`. Without a GPU it "
        "measures host memory bandwidth and says so.",
    )
    measure.add_argument(
        "-o", "--output", metavar="FILE", help="write the evidence here (default: standard output)"
    )
    measure.add_argument("--size-mib", type=int, default=256, help="bytes per copy, MiB (default 256)")
    measure.add_argument("--iterations", type=int, default=5, help="timed runs per measurement (default 5)")
    measure.set_defaults(handler=_cmd_measure, plugins=[])

    version = commands.add_parser("version", help="print the version and the loaded plugins")
    _add_plugin_options(version)
    version.set_defaults(handler=_cmd_version)

    return parser


class _OutputAfterFormat(argparse.Action):
    """``-o FILE`` belongs to the ``-f`` right before it (``-f github -f sarif -o r.sarif`` writes SARIF
    to r.sarif); an ``-o`` before any ``-f`` is the default format's. The format each output follows
    is kept in ``output_slots``."""

    def __call__(self, parser: Any, namespace: Any, value: Any, option_string: Any = None) -> None:
        formats = getattr(namespace, "format", None) or []
        slots = list(getattr(namespace, "output_slots", None) or [])
        slot = max(len(formats) - 1, 0)
        if slot in slots:
            parser.error(
                f"{option_string} {value}: the --format before it already has an --output; give each "
                "--output right after its --format (-f sarif -o rigcheck.sarif -f github)"
            )
        namespace.output_slots = [*slots, slot]
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), value])


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    """The options of check and lint: formats, selection, config, suppressions, baseline."""
    parser.add_argument(
        "-f",
        "--format",
        action="append",
        default=[],
        metavar="FORMAT",
        help="report format: text, json, sarif, junit, github, markdown (or a plugin's); repeatable, each "
        "paired with an --output by position (default: text, or github under GitHub Actions)",
    )
    parser.add_argument(
        "-o",
        "--output",
        action=_OutputAfterFormat,
        default=[],
        metavar="FILE",
        help="write the --format just before it to FILE (formats without one go to standard output; at most "
        "one may)",
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text report (auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("warn", "fail"),
        default=None,
        help="exit 1 when a finding is at or above this severity (default: fail, or the config's fail-on)",
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="CODES",
        help="only these rules: codes or prefixes, comma-separated (PLT, SPEC001); repeatable; replaces the "
        "config's select",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODES",
        help="leave out these rules: codes or prefixes, comma-separated; repeatable; adds to the config's ignore",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time limit of each checker (default 10)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show each finding's evidence (and passes)"
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="project config to use (default: .rigcheck.yaml found from the path up)",
    )
    parser.add_argument("--isolated", action="store_true", help="ignore every config file")
    parser.add_argument(
        "--show-config",
        action="store_true",
        help="print the effective settings and where each came from, and exit",
    )
    parser.add_argument(
        "--no-ignores",
        action="store_true",
        help="apply no suppression comment or waiver (audit mode: everything counts)",
    )
    parser.add_argument(
        "--baseline", metavar="FILE", help="findings listed in FILE do not count (only new findings fail)"
    )
    parser.add_argument(
        "--create-baseline", metavar="FILE", help="write the current warnings and failures to FILE and exit 0"
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="the checked root: files a spec or config names must be inside it (default: the repository, "
        "the nearest folder with .git, of the config or the working directory)",
    )
    parser.add_argument(
        "--isolate-plugins",
        action="store_true",
        default=None,
        help="run each third-party checker in a child process, so that one that exits the process "
        "(os._exit) or corrupts rigcheck's state is reported, not obeyed (also RIGCHECK_ISOLATE_PLUGINS=1)",
    )
    parser.add_argument(
        "-e",
        "--evidence",
        action="append",
        default=[],
        metavar="FILE",
        help="measured evidence to compare with the rig: nvidia-smi (-q -x, -q, table, csv, topo, nvlink), "
        "nccl-tests, fio JSON, bandwidthTest, p2pBandwidthLatencyTest, nvbandwidth, dcgmi diag, ibstat, nvcc -V, "
        "collect_env, rigcheck probe/measure files; repeatable",
    )
    _add_plugin_options(parser)


def _add_output_options(parser: argparse.ArgumentParser, *, formats_help: str) -> None:
    parser.add_argument(
        "-f", "--format", default="text", metavar="FORMAT", help=f"report format: {formats_help}"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text report (auto: on a terminal, unless NO_COLOR is set)",
    )


def _add_plugin_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        metavar="MODULE",
        help="load a plugin module; -p no:NAME blocks the plugin NAME",
    )


# -- commands -----------------------------------------------------------------------------------------


def _cmd_version(args: argparse.Namespace) -> int:
    from rigcheck import __plugin_api__

    print(f"rigcheck {__version__} (plugin API {__plugin_api__}, Python {sys.version.split()[0]})")
    if getattr(args, "plugins", None):  # -p modules: load them to report what actually loads
        registry = _load_registry(args)
        external = [f"{info.name}-{info.version}" for info in registry.plugins if not info.builtin]
    else:  # installed plugins from their metadata, without importing them (a fast --version)
        external = _installed_plugins()
    if external:
        print("plugins: " + ", ".join(external))
    return EXIT_OK


def _installed_plugins() -> list[str]:
    from importlib.metadata import entry_points

    from rigcheck.core.plugin_manager import ENTRY_POINT_GROUP, plugin_autoload_allowed

    names = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if not plugin_autoload_allowed(entry_point.name):
            continue
        dist = getattr(entry_point, "dist", None)
        names.append(f"{entry_point.name}-{dist.version if dist is not None else 'unknown'}")
    return sorted(names)


def _cmd_check(args: argparse.Namespace) -> int:
    from rigcheck.core.specs_index import resolve_spec_argument

    rig_path = resolve_spec_argument(args.rig, "Rig")
    workload_path = resolve_spec_argument(args.workload, "Workload") if args.workload else None
    pipeline = _pipeline(args, [rig_path])
    if args.show_config:
        sys.stdout.write(pipeline.settings.show())
        return EXIT_OK
    outputs = _outputs(args, pipeline.registry)
    started = time.perf_counter()
    rig_doc, workload_doc = _load_both(rig_path, workload_path)
    evidence, evidence_inputs = _load_evidence(args.evidence, pipeline.registry)
    report = pipeline.check(
        rig_doc, workload_doc, load_ms=(time.perf_counter() - started) * 1000, evidence=evidence
    )
    if evidence_inputs:
        report = report.model_copy(update={"inputs": [*report.inputs, *evidence_inputs]})
    return _finish(report, args, pipeline, outputs)


def _load_evidence(paths: list[str], registry: Any) -> tuple[list[Any], list[Any]]:
    """Parse the --evidence files with the registered parsers (imported only when evidence is given)."""
    if not paths:
        return [], []
    import hashlib

    from rigcheck.core.report import InputFile
    from rigcheck.evidence.loader import load_evidence

    evidence = load_evidence(paths, [parser for parser, _ in registry.evidence_parsers])
    inputs = []
    for path, item in zip(paths, evidence, strict=True):
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        inputs.append(InputFile(path=path, kind="Evidence", name=item.tool, sha256=digest))
    return evidence, inputs


def _cmd_probe(args: argparse.Namespace) -> int:
    from rigcheck.live.cli_probe import cmd_probe  # the live side loads only for this command

    return cmd_probe(args)


def _cmd_merge(args: argparse.Namespace) -> int:
    from rigcheck.core.documents import load_spec
    from rigcheck.core.engine import exit_code_for, summarize, verdict_of
    from rigcheck.core.errors import Problem, SpecError
    from rigcheck.core.findings import Severity
    from rigcheck.core.merge import merge_probes
    from rigcheck.core.report import InputFile, Report, Timings, ToolInfo
    from rigcheck.core.yaml_writer import dump_yaml

    docs, problems = [], []
    for path in args.files:
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
    merged, findings = merge_probes(docs, name=args.name)
    text = "# Written by rigcheck merge; edit freely.\n" + dump_yaml(merged)
    from datetime import datetime, timezone

    from rigcheck import __plugin_api__

    fail_on = Severity(args.fail_on)
    report = Report(
        tool=ToolInfo(version=__version__, plugin_api=__plugin_api__),
        subject=f"merge of {len(docs)} probe file(s) into {args.name}",
        verdict=verdict_of(findings).value,
        fail_on=fail_on.value,
        exit_code=exit_code_for(findings, fail_on),
        summary=summarize(findings),
        findings=findings,
        checkers=[],
        inputs=[InputFile(path=doc.path, kind="Rig", name=doc.name, sha256=doc.sha256) for doc in docs],
        plugins=[],
        timings=Timings(),
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    registry = _load_registry(args)
    renderer = _renderer(registry, args.format)
    args.verbose = False
    rendered = renderer(report, _render_options(args, registry, to_file=False))
    if args.output:
        _emit(text, args.output)
        _emit(rendered, None)
    else:
        _emit(text, None)
        sys.stderr.write(rendered)
    return report.exit_code


def _cmd_measure(args: argparse.Namespace) -> int:
    from rigcheck.live.measure import measure, write_evidence

    def progress(message: str) -> None:
        print(f"rigcheck measure: {message}", file=sys.stderr, flush=True)

    evidence = measure(
        size_mib=args.size_mib,
        iterations=args.iterations,
        progress=progress,
        source=args.output or "rigcheck measure",
    )
    text = write_evidence(evidence, args.output)
    if not args.output:
        sys.stdout.write(text)
    else:
        print(f"rigcheck measure: wrote {args.output}", file=sys.stderr)
    return EXIT_OK


def _cmd_lint(args: argparse.Namespace) -> int:
    from rigcheck.core.lint import lint

    paths = args.paths or ["."]
    pipeline = _pipeline(args, paths)
    if args.show_config:
        sys.stdout.write(pipeline.settings.show())
        return EXIT_OK
    outputs = _outputs(args, pipeline.registry)
    report = lint(paths, pipeline)
    return _finish(report, args, pipeline, outputs)


def _pipeline(args: argparse.Namespace, paths: list[str]) -> Any:
    from rigcheck.core.config import load_settings
    from rigcheck.core.engine import DEFAULT_TIMEOUT_S, build_catalog
    from rigcheck.core.lint import Pipeline
    from rigcheck.core.sandbox import isolation_requested

    cli: dict[str, Any] = {}
    if args.select:
        cli["select"] = list(_codes(args.select))
    if args.ignore:
        cli["ignore"] = list(_codes(args.ignore))
    if args.fail_on:
        cli["fail-on"] = args.fail_on
    settings = load_settings(paths, config_path=args.config, isolated=args.isolated, cli=cli)
    registry = _load_registry(args, settings)
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
        isolate_plugins=isolation_requested(getattr(args, "isolate_plugins", None)),
    )


def _inside_root(path: str, settings: Any, pointer: str) -> None:
    """A path the project config names must be inside the checked root (SPEC014), else exit 2."""
    from rigcheck.core.boundary import outside_reason
    from rigcheck.core.errors import Problem, SpecError

    reason = outside_reason(path)
    if reason is not None:
        line, column = settings.location(pointer)
        raise SpecError(
            Problem(settings.path or "config", f"{reason}; not read", line, column, pointer, "SPEC014")
        )


def _outputs(args: argparse.Namespace, registry: Any) -> list[tuple[str, Any, str | None]]:
    """(format, renderer, output file or None for standard output), checked before any work is done."""
    from rigcheck.core.errors import UsageError

    formats = list(args.format)
    if not formats:
        formats = ["github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"]
    slots = list(getattr(args, "output_slots", None) or range(len(args.output)))
    files = dict(zip(slots, args.output, strict=True))
    if any(slot >= len(formats) for slot in files):
        raise UsageError(f"{len(args.output)} --output for {len(formats)} --format: give a --format for each")
    paired = [(name, _renderer(registry, name), files.get(i)) for i, name in enumerate(formats)]
    to_stdout = [name for name, _, output in paired if output is None]
    if len(to_stdout) > 1:
        raise UsageError(
            f"formats {', '.join(to_stdout)} would all go to standard output: give each an --output"
        )
    return paired


def _finish(
    report: Any, args: argparse.Namespace, pipeline: Any, outputs: list[tuple[str, Any, str | None]]
) -> int:
    if args.create_baseline:
        from rigcheck.core.baseline import write_baseline

        count = write_baseline(report.findings, args.create_baseline)
        print(f"rigcheck: wrote {count} baseline entries to {args.create_baseline}", file=sys.stderr)
        return EXIT_OK
    for name, renderer, output in outputs:
        options = _render_options(args, pipeline.registry, to_file=output is not None)
        _emit(renderer(report, options), output)
        if name == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
            markdown = _renderer(pipeline.registry, "markdown")
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
                summary.write(markdown(report, options))
    return report.exit_code


def _load_both(rig_path: str, workload_path: str | None) -> tuple[Any, Any]:
    """Load the rig and the workload; report the problems of both files before giving up."""
    from rigcheck.core.documents import load_spec
    from rigcheck.core.errors import SpecError

    loaded: list[Any] = []
    problems = []
    for path, kind in ((rig_path, "Rig"), (workload_path, "Workload")):
        if path is None:
            loaded.append(None)
            continue
        try:
            loaded.append(load_spec(path, kind=kind))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return loaded[0], loaded[1]


def _cmd_estimate(args: argparse.Namespace) -> int:
    import json

    from rigcheck.core import estimate_report
    from rigcheck.core.context import CheckContext
    from rigcheck.core.engine import build_catalog
    from rigcheck.core.specs_index import resolve_spec_argument

    workload_path = resolve_spec_argument(args.workload, "Workload")
    rig_path = resolve_spec_argument(args.rig, "Rig") if args.rig else None
    rig_doc, workload_doc = (
        _load_both(rig_path, workload_path) if rig_path else (None, _load_both_workload(workload_path))
    )
    ctx = None
    if rig_doc is not None:
        ctx = CheckContext(rig_doc, workload_doc, build_catalog(_load_registry(args)))
    traced = _trace_for(workload_doc, ctx, args) if getattr(args, "trace", False) else None
    result = estimate_report.build(workload_doc, ctx, trace=traced)
    text = (
        json.dumps(result, indent=2, allow_nan=False) + "\n"
        if args.format == "json"
        else estimate_report.render_text(result)
    )
    _emit(text, args.output)
    return EXIT_OK


def _trace_for(workload_doc: Any, ctx: Any, args: argparse.Namespace) -> Any:
    """Trace the workload (rigcheck.trace), with progress on standard error."""
    from rigcheck.core import estimate_report
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


def _load_both_workload(path: str) -> Any:
    from rigcheck.core.context import _resolve_model
    from rigcheck.core.documents import load_spec

    document = load_spec(path, kind="Workload")
    _resolve_model(document)  # a bad preset or LoRA target is an error at its line
    return document


def _cmd_models(args: argparse.Namespace) -> int:
    import json

    from rigcheck.core.estimation.architecture import architecture_from_mapping, find_preset, preset_ids

    rows = []
    for model_id in preset_ids():
        entry = find_preset(model_id)
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
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        print(
            f"{row['id']:<18} {row['params_b']:>8g}B  L{row['layers']:<3} h{row['hidden']:<6} "
            f"heads {row['heads']}/{row['kv_heads']:<3} ffn {row['ffn']:<6} vocab {row['vocab']:<7} {row['name']}"
        )
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from rigcheck.core.validate import render_validation, validate_files

    results = validate_files(args.files)
    if args.format not in ("text", "json"):
        from rigcheck.core.errors import UsageError

        raise UsageError(f"rigcheck validate: unknown format {args.format!r}; use text or json")
    _emit(render_validation(results, args.format, color=_color(args)), args.output)
    if any(result.problems for result in results):
        return EXIT_ERROR
    threshold = {"warn": ("warn", "fail"), "fail": ("fail",)}[args.fail_on]
    return EXIT_FINDINGS if any(trap.severity in threshold for r in results for trap in r.traps) else EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from rigcheck.core.schemas import schema_text

    _emit(schema_text(args.which), args.output)
    return EXIT_OK


def _cmd_rules(args: argparse.Namespace) -> int:
    import json

    from rigcheck.core.rules import matches

    registry = _load_registry(args)
    selectors = _codes(args.select)
    entries = [
        entry for entry in registry.sorted_rules() if not selectors or matches(entry.rule.code, selectors)
    ]
    if args.format == "json":
        payload = [
            {**entry.rule.as_dict(), "checker": entry.checker, "plugin": entry.plugin.name}
            for entry in entries
        ]
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    width = max((len(entry.rule.name) for entry in entries), default=10)
    for entry in entries:
        rule = entry.rule
        origin = "" if entry.plugin.builtin else f"  [{entry.plugin.name}]"
        print(f"{rule.code:<10} {rule.name:<{width}}  {rule.severity.value:<4}  {rule.summary}{origin}")
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace) -> int:
    from rigcheck.core.docgen import rule_markdown
    from rigcheck.core.errors import UsageError
    from rigcheck.core.fields import did_you_mean

    registry = _load_registry(args)
    entry = registry.rule(args.code)
    if entry is None:
        raise UsageError(
            f"rigcheck explain: no rule {args.code!r}{did_you_mean(args.code.upper(), registry.rules)} "
            f"(rigcheck rules lists them)"
        )
    print(rule_markdown(entry), end="")
    return EXIT_OK


def _cmd_gpus(args: argparse.Namespace) -> int:
    import json

    from rigcheck.core.catalog import CatalogLookupError
    from rigcheck.core.engine import build_catalog
    from rigcheck.core.errors import UsageError

    catalog = build_catalog(_load_registry(args))
    if args.query:
        try:
            entries = [catalog.lookup(args.query)]
        except CatalogLookupError as exc:
            raise UsageError(f"rigcheck gpus: {exc}") from None
    else:
        entries = sorted(catalog, key=lambda spec: (spec.vendor, spec.segment or "", spec.name))
    if args.format == "json":
        print(json.dumps([spec.model_dump(mode="json", exclude_none=True) for spec in entries], indent=2))
        return EXIT_OK
    if args.query:
        spec = entries[0]
        for key, value in spec.model_dump(mode="json", exclude_none=True).items():
            print(f"{key:<26} {value}")
        return EXIT_OK
    for spec in entries:
        bandwidth = f"{spec.memory_bandwidth_gbps:g} GB/s" if spec.memory_bandwidth_gbps else "?"
        power = f"{spec.tdp_w:g} W" if spec.tdp_w else "?"
        print(f"{spec.id:<26} {spec.name:<42} {spec.memory_gib:>6g} GiB  {bandwidth:>10}  {power:>7}")
    return EXIT_OK


def _cmd_plugins(args: argparse.Namespace) -> int:
    import json

    registry = _load_registry(args)
    shown = [info for info in registry.plugins if args.all or not info.builtin]
    rows = []
    for info in shown:
        rules = sorted(code for code, entry in registry.rules.items() if entry.plugin.name == info.name)
        rows.append({**info.as_dict(), "rules": rules})
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    if not rows:
        print("no plugins installed (rigcheck plugins --all includes the built-in ones)")
    for row in rows:
        print(
            f"{row['name']} {row['version']}  hooks: {', '.join(row['hooks']) or '-'}  "
            f"rules: {', '.join(row['rules']) or '-'}"
        )
    for fault in registry.faults:
        print(f"! {fault.plugin} {fault.version}: failed in {fault.stage}: {fault.message}")
    return EXIT_OK


# -- helpers ------------------------------------------------------------------------------------------


def _confine(args: argparse.Namespace) -> Any:
    """Set the checked root for the commands that read what a repository names (docs/security.md);
    the token to reset it with, or None."""
    from rigcheck.core.boundary import repository_root, set_root

    if args.command not in ("check", "lint", "validate", "estimate"):
        return None
    if getattr(args, "root", None):
        return set_root(args.root)
    config = getattr(args, "config", None)
    paths = (
        getattr(args, "paths", None)
        or getattr(args, "files", None)
        or [name for name in (getattr(args, "rig", None), getattr(args, "workload", None)) if name]
    )
    start = config or (paths[0] if paths else os.getcwd())
    return set_root(repository_root(start if os.path.exists(start) else os.getcwd()))


def _load_registry(args: argparse.Namespace, config: Any = None) -> Any:
    """Plugins: built-ins, entry points, the project config's ``plugins:`` and ``-p``."""
    from rigcheck.core.plugin_manager import PluginHost

    requested = getattr(args, "plugins", []) or []
    blocked = [item[3:] for item in requested if item.startswith("no:")]
    modules = [item for item in requested if not item.startswith("no:")]
    config_modules = list(config["plugins"]) if config is not None else []
    config_root = str(config.base) if config is not None and config.path else None
    from rigcheck.core.sandbox import isolation_requested

    return PluginHost(
        extra_modules=modules,
        blocked=blocked,
        config_modules=config_modules,
        config_root=config_root,
        isolate=isolation_requested(getattr(args, "isolate_plugins", None)),
    ).load()


def _renderer(registry: Any, name: str) -> Any:
    from rigcheck.core.errors import UsageError
    from rigcheck.core.fields import did_you_mean

    entry = registry.formats.get(name)
    if entry is None:
        raise UsageError(
            f"unknown format {name!r}{did_you_mean(name, registry.formats)}; "
            f"formats: {', '.join(sorted(registry.formats))}"
        )
    return entry.load()


def _codes(values: list[str]) -> tuple[str, ...]:
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def _color(args: argparse.Namespace, to_file: bool | None = None) -> bool:
    if to_file is None:
        to_file = bool(args.output)
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR") or to_file:
        return False
    return sys.stdout.isatty()


def _render_options(args: argparse.Namespace, registry: Any = None, *, to_file: bool | None = None) -> Any:
    from rigcheck.core.render import RenderOptions

    if to_file is None:
        to_file = bool(args.output)
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    unicode = to_file or encoding.replace("-", "") in ("utf8", "utf16", "utf32")
    rules = {code: entry.rule for code, entry in registry.rules.items()} if registry is not None else {}
    return RenderOptions(
        color=_color(args, to_file),
        verbose=getattr(args, "verbose", False),
        unicode=unicode,
        rules=rules,
        root=_repository_root(),
    )


def _repository_root() -> str:
    """The nearest folder at or above the working directory with a .git entry, else the working directory:
    SARIF and annotation paths are relative to the repository."""
    here = os.path.abspath(os.getcwd())
    folder = here
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


def _emit(text: str, output: str | None) -> None:
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
