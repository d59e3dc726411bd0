"""What decides which installed plugins load, read without importing pluggy, pydantic or any plugin:
the entry-point group, ``RIGCHECK_DISABLE_PLUGIN_AUTOLOAD`` / ``RIGCHECK_LOAD_PLUGINS``, and the names of
installed plugins from package metadata. ``rigcheck --version`` needs only this (docs/performance.md);
:mod:`rigcheck.core.engine.plugin_manager` loads the plugins."""

from __future__ import annotations

import os
import re
import stat
import sys

ENTRY_POINT_GROUP = "rigcheck"


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def plugin_autoload_allowed(name: str) -> bool:
    """Whether an installed plugin would load under RIGCHECK_DISABLE_PLUGIN_AUTOLOAD / RIGCHECK_LOAD_PLUGINS."""
    if env_flag("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    if "RIGCHECK_LOAD_PLUGINS" in os.environ:
        return name in {item.strip() for item in os.environ["RIGCHECK_LOAD_PLUGINS"].split(",")}
    return True


def normalise_name(name: str) -> str:
    """Distribution-name normalisation (PEP 503): case, ``-``, ``_`` and ``.`` do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


#: More than any real entry_points.txt holds; past it the walk stops reading (and says there may be plugins).
_MAX_ENTRY_POINTS_BYTES = 1 << 20
_GROUP_HEADER = re.compile(rf"^[ \t]*\[[ \t]*{ENTRY_POINT_GROUP}[ \t]*\][ \t]*$", re.MULTILINE)


def may_have_plugins() -> bool:
    """Whether an installed distribution may declare an entry point of the ``rigcheck`` group: False
    only when no ``entry_points.txt`` of a ``.dist-info`` or ``.egg-info`` folder on ``sys.path``
    has the group's section, every ``sys.path`` entry is a folder, and only the standard finders look
    for distributions. Then ``importlib.metadata`` (which imports the ``email`` package: a fifth of
    ``rigcheck rules``) is not needed; in every other case it answers as usual."""
    from importlib.machinery import PathFinder

    if any(finder is not PathFinder and hasattr(finder, "find_distributions") for finder in sys.meta_path):
        return True  # another finder can hold distributions this walk would not see
    for folder in sys.path:
        path = folder or "."
        if not os.path.isdir(path):
            if os.path.exists(path):
                return True  # a zip file on the path: let importlib.metadata read it
            continue
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith((".dist-info", ".egg-info")):
                continue
            declared = os.path.join(entry.path, "entry_points.txt")
            try:  # a regular file only (sys.path may hold the working directory: a FIFO would hang)
                if not stat.S_ISREG(os.stat(declared).st_mode):
                    return True  # not ours to read: importlib.metadata decides
                with open(declared, encoding="utf-8", errors="replace") as handle:
                    text = handle.read(_MAX_ENTRY_POINTS_BYTES)
            except OSError:
                continue
            if _GROUP_HEADER.search(text) or len(text) >= _MAX_ENTRY_POINTS_BYTES:
                return True
    return False


def installed_plugin_names() -> list[str]:
    """Entry-point and distribution names of the installed ``rigcheck`` plugins, from package metadata
    (nothing is imported)."""
    if not may_have_plugins():
        return []
    from importlib.metadata import entry_points

    names = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        names.append(entry_point.name)
        dist = getattr(entry_point, "dist", None)
        if dist is not None:
            names.append(dist.name)
    return names
