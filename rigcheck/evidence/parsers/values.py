"""Reading nvidia-smi's values, shared by its query (``-q``), XML (``-q -x``), CSV and table parsers.

nvidia-smi prints numbers with their unit (``700.00 W``, ``143771 MiB``, ``16x``) and switches as
words (``Enabled``/``Disabled``, ``Yes``/``No``, ``On``/``Off``; ``Active`` for some modes), with
``N/A`` and the like where a device has no value (nvidia-smi documentation, "nvidia-smi -q" field
descriptions).
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_TRUE = frozenset(("enabled", "yes", "on", "true", "active"))
_FALSE = frozenset(("disabled", "no", "off", "false"))


def number(value: str | None) -> float | None:
    """The first number in ``value`` (``"700.00 W"`` -> 700.0), or None."""
    if value is None:
        return None
    match = NUMBER.search(value)
    return float(match.group()) if match else None


def integer(value: str | None) -> int | None:
    """:func:`number` as an int (``"16x"`` -> 16), or None."""
    found = number(value)
    return int(found) if found is not None else None


def flag(value: str | None) -> bool | None:
    """Enabled/Disabled, Yes/No, On/Off, Active -> True/False; anything else (N/A) -> None."""
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return None
