"""The ``rigcheck probe`` command: ``add_probe_parser`` adds it to the command line, ``cmd_probe`` runs it.

Without an NVIDIA driver (or without nvidia-ml-py) it raises :class:`~rigcheck.core.errors.UsageError`,
which ``rigcheck.cli.main`` prints as one line and turns into exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any


def add_probe_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``probe`` to the sub-command action ``commands`` (``parser.add_subparsers()``)."""
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
    probe.set_defaults(handler=cmd_probe)
    return probe


def cmd_probe(
    args: argparse.Namespace,
    *,
    nvml_module: Any = None,
    host_root: str | os.PathLike[str] = "/",
    env: Mapping[str, str] | None = None,
) -> int:
    """Run the probe and write the spec; 0 on success. Raises ``UsageError`` (exit code 2) without a
    driver. The keyword arguments are for tests."""
    from rigcheck.live.probe import probe, write_probe
    from rigcheck.live.torch_info import AUTO

    spec = probe(
        nvml_module=nvml_module,
        torch_module=None if getattr(args, "no_torch", False) else AUTO,
        host_root=host_root,
        env=env,
        name=getattr(args, "name", None),
    )
    output = getattr(args, "output", None)
    write_probe(spec, output)
    if output and output != "-":
        gpus = sum(group["count"] for group in spec["nodes"][0].get("gpus", []))
        skipped = len(spec["probe"].get("not_supported", []))
        print(
            f"rigcheck: wrote {output} ({gpus} GPU(s); {skipped} NVML call(s) not supported, listed in "
            f"probe.not_supported)",
            file=sys.stderr,
        )
    return 0
