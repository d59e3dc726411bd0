"""``rigcheck probe``: read this machine (NVML, torch if installed, /proc and /sys) and write its rig
spec, with a ``probe:`` section of everything read.

Without an NVIDIA driver (or without nvidia-ml-py) it raises :class:`~rigcheck.core.engine.errors.UsageError`,
which ``rigcheck.cli.main`` prints as one line and turns into exit code 2. The live side
(:mod:`rigcheck.live`) is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "probe",
        help="read this machine (NVML, torch, /proc, /sys) and write its rig spec",
        description="Read this machine's GPUs through NVML (nvidia-ml-py), torch if installed, and the host's "
        "CPU, RAM, disks, network links and NCCL environment, and write a rig spec with one node and a probe: "
        "section of everything read. Needs the NVIDIA driver (exit code 2 without it), unless --from builds the spec "
        "from saved tool outputs.",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the spec to FILE instead of standard output"
    )
    parser.add_argument(
        "--no-torch", action="store_true", help="do not import torch (faster; no torch facts)"
    )
    parser.add_argument("--name", metavar="NAME", help="the rig's name (default: the host name)")
    parser.add_argument(
        "--from",
        dest="from_files",
        metavar="FILE",
        nargs="+",
        default=None,
        help="build the spec from saved tool outputs instead (nvidia-smi -q -x / -q / table / csv, topo -m, "
        "nvlink -s, nvcc -V, collect_env, torch one-liners, pip show/list/freeze, df, ibstat...): no NVML or "
        "torch needed; what they do not say is listed as comments",
    )
    add_plugin_options(parser)
    parser.set_defaults(handler=run, confined=True)
    return parser


def run(
    args: argparse.Namespace,
    *,
    nvml_module: Any = None,
    host_root: str | os.PathLike[str] = "/",
    env: Mapping[str, str] | None = None,
) -> int:
    """Run the probe and write the spec. The keyword arguments are for tests: a fake pynvml, a fake
    /proc and /sys tree, and the environment."""
    if getattr(args, "from_files", None):
        return run_from(args)
    from rigcheck.live.probe import probe, write_probe
    from rigcheck.live.torch_info import AUTO

    spec = probe(
        nvml_module=nvml_module,
        torch_module=None if args.no_torch else AUTO,
        host_root=host_root,
        env=env,
        name=args.name,
    )
    write_probe(spec, args.output)
    if args.output and args.output != "-":
        gpus = sum(group["count"] for group in spec["nodes"][0].get("gpus", []))
        skipped = len(spec["probe"].get("not_supported", []))
        print(
            f"rigcheck: wrote {args.output} ({gpus} GPU(s); {skipped} NVML call(s) not supported, listed in "
            f"probe.not_supported)",
            file=sys.stderr,
        )
    return EXIT_OK


def run_from(args: argparse.Namespace) -> int:
    """``probe --from FILE...``: the spec from the files' evidence (:mod:`rigcheck.live.probe_from`)."""
    from rigcheck._version import __version__
    from rigcheck.commands._shared import load_registry
    from rigcheck.evidence.loader import load_evidence
    from rigcheck.live.probe import check_rig_name, write_probe
    from rigcheck.live.probe_from import spec_from_evidence

    check_rig_name(args.name)
    registry = load_registry(args.plugins)
    evidence = load_evidence(args.from_files, [parser for parser, _ in registry.evidence_parsers])
    spec, missing = spec_from_evidence(evidence, name=args.name)
    from rigcheck.core.report.render.escape import escape_stderr, escape_text

    # a comment line holds names from the files (mount points, devices): escaped, so that no character
    # YAML reads as a line break (CR, NEL, U+2028) can end the comment and start a line of the spec
    header = "".join(
        [
            f"# Written by rigcheck probe --from {__version__} at {spec['probed_at']} from {len(args.from_files)} "
            f"file(s) ({len(evidence)} tool output(s)); "
            "probe.sources names each and the fields taken from it.\n",
            "# Not in these files, so not written (add what applies by hand, or run rigcheck probe on the machine):\n",
            *(f"#   {escape_text(line)}\n" for line in missing),
            "# Then: rigcheck check THIS-FILE (and --evidence the same files to compare them with it)\n",
        ]
    )
    write_probe(spec, args.output, header=header)
    unread = [item.source for item in evidence if item.tool == "unknown"]
    if args.output and args.output != "-":
        gpus = sum(group["count"] for group in spec["nodes"][0].get("gpus", []))
        print(
            f"rigcheck: wrote {args.output} ({gpus} GPU(s) from {len(evidence) - len(unread)} of {len(evidence)} "
            f"tool output(s) in {len(args.from_files)} file(s); {len(missing)} item(s) not in the evidence, listed "
            "at the top)",
            file=sys.stderr,
        )
    for source in unread:
        print(
            escape_stderr(f"rigcheck: {source}: not recognised as a tool output; left out"), file=sys.stderr
        )
    return EXIT_OK
