"""Plain data to YAML that reads back as written, by rigcheck's YAML 1.2 loader and by YAML 1.1 tools.

``rigcheck merge`` writes strings from probe files, which are untrusted. PyYAML's dumper decides
quoting by YAML 1.1 rules, so ``1e999`` came out unquoted and read back as infinity. This writer
quotes instead of guessing:

* a string is written plain only if it is made of a few safe characters and resolves to a string
  under both the YAML 1.2 core schema (:func:`~rigcheck.core.spec.loader.resolve_plain_scalar`) and
  YAML 1.1 (PyYAML's resolver: ``yes``, ``1:30``, ``2026-11-29``, ``0b101``);
* every other string is double-quoted, with control, format and line-separator characters
  escaped, so each value stays on its one line (no ``::error::`` line for a CI log to obey);
* numbers, booleans and null are written in the form both schemas read the same way.

Only ``dict`` (string keys), ``list``/``tuple``, ``str``, ``int``, ``float``, ``bool`` and ``None``
are written; anything else is a :class:`TypeError`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from rigcheck.core.spec.loader import FLOAT, STR, resolve_plain_scalar

_INDENT = "  "
#: libyaml refuses implicit keys longer than 1024 characters; longer ones are written as ``? key``.
_MAX_IMPLICIT_KEY = 1000
_PLAIN_RE = re.compile(r"[A-Za-z0-9_./(][A-Za-z0-9_./()+=,:@%~ -]*\Z")
_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
}
#: Unicode categories written as escapes: controls, format (bidi overrides, zero width), surrogates,
#: private use, unassigned, and separators other than the plain space.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_YAML11 = Resolver()


def dump_yaml(data: dict[str, Any]) -> str:
    """``data`` (a mapping) as block-style YAML text, ending in a newline."""
    if not isinstance(data, dict):
        raise TypeError(f"the top of a YAML spec is a mapping, not {type(data).__name__}")
    lines = _mapping(data, 0) if data else ["{}"]
    return "\n".join(lines) + "\n"


def scalar(value: Any) -> str:
    """One scalar as YAML text: plain where that is safe, double-quoted otherwise."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return value if is_plain_safe(value) else quote(value)
    raise TypeError(f"cannot write a {type(value).__name__} to YAML: {value!r}")


def is_plain_safe(text: str) -> bool:
    """Whether ``text`` can go unquoted and still read back as this string under YAML 1.2 and 1.1."""
    return (
        bool(_PLAIN_RE.match(text))
        and not text.endswith((" ", ":"))
        and ": " not in text
        and resolve_plain_scalar(text) == STR
        and _YAML11.resolve(ScalarNode, text, (True, False)) == STR
    )


def quote(text: str) -> str:
    """``text`` as a double-quoted YAML scalar on one line, escaping whatever is not plainly visible."""
    return '"' + "".join(_escape(ch) for ch in text) + '"'


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if " " <= ch <= "~":
        return ch
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        raise ValueError(f"a lone surrogate (U+{code:04X}) cannot be written as UTF-8 text")
    if unicodedata.category(ch) in _ESCAPED_CATEGORIES:  # U+FEFF (a BOM) is Cf
        if code <= 0xFF:
            return f"\\x{code:02X}"
        return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"
    return ch


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text and "." not in text:  # 1e+20: YAML 1.1 readers need the dot to see a float
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    assert resolve_plain_scalar(text) == FLOAT, text
    return text


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"mapping keys are written as strings only, not {type(key).__name__}: {key!r}")
    return scalar(key)


def _is_block(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple)) and len(value) > 0


def _flow_empty(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> str:
    return "{}" if isinstance(value, dict) else "[]"


def _inline(value: Any) -> str:
    return _flow_empty(value) if isinstance(value, (dict, list, tuple)) else scalar(value)


def _node(value: Any, depth: int) -> list[str]:
    if isinstance(value, dict):
        return _mapping(value, depth)
    if isinstance(value, (list, tuple)):
        return _sequence(value, depth)
    raise TypeError(f"cannot write a {type(value).__name__} to YAML: {value!r}")


def _mapping(data: dict[Any, Any], depth: int) -> list[str]:
    pad = _INDENT * depth
    lines: list[str] = []
    for key, value in data.items():
        written = _key(key)
        if len(written) > _MAX_IMPLICIT_KEY:
            lines.append(f"{pad}? {written}")
            written = ""
        if _is_block(value):
            lines.append(f"{pad}{written}:")
            lines.extend(_node(value, depth + 1))
        else:
            lines.append(f"{pad}{written}: {_inline(value)}")
    return lines


def _sequence(items: list[Any] | tuple[Any, ...], depth: int) -> list[str]:
    pad = _INDENT * depth
    lines: list[str] = []
    for item in items:
        if _is_block(item):
            nested = _node(item, depth + 1)
            lines.append(f"{pad}- {nested[0].lstrip(' ')}")
            lines.extend(nested[1:])
        else:
            lines.append(f"{pad}- {_inline(item)}")
    return lines
