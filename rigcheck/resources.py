"""Find rigcheck's shipped data: ``specs/`` and ``schemas/``.

In the repository they sit at the top level, where people read and edit them; in a wheel they are
packaged under ``rigcheck/_data/`` (see ``[tool.hatch.build.targets.wheel.force-include]``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder that holds ``specs/`` and ``schemas/``."""
    packaged = _PACKAGE / "_data"
    if (packaged / "specs").is_dir():
        return packaged
    checkout = _PACKAGE.parent
    if (checkout / "specs").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout
    raise FileNotFoundError(
        "rigcheck's data (specs/, schemas/) is missing: reinstall rigcheck, or run it from a source checkout"
    )


def specs_dir() -> Path:
    return data_root() / "specs"


def schemas_dir() -> Path:
    return data_root() / "schemas"


def hardware_file(name: str) -> Path:
    return specs_dir() / "hardware" / name


def rules_data_file(name: str) -> Path:
    return specs_dir() / "rules" / name
