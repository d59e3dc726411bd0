"""Option groups that several commands share: the report options of ``check`` and ``lint``,
``--color`` and ``-p``. Only argparse here; nothing is imported until a command runs."""

from __future__ import annotations

import argparse
from typing import Any


class OutputAfterFormat(argparse.Action):
    """``-o FILE`` belongs to the ``-f`` right before it (``-f github -f sarif -o r.sarif`` writes SARIF
    to r.sarif); an ``-o`` before any ``-f`` is the default format's. The format each output follows
    is kept in ``output_slots``; :func:`output_files` reads it back."""

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


def output_files(args: argparse.Namespace) -> dict[int, str]:
    """The ``-o`` files of :func:`add_report_options`, by the position of the ``-f`` each follows."""
    slots = list(getattr(args, "output_slots", None) or range(len(args.output)))
    return dict(zip(slots, args.output, strict=True))


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """The options of check and lint: formats, selection, config, suppressions, baseline."""
    parser.add_argument(
        "-f",
        "--format",
        action="append",
        default=[],
        metavar="FORMAT",
        help="report format: text, json, sarif, junit, github, markdown, html (or a plugin's); repeatable, each "
        "paired with an --output by position (default: text, or github under GitHub Actions)",
    )
    parser.add_argument(
        "-o",
        "--output",
        action=OutputAfterFormat,
        default=[],
        metavar="FILE",
        help="write the --format just before it to FILE (formats without one go to standard output; at most "
        "one may)",
    )
    add_color_option(parser)
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
        "--extend-select",
        action="append",
        default=[],
        metavar="CODES",
        help="add these rules to the selection (the config's select, or --select); repeatable",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODES",
        help="leave out these rules: codes or prefixes, comma-separated; repeatable; adds to the config's ignore",
    )
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when findings reach --fail-on (bad input and usage still exit 2)",
    )
    parser.add_argument(
        "--statistics",
        action="store_true",
        help="instead of the report, print how many warnings and failures each rule found, most first",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="time limit of the whole run: the runs not checked by then are reported (ENGINE005, a "
        "failure) and the report is written; a run that cannot stop is ended soon after (exit 2). "
        "Default: none",
    )
    parser.add_argument(
        "--checker-timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="time limit of each checker on each run (default 10)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list every finding, passes too, with its evidence"
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="text format: list only the warnings and failures, with no header or summary (the exit code "
        "says the verdict); other formats are unchanged",
    )
    parser.add_argument(
        "--show-passes",
        action="store_true",
        help="list the passed checks too (by default they are counted, not listed)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="project config to use (default: .rigcheck.yaml found from the path up)",
    )
    parser.add_argument("--isolated", action="store_true", help="ignore every config file")
    parser.add_argument(
        "--allow-network",
        action="store_true",
        help="fetch the config.json of a Hugging Face model id (model: {hf: ORG/NAME}) that is not in the "
        "local cache (never weights; HF_HUB_OFFLINE=1 forbids it). Default: the cache only",
    )
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
    add_plugin_options(parser)


def jobs_count(text: str) -> int:
    """``--jobs N``: a whole number of at least 1 (else a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"{value} jobs: give 1 or more (1 checks everything in this process)"
        )
    return value


def seconds(text: str) -> float:
    """``--timeout`` and ``--checker-timeout``: a number of seconds above 0 (else a usage error, exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 1e9:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text!r} seconds: give a number above 0")
    return value


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """``--jobs N`` of ``lint``: worker processes for its runs (default: the CPUs this process may use)."""
    parser.add_argument(
        "--jobs",
        type=jobs_count,
        default=None,
        metavar="N",
        help="check the runs in up to N worker processes where that pays (default: the CPUs this process "
        "may use; 1: all in this process). Never more workers than those CPUs, nor than one per 128 runs; "
        "with --isolate-plugins, or where the process cannot fork, all in this process",
    )


def add_offline_option(parser: argparse.ArgumentParser) -> None:
    """``--offline`` of estimate and plan, which otherwise fetch a missing Hugging Face config."""
    parser.add_argument(
        "--offline",
        dest="allow_network",
        action="store_false",
        default=True,
        help="never fetch a Hugging Face model's config.json: the local cache only (also HF_HUB_OFFLINE=1); "
        "by default one not in the cache is fetched (the config alone, never weights)",
    )


def add_stdin_option(parser: argparse.ArgumentParser) -> None:
    """``--stdin-filename``: the name a spec given as ``-`` (read from standard input) stands for."""
    parser.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="a spec given as - is read from standard input; NAME is the file it stands for (in "
        "locations, suppressions and the config found from it; default: <stdin>)",
    )


def add_color_option(parser: argparse.ArgumentParser) -> None:
    """``--color`` of the commands that write a text report."""
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text report (auto: on a terminal, unless NO_COLOR is set)",
    )


def add_plugin_options(parser: argparse.ArgumentParser) -> None:
    """``-p MODULE`` and ``-p no:NAME``, read by :func:`rigcheck.commands._shared.load_registry`."""
    parser.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        metavar="MODULE",
        help="load a plugin module; -p no:NAME blocks the plugin NAME",
    )
