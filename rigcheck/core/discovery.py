"""Finding spec files for ``rigcheck lint``: walk the given paths, keep the YAML files that declare
``apiVersion: rigcheck/...`` and ``kind: Rig`` or ``kind: Workload``.

Other YAML (CI workflows, Kubernetes manifests) is skipped without reading it as a spec. Hidden
folders, virtual environments and build output are not entered; ``exclude`` globs (from the
project config) are matched against paths relative to the config's folder.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rigcheck.core.errors import UsageError

SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "env", "build", "dist", "site-packages", "htmlcov"}
)
_API = re.compile(r"^apiVersion:\s*['\"]?rigcheck/", re.MULTILINE)
_KIND = re.compile(r"^kind:\s*['\"]?(Rig|Workload)['\"]?\s*(?:#.*)?$", re.MULTILINE)
_SUFFIXES = (".yaml", ".yml")
MAX_BYTES = 5 * 2**20  # larger files are not specs: the loader refuses them anyway


@dataclass(frozen=True)
class SpecFile:
    path: str  # as displayed: relative to the working directory when under it
    kind: str | None  # "Rig", "Workload", or None when a named file does not say


def discover(
    paths: Sequence[str], *, exclude: Sequence[str] = (), base: Path | None = None
) -> list[SpecFile]:
    """The spec files under ``paths`` (files named explicitly are always included), sorted, unique."""
    base = base or Path.cwd()
    found: dict[str, SpecFile] = {}
    for argument in paths or ["."]:
        path = Path(argument)
        if not path.exists():
            raise UsageError(f"rigcheck lint: {argument}: no such file or folder")
        if path.is_file():
            found.setdefault(_key(path), SpecFile(_display(path), _kind_of(path)))
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(
                d
                for d in dirs
                if not d.startswith(".")
                and d not in SKIP_DIRS
                and not _excluded(Path(folder, d), exclude, base)
            )
            for name in sorted(files):
                candidate = Path(folder, name)
                if not name.endswith(_SUFFIXES) or _excluded(candidate, exclude, base):
                    continue
                kind = _kind_of(candidate)
                if kind is not None:
                    found.setdefault(_key(candidate), SpecFile(_display(candidate), kind))
    return sorted(found.values(), key=lambda spec: spec.path)


def _kind_of(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not _API.search(text):
        return None
    match = _KIND.search(text)
    return match.group(1) if match else None


def _excluded(path: Path, patterns: Sequence[str], base: Path) -> bool:
    if not patterns:
        return False
    try:
        relative = os.path.relpath(path.resolve(), base).replace(os.sep, "/")
    except ValueError:
        relative = str(path)
    candidates = {relative, str(path).replace(os.sep, "/"), path.name}
    return any(
        fnmatch.fnmatch(candidate, pattern.rstrip("/"))
        or fnmatch.fnmatch(candidate, pattern.rstrip("/") + "/*")
        for pattern in patterns
        for candidate in candidates
    )


def _key(path: Path) -> str:
    return os.path.normcase(str(path.resolve()))


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative
