"""``rigcheck probe``: read this machine (NVML, torch if installed, /proc and /sys) and write its rig
spec, with a ``probe:`` section of everything read.

Without an NVIDIA driver (or without nvidia-ml-py) it raises :class:`~rigcheck.core.errors.UsageError`,
which ``rigcheck.cli.main`` prints as one line and turns into exit code 2. The live side
(:mod:`rigcheck.live`) is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

from rigcheck.cli import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "probe",
        help="read this machine (NVML, torch, /proc, /sys) and write its rig spec",
        description="Read this machine's GPUs through NVML (nvidia-ml-py), torch if installed, and the host's "
        "CPU, RAM, disks, network links and NCCL environment, and write a rig spec with one node and a probe: "
        "section of everything read. Needs the NVIDIA driver; exit code 2 without it.",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the spec to FILE instead of standard output"
    )
    parser.add_argument(
        "--no-torch", action="store_true", help="do not import torch (faster; no torch facts)"
    )
    parser.add_argument("--name", metavar="NAME", help="the rig's name (default: the host name)")
    parser.set_defaults(handler=run, plugins=[])
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
