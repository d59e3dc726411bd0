"""Finding spec files for ``rigcheck lint``: walk the given paths and list the YAML files. Whether one is
a spec, and whether a Rig or a Workload, is the loader's to say from its parsed documents
(:func:`rigcheck.core.spec.documents.read_if_spec`); nothing here reads what a file says. Hidden
folders, virtual environments and build output are not entered; ``exclude`` globs (from the
project config) are matched against paths relative to the config's folder. A YAML file that cannot
be read, is not a regular file, or (a symlink) leads outside the checked root is returned with its
problem, so that lint reports it instead of skipping it.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from rigcheck.core.engine.errors import UsageError
from rigcheck.core.spec import spec_codes

SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "env", "build", "dist", "site-packages", "htmlcov"}
)
_SUFFIXES = (".yaml", ".yml")


class SpecFile(NamedTuple):
    """A file found to check: its path, the kind its folder or name says, and why it cannot be read."""

    path: str  # as displayed: relative to the working directory when under it
    kind: str | None  # "Rig", "Workload", or None: the loader decides from the document
    problem: str | None = None  # why the file cannot be read (it is reported, not skipped)
    code: str = spec_codes.UNREADABLE_FILE
    named: bool = False  # named on the command line: a spec whatever it declares


def discover(
    paths: Sequence[str], *, exclude: Sequence[str] = (), base: Path | None = None
) -> list[SpecFile]:
    """The spec files under ``paths`` (files named explicitly are always included), sorted, unique."""
    base = base or Path.cwd()
    found: dict[str, SpecFile] = {}
    from rigcheck.core.spec.boundary import stdin_bytes

    for argument in paths or ["."]:
        path = Path(argument)
        if stdin_bytes(argument) is not None:  # ``-``: standard input, under the name it stands for
            found.setdefault(_key(path), SpecFile(argument, None, named=True))
            continue
        if not path.exists():
            raise UsageError(f"rigcheck lint: {argument}: no such file or folder")
        if path.is_file():
            found.setdefault(_key(path), SpecFile(_display(path), None, named=True))
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
                found.setdefault(_key(candidate), _candidate(candidate))
    return sorted(found.values(), key=lambda spec: spec.path)


def _candidate(path: Path) -> SpecFile:
    """The YAML file to classify, or with the problem lint must report: outside the root, not a regular
    file, or unreadable (opened here, so that such a file is said, whatever it holds)."""
    from rigcheck.core.spec.boundary import BoundaryError, outside_reason, read_head

    display = _display(path)
    outside = outside_reason(path)
    if outside is not None:
        return SpecFile(display, None, outside, spec_codes.OUTSIDE_ROOT)
    try:
        read_head(path, 0)
    except BoundaryError as exc:
        return SpecFile(display, None, exc.reason, spec_codes.OUTSIDE_ROOT)
    except OSError as exc:
        reason = f"cannot read the file ({exc.strerror or exc}), so rigcheck cannot tell whether it is a spec"
        return SpecFile(display, None, reason)
    return SpecFile(display, None)


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
    from rigcheck.core.spec.boundary import resolved

    return os.path.normcase(resolved(path))


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative
