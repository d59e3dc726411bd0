"""What to say of a spec that is not valid YAML: a tab in the indentation, a key indented too far or not
far enough, in one line at the place to fix, with the field it is in.

The parser (libyaml's or PyYAML's) says where it gave up, in its own words ("did not find expected
key", "mapping values are not allowed in this context"). :func:`explain_parse_error` reads the lines
above that place the way YAML does (block keys and ``- `` items by their columns) and says which
columns the line could line up with, and under which key it landed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rigcheck.core.engine.errors import clip
from rigcheck.core.spec.positions import join_pointer

#: What ends a block mapping key: a ':' before white space or the end of the line.
_COLON = re.compile(r":(?=\s|$)")
#: Characters a plain key cannot start with (YAML indicators).
_INDICATORS = frozenset("#'\"{}[],&*!|>%@`")
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*\s*(?:#.*)?$")
#: Lines read above a parse error, at most (a pathological file is not scanned for minutes).
MAX_LINES = 100_000


@dataclass(frozen=True, slots=True)
class Level:
    """An open block above a line: a key (``column``: where it starts) or a ``- `` item (its dash)."""

    column: int
    step: str | int
    line: int

    @property
    def is_item(self) -> bool:
        return isinstance(self.step, int)


@dataclass(frozen=True, slots=True)
class Hint:
    """What to print instead of the parser's words."""

    message: str
    line: int
    column: int
    pointer: str


@dataclass(frozen=True, slots=True)
class _Line:
    """One line as the block structure sees it: its first key or item, and where."""

    number: int
    column: int  # of the first thing on the line, 1-based
    key: str | None
    key_column: int
    colon: int  # 1-based column of the key's ':', 0 without a key
    value: str


def _read(number: int, raw: str) -> _Line | None:
    """The line's first key (after any ``- ``), or ``None`` for a blank line, a comment or a marker."""
    text = raw.rstrip("\r\n")
    body = text.lstrip(" \t")
    if not body or body.startswith("#") or (body[:3] in ("---", "...") and body == text):
        return None
    column = len(text) - len(body) + 1
    rest, at = body, column
    while rest == "-" or rest.startswith(("- ", "-\t")):
        stripped = rest[1:].lstrip(" \t")
        at += len(rest) - len(stripped)
        rest = stripped
    found = _key_of(rest)
    if found is None:
        return _Line(number, column, None, at, 0, rest)
    key, end = found
    return _Line(number, column, key, at, at + end, rest[end + 1 :].strip())


def _key_of(rest: str) -> tuple[str, int] | None:
    """The key that starts ``rest`` and the index of its ':' (a linear scan: no regex backtracking on a
    hostile line)."""
    if rest[:1] in ("'", '"'):
        close = rest.find(rest[0], 1)
        after = rest[close + 1 :].lstrip(" \t") if close > 0 else ""
        if not after.startswith(":") or (len(after) > 1 and not after[1].isspace()):
            return None
        return rest[1:close], len(rest) - len(after)
    if not rest or rest[0] in _INDICATORS or (rest[0] == "-" and rest[1:2].isspace()):
        return None
    match = _COLON.search(rest)
    if match is None or " #" in rest[: match.start()]:
        return None
    return rest[: match.start()].rstrip(" \t"), match.start()


def open_levels(lines: list[str], before: int) -> list[Level]:
    """The keys and ``- `` items still open at line ``before`` (1-based), outermost first."""
    stack: list[Level] = []
    scalar_above = 0  # inside a block scalar (| or >): lines indented deeper than this column
    for index, raw in enumerate(lines[: min(before - 1, MAX_LINES)]):
        read = _read(index + 1, raw)
        if read is None or (scalar_above and read.column > scalar_above):
            continue
        scalar_above = 0
        _push_items(stack, read, raw)
        if read.key is not None:
            _pop_to(stack, read.key_column)
            stack.append(Level(read.key_column, read.key, read.number))
            if _BLOCK_SCALAR.match(read.value):
                scalar_above = read.key_column
    return stack


def _push_items(stack: list[Level], read: _Line, raw: str) -> None:
    """Record the ``- `` items that start the line (``- - x``: two)."""
    text = raw.lstrip(" \t")
    column = read.column
    while text == "-" or text.startswith(("- ", "-\t")):
        _pop_to(stack, column + 1)
        index = 0
        if stack and stack[-1].is_item and stack[-1].column == column:
            index = int(stack.pop().step) + 1
        stack.append(Level(column, index, read.number))
        stripped = text[1:].lstrip(" \t")
        column += len(text) - len(stripped)
        text = stripped


def _pop_to(stack: list[Level], column: int) -> None:
    """Close the levels at ``column`` or deeper (a key there is a sibling; what is deeper is done)."""
    while stack and stack[-1].column >= column:
        stack.pop()


def _pointer(levels: list[Level]) -> str:
    pointer = ""
    for level in levels:
        pointer = join_pointer(pointer, level.step)
    return pointer


def pointer_at(text: str, line: int) -> str:
    """The JSON pointer of the key on ``line`` (or of the block it is in), read from the indentation."""
    lines = text.splitlines()
    levels = open_levels(lines, line)
    read = _read(line, lines[line - 1]) if 1 <= line <= len(lines) else None
    if read is None:
        return _pointer(levels)
    _push_items(levels, read, lines[line - 1])
    return _key_pointer(levels, read)


def _key_pointer(levels: list[Level], read: _Line) -> str:
    """The pointer the key on ``read`` gets: under the open levels to its left."""
    parent = [level for level in levels if level.column < read.key_column]
    return join_pointer(_pointer(parent), read.key) if read.key is not None else _pointer(parent)


def _what(read: _Line) -> str:
    return f"'{clip(read.key, 80)}:'" if read.key is not None else "this line"


def explain_parse_error(text: str, problem: str, context: str, line: int, column: int) -> Hint | None:
    """One clear line for the parser's ``problem`` at ``line``:``column`` (``not valid YAML: ...``), or ``None``
    to say it as the parser did."""
    hint = _explain(text.splitlines(), problem, context, line, column)
    if hint is None:
        return None
    return Hint(f"not valid YAML: {hint.message}", hint.line, hint.column, hint.pointer)


def _explain(lines: list[str], problem: str, context: str, line: int, column: int) -> Hint | None:
    if "tab" in problem or "'\\t'" in problem:
        return _tab(lines, line)
    if not 1 <= line <= len(lines):
        return None
    read = _read(line, lines[line - 1])
    if read is None:
        return None
    levels = open_levels(lines, line)
    _push_items(levels, read, lines[line - 1])
    if "mapping values are not allowed" in problem:
        return _mapping_value(lines, levels, read, column)
    if "block collection" in context:
        return _off_the_list(levels, read)
    if "block mapping" in context:
        return _between_columns(levels, read)
    return None


def _tab(lines: list[str], line: int) -> Hint | None:
    """A tab where YAML wants spaces: name the column of the tab and the key after it."""
    for number in (line, line + 1, line - 1):
        if 1 <= number <= len(lines) and "\t" in lines[number - 1]:
            raw = lines[number - 1]
            read = _read(number, raw.replace("\t", " "))
            after = f" before {_what(read)}" if read is not None and read.key is not None else ""
            return Hint(
                f"a tab character (YAML indents with spaces){after}; replace the tab with spaces",
                number,
                raw.index("\t") + 1,
                "",
            )
    return None


def _previous(lines: list[str], line: int) -> _Line | None:
    for number in range(line - 1, 0, -1):
        read = _read(number, lines[number - 1])
        if read is not None:
            return read
    return None


def _mapping_value(lines: list[str], levels: list[Level], read: _Line, column: int) -> Hint | None:
    """``key:`` indented under a key that has a value already, or ``: `` inside a value."""
    if read.key is not None and column != read.colon:
        return Hint(
            f"the value of {_what(read)} holds ': ', which YAML reads as another key; quote the value "
            f'({read.key}: "...")',
            read.number,
            column,
            _key_pointer(levels, read),
        )
    above = _previous(lines, read.number)
    if above is None:
        return None
    written = clip(lines[above.number - 1].strip(), 80)
    has = "already has a value" if above.key is not None else "is a plain value"
    return Hint(
        f"{_what(read)} is indented under '{written}' (line {above.number}), which {has}; keys of one mapping "
        f"start in the same column: check the indentation of lines {above.number} and {read.number}",
        read.number,
        read.key_column,
        _pointer(levels),
    )


def _columns(levels: list[Level], column: int) -> tuple[Level | None, Level | None]:
    """The open key just deeper than ``column`` and the one just shallower."""
    keys = [level for level in levels if not level.is_item]
    deeper = min((k for k in keys if k.column > column), key=lambda k: k.column, default=None)
    shallower = max((k for k in keys if k.column < column), key=lambda k: k.column, default=None)
    return deeper, shallower


def _between_columns(levels: list[Level], read: _Line) -> Hint:
    """A key whose column lines up with no open mapping above it."""
    deeper, shallower = _columns(levels, read.key_column)
    choices = [
        f"to column {level.column} to go with '{clip(str(level.step), 80)}:' (line {level.line})"
        for level in (deeper, shallower)
        if level is not None
    ]
    return Hint(
        f"{_what(read)} at column {read.key_column} lines up with no key above it; indent it "
        + (" or ".join(choices) or "like the keys it belongs with"),
        read.number,
        read.key_column,
        _key_pointer(levels, read),
    )


def _off_the_list(levels: list[Level], read: _Line) -> Hint:
    """A line at the column of a list's ``- `` that is not an item."""
    items = [i for i, level in enumerate(levels) if level.is_item and level.column == read.column]
    if not items:
        return _between_columns(levels, read)
    at = items[-1]
    owner = levels[at - 1] if at else None
    inner = next((level for level in levels[at + 1 :] if not level.is_item), None)
    where = (
        f" of '{clip(str(owner.step), 80)}:' (line {owner.line})"
        if owner is not None and not owner.is_item
        else ""
    )
    move = (
        f"indent it to column {inner.column} like '{clip(str(inner.step), 80)}:' (line {inner.line}) if it "
        "belongs to that item, or start a new item with '- '"
        if inner is not None
        else "start it with '- ' for a new item"
    )
    pointer = _pointer(levels[: at + 1])
    return Hint(
        f"{_what(read)} at column {read.column} lines up with the '- ' items{where} but is not one; {move}",
        read.number,
        read.column,
        join_pointer(pointer, read.key) if read.key is not None else pointer,
    )
