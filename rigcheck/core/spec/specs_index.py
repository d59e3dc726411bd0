"""Shipped reference specs (``specs/rigs``, ``specs/workloads``), usable by file stem or ``name:``.

``rigcheck check home-2x3090 qwen-1.8b-law-lora`` finds the shipped files whose ``name:`` (or file
stem) is given; a path that exists always wins over a shipped name.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from rigcheck.core.engine.errors import UsageError
from rigcheck.core.spec.fields import did_you_mean

_FOLDERS = {"Rig": "rigs", "Workload": "workloads"}
_NAME_LINE = re.compile(r"^name:\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)['\"]?\s*(?:#.*)?$", re.MULTILINE)


@cache
def shipped_specs(kind: str) -> dict[str, Path]:
    """``{name or stem: path}`` of the shipped specs of ``kind``."""
    from rigcheck.resources import specs_dir

    folder = specs_dir() / _FOLDERS[kind]
    found: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yaml")):
        found.setdefault(path.stem, path)
        match = _NAME_LINE.search(path.read_text(encoding="utf-8", errors="replace"))
        if match:
            found.setdefault(match.group(1), path)
    return found


def resolve_spec_argument(argument: str, kind: str) -> str:
    """A path to read for ``argument``: the file itself (or the name standard input stands for), or a
    shipped spec of that name."""
    from rigcheck.core.spec.boundary import stdin_bytes

    if (
        stdin_bytes(argument) is not None
        or os.path.exists(argument)
        or os.sep in argument
        or argument.endswith((".yaml", ".yml"))
    ):
        return argument
    shipped = shipped_specs(kind)
    path = shipped.get(argument)
    if path is None:
        names = sorted({p.stem for p in shipped.values()} | set(shipped))
        raise UsageError(
            f"no file {argument!r} and no shipped {kind.lower()} of that name{did_you_mean(argument, names)}; "
            f"shipped {_FOLDERS[kind]}: {', '.join(sorted(set(shipped)))}"
        )
    return _display_path(path)


def _display_path(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative
