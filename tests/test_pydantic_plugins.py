"""rigcheck.core.pydantic_plugins: with every pydantic plugin off, pydantic finds none and package metadata is
never imported; otherwise nothing changes. Each case runs in a fresh interpreter (it is about sys.modules)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, sys
from rigcheck.core.pydantic_plugins import skip_plugin_lookup
placed = skip_plugin_lookup()
from pydantic import BaseModel

class Box(BaseModel):
    size: int

box = Box.model_validate({"size": "3"})
from pydantic.plugin import _loader
seen = {
    "placed": placed,
    "size": box.size,
    "metadata_imported": "importlib.metadata" in sys.modules,
    "plugins": list(_loader.get_plugins()),
}
seen["group"] = _loader.PYDANTIC_ENTRY_POINT_GROUP  # another name: the real module answers
seen["real_now"] = type(sys.modules["pydantic.plugin._loader"]).__name__ == "module"
print(json.dumps(seen))
"""


def probe(value: str | None, before: str = "") -> dict[str, object]:
    env = {key: item for key, item in os.environ.items() if key != "PYDANTIC_DISABLE_PLUGINS"}
    if value is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = value
    result = subprocess.run(
        [sys.executable, "-c", before + PROBE], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("value", ["__all__", "1", "true"])
def test_all_plugins_off_skips_the_metadata_import_and_finds_no_plugins(value: str) -> None:
    seen = probe(value)
    assert seen["placed"] is True
    assert seen["size"] == 3  # models are built and validate as usual
    assert seen["metadata_imported"] is False
    assert seen["plugins"] == []
    assert seen["group"] == "pydantic" and seen["real_now"] is True


@pytest.mark.parametrize("value", [None, "", "some_plugin"])
def test_plugins_left_on_are_looked_for_as_usual(value: str | None) -> None:
    seen = probe(value)
    assert seen["placed"] is False
    assert seen["metadata_imported"] is True  # pydantic's own loader ran
    assert seen["real_now"] is True


def test_a_loader_imported_already_is_left_in_place() -> None:
    seen = probe("__all__", before="import pydantic.plugin._loader\n")
    assert seen["placed"] is False and seen["real_now"] is True


def test_a_cold_check_imports_no_package_metadata() -> None:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['rigcheck', 'check', 'home-2x3090', 'qwen-1.8b-law-lora', '--color', 'never']\n"
        "import atexit\n"
        "atexit.register(lambda: sys.stderr.write('metadata=%s\\n' % ('importlib.metadata' in sys.modules)))\n"
        "runpy.run_module('rigcheck', run_name='__main__')\n"
    )
    env = {key: item for key, item in os.environ.items() if key != "PYDANTIC_DISABLE_PLUGINS"}
    env["RIGCHECK_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 1, result.stderr  # the shipped pair fails BW003
    assert "metadata=False" in result.stderr
