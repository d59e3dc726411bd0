"""``rigcheck version`` (and ``rigcheck --version``): print the version, the plugin API, Python, and the
installed plugins (read from their metadata, without importing them, unless ``-p`` names some)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rigcheck import __version__
from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import load_registry
from rigcheck.exit_codes import EXIT_OK


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("version", help="print the version and the loaded plugins")
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck import __plugin_api__

    print(f"rigcheck {__version__} (plugin API {__plugin_api__}, Python {sys.version.split()[0]})")
    if args.plugins:  # -p modules: load them to report what actually loads
        registry = load_registry(args.plugins)
        external = [f"{info.name}-{info.version}" for info in registry.plugins if not info.builtin]
    else:  # installed plugins from their metadata, without importing them (a fast --version)
        external = _installed_plugins()
    if external:
        print("plugins: " + ", ".join(external))
    return EXIT_OK


def _installed_plugins() -> list[str]:
    from importlib.metadata import entry_points

    from rigcheck.core.engine.plugin_env import ENTRY_POINT_GROUP, plugin_autoload_allowed

    names = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if not plugin_autoload_allowed(entry_point.name):
            continue
        dist = getattr(entry_point, "dist", None)
        names.append(f"{entry_point.name}-{dist.version if dist is not None else 'unknown'}")
    return sorted(names)
