"""What decides which installed plugins load, read without importing pluggy, pydantic or any plugin:
the entry-point group, ``RIGCHECK_DISABLE_PLUGIN_AUTOLOAD`` / ``RIGCHECK_LOAD_PLUGINS``, and the names of
installed plugins from package metadata. ``rigcheck --version`` needs only this (docs/performance.md);
:mod:`rigcheck.core.plugin_manager` loads the plugins."""

from __future__ import annotations

import os
import re

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


def installed_plugin_names() -> list[str]:
    """Entry-point and distribution names of the installed ``rigcheck`` plugins, from package metadata
    (nothing is imported)."""
    from importlib.metadata import entry_points

    names = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        names.append(entry_point.name)
        dist = getattr(entry_point, "dist", None)
        if dist is not None:
            names.append(dist.name)
    return names
