"""Pydantic's plugins off for a rigcheck process, without the package-metadata import that looking for them costs.

Pydantic hands every validation to the plugins of its ``pydantic`` entry-point group
(https://docs.pydantic.dev/latest/concepts/plugins/). rigcheck validates the specs it reads, which no
such plugin should be handed, so the console entry sets ``PYDANTIC_DISABLE_PLUGINS=__all__`` unless it is
set already. With that value pydantic's ``get_plugins()`` returns no plugins without reading anything, but
the module that defines it, ``pydantic.plugin._loader``, imports ``importlib.metadata`` (and with it the
``email`` package) the first time a model class is built: about 6 ms of a cold ``rigcheck check``, which
otherwise never needs package metadata (``rigcheck.core.plugin_env.may_have_plugins``; issue 20).

:func:`skip_plugin_lookup` puts a stand-in for that module in ``sys.modules`` while the plugins are off: its
``get_plugins()`` returns no plugins, as the real one does for that value, and any other name is taken from
the real module, imported then. Nothing is replaced when the variable leaves some plugins on, or once the
real module is imported.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Iterable
from typing import Any

LOADER = "pydantic.plugin._loader"

#: The values of ``PYDANTIC_DISABLE_PLUGINS`` for which pydantic's ``get_plugins()`` returns no plugins
#: without looking (pydantic/plugin/_loader.py).
ALL_OFF = ("__all__", "1", "true")


class _PluginsOff(types.ModuleType):
    """``pydantic.plugin._loader`` while every pydantic plugin is off."""

    def get_plugins(self) -> Iterable[Any]:
        return ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # the import system asks for __path__ and the like
            raise AttributeError(name)
        if sys.modules.get(LOADER) is self:
            del sys.modules[LOADER]
        return getattr(importlib.import_module(LOADER), name)


def skip_plugin_lookup() -> bool:
    """Put the stand-in in place when ``PYDANTIC_DISABLE_PLUGINS`` turns every plugin off and pydantic has
    not imported its loader yet; whether it is in place."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in ALL_OFF:
        return False
    present = sys.modules.get(LOADER)
    if present is None:
        sys.modules[LOADER] = present = _PluginsOff(LOADER)
    return isinstance(present, _PluginsOff)
