"""Escapes for text that comes from specs, paths and plugins: in CI a pull request is hostile input.

One function per output; each renderer passes every such string (messages, fixes, pointers,
subjects, file paths, reasons, error texts) through its own. Plain ASCII text comes out unchanged
except where a format says otherwise (Markdown brackets, SARIF brackets, ``%`` for GitHub).

- :func:`escape_text` (terminal, text format, JUnit text): C0 and C1 controls, DEL, ESC, lone
  surrogates, Unicode line separators and bidirectional overrides become visible escapes
  (``\\x1b``, ``\\n``, ``\\u202e``), so one field stays on one line and no control sequence
  reaches a terminal; ``##[`` and ``##vso[`` (workflow commands that the Actions runner and Azure
  Pipelines honour anywhere in a line) become ``##\\x5b`` and ``##vso\\x5b``.
- :func:`escape_github_data` and :func:`escape_github_property`: GitHub's own escaping of a
  workflow command (``escapeData``/``escapeProperty`` of actions/toolkit ``command.ts``: ``%``,
  CR and LF; also ``:`` and ``,`` in properties), after other controls are made visible.
- :func:`escape_github_line`: one plain log line under Actions (standard error): as data, and a
  line that would start with ``::`` after leading blanks starts ``%3A:``; ``##[`` becomes ``##%5B``.
- :func:`escape_markdown`: no link, image, autolink or HTML can be formed: ``\\``, ``[`` and ``]``
  are backslash-escaped, so are ``(`` after ``]`` and ``!`` before ``[``; ``<`` and ``>`` become
  entities; ``|`` is escaped for table cells; the ``:`` of ``://`` and the ``.`` of ``www.`` become
  entities (GitHub links bare URLs). Backticks are left: a code span forms no link and
  rigcheck's own fixes use them.
- :func:`escape_sarif`: text escaping, then a ``]`` before ``(`` backslash-escaped (with any
  backslashes before it doubled): SARIF 2.1.0 plain-text messages may carry embedded links
  ``[text](target)`` (3.11.6), and none can form without an unescaped ``](``.
- :func:`escape_xml` (JUnit): controls (C0 but tab, LF and CR; DEL; C1), bidirectional controls and
  line separators, and what XML 1.0 cannot carry even escaped (lone surrogates, U+FFFE, U+FFFF)
  become U+FFFD; ElementTree escapes markup.
- :func:`json_safe`, :func:`json_text` and :func:`dump_json`: JSON is structured, values are written
  exactly, but never as ``NaN`` or ``Infinity`` (``allow_nan=False``): a non-finite float becomes
  ``null`` in the JSON report and the string ``"nan"``, ``"inf"`` or ``"-inf"`` in SARIF property
  bags; DEL, C1 controls, line separators, bidirectional controls and lone surrogates are written
  as ``\\u`` escapes, so the file holds no raw control character either.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

# Controls (C0 but space, DEL, C1), lone surrogates, noncharacters U+FFFE/U+FFFF, the Unicode line and
# paragraph separators and the bidirectional marks, embeddings, overrides and isolates ("Trojan Source").
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LEGACY_COMMAND = re.compile(r"##(vso)?\[")  # the runner's TryParse: IndexOf("##[") anywhere in the line


@functools.cache  # compiled when first needed: each of these two costs 0.5 ms, and a text report needs neither
def _xml_unsafe() -> re.Pattern[str]:
    # also the bidirectional controls and line separators: a CI page shows JUnit text as it is
    return re.compile(
        "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
        "\ud800-\udfff\ufffe\uffff]"
    )


@functools.cache
def _json_unsafe() -> re.Pattern[str]:
    """json.dumps escapes C0 itself; the rest is written as \\u escapes too (the same data, no raw byte)."""
    return re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: str) -> str:
    """``text`` for a terminal or a plain-text report: controls visible, one line, no workflow command."""
    return _LEGACY_COMMAND.sub(lambda m: f"##{m.group(1) or ''}\\x5b", _UNSAFE.sub(_visible, text))


def guard_line(line: str, colon: str = "\\x3a") -> str:
    """``line`` that the Actions runner does not read as a command: one starting ``::`` after
    leading blanks (``TryParseV2`` trims them) gets its first colon written as ``colon``."""
    stripped = line.lstrip()
    if not stripped.startswith("::"):
        return line
    return line[: len(line) - len(stripped)] + colon + stripped[1:]


# -- GitHub workflow commands -------------------------------------------------------------------------


def _visible_controls(text: str) -> str:
    """Controls visible, but CR and LF kept for the workflow-command escaping."""
    return _UNSAFE.sub(lambda m: m.group() if m.group() in "\r\n" else _visible(m), text)


def escape_github_data(text: str) -> str:
    """A workflow command's message (after ``::``): toolkit ``escapeData``, controls made visible, and
    ``##[`` (the legacy command the runner looks for anywhere in a line) written ``##%5B``."""
    data = _visible_controls(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return _LEGACY_COMMAND.sub(lambda m: f"##{m.group(1) or ''}%5B", data)


def escape_github_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): toolkit ``escapeProperty``."""
    return escape_github_data(text).replace(":", "%3A").replace(",", "%2C")


def escape_github_line(text: str) -> str:
    """One plain log line under GitHub Actions: no injected line, no command at its start or inside."""
    return guard_line(escape_github_data(text), "%3A")


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def escape_line(line: str) -> str:
    """One line for the terminal or a plain-text file (``validate``, ``rules``, ``gpus``, ``models``,
    ``plugins``): :func:`escape_text` (a line break in a key stays on the line, visible), then
    :func:`guard_line`."""
    return guard_line(escape_text(line))


def escape_lines(text: str) -> str:
    """Text whose line breaks are its own (``explain``'s Markdown): each line :func:`escape_line`."""
    return "\n".join(escape_line(line) for line in text.split("\n"))


def escape_stderr(line: str) -> str:
    """One line for standard error: escaped as a plain Actions log line under GitHub Actions, else as
    text (control characters visible)."""
    return escape_github_line(line) if in_github_actions() else guard_line(escape_text(line))


# -- Markdown ------------------------------------------------------------------------------------------

_MARKDOWN = re.compile(r"\\|\[|\]\(?|!(?=\[)|<|>|\|")
_MARKDOWN_TABLE_FREE = re.compile(r"\\|\[|\]\(?|!(?=\[)|<|>")
_MARKDOWN_REPLACE = {"<": "&lt;", ">": "&gt;", "](": "\\]\\("}


#: What GitHub turns into a link in plain text (its autolink extension): a scheme's ``://`` and ``www.``.
_BARE_LINK = re.compile(r"://|(?<![\w.])www\.", re.IGNORECASE)


def escape_markdown(text: str, *, table: bool = True) -> str:
    """``text`` as literal Markdown (GitHub Flavored): no link, image, autolink (``https://`` and
    ``www.`` in plain text get an entity for their colon or dot), HTML or table cell break."""
    pattern = _MARKDOWN if table else _MARKDOWN_TABLE_FREE
    escaped = pattern.sub(lambda m: _MARKDOWN_REPLACE.get(m.group(), "\\" + m.group()), escape_text(text))
    return _BARE_LINK.sub(lambda m: "&#58;//" if m.group() == "://" else m.group()[:3] + "&#46;", escaped)


# -- SARIF, JUnit XML, JSON ------------------------------------------------------------------------------

_SARIF_LINK = re.compile(r"\\*\](?=\()")  # the "](" of an embedded link, and backslashes before it


def escape_sarif(text: str) -> str:
    """A SARIF plain-text message: text escaping, and no embedded link (``[x\\](y)``)."""
    return _SARIF_LINK.sub(lambda m: m.group()[:-1] * 2 + "\\]", escape_text(text))


def escape_xml(text: str) -> str:
    """A JUnit attribute or text: controls and what XML 1.0 cannot carry become U+FFFD (ElementTree
    escapes ``<``, ``&`` and quotes); tab, LF and CR stay, but no line reads as a workflow command
    where a CI step prints the file (:func:`guard_line`, ``##[`` broken as in text)."""
    safe = _xml_unsafe().sub("\ufffd", text)
    if "::" in safe:
        safe = "\n".join(guard_line(line) for line in safe.split("\n"))
    return _LEGACY_COMMAND.sub(lambda m: f"##{m.group(1) or ''}\\x5b", safe)


def json_safe(value: Any, *, nonfinite: Callable[[float], Any] = str) -> Any:
    """``value`` with only JSON types: tuples and sets become lists, keys strings, enums their value,
    NaN and infinities ``nonfinite(value)`` (by default ``"nan"``, ``"inf"``, ``"-inf"``), anything
    else its ``str``."""
    if isinstance(value, Enum):
        return json_safe(value.value, nonfinite=nonfinite)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a plain str, also of a subclass
    if isinstance(value, float):
        return value if math.isfinite(value) else nonfinite(value)
    if isinstance(value, Mapping):
        return {str(key): json_safe(item, nonfinite=nonfinite) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item, nonfinite=nonfinite) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((json_safe(item, nonfinite=nonfinite) for item in value), key=repr)
    if hasattr(value, "model_dump"):
        return json_safe(value.model_dump(mode="python"), nonfinite=nonfinite)
    return str(value)


def json_text(text: str) -> str:
    """JSON text with DEL, C1 controls, line separators, bidirectional controls and lone surrogates
    written as ``\\u`` escapes (the same data; JSON escapes C0 itself)."""
    if text.isascii() and "\x7f" not in text:  # the usual case, at the cost of one pass in C
        return text
    return _json_unsafe().sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dump_json(data: Any, *, indent: int | None = 2) -> str:
    """``data`` (JSON types, see :func:`json_safe`) as JSON: never NaN or Infinity, no raw control byte."""
    return json_text(json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False))
