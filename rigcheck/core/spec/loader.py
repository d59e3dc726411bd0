"""Safe YAML to plain data, with the position of every key and value and the YAML traps found.

How it reads a file:

* libyaml's C parser composes the node graph when it is installed (PyYAML's pure-Python parser
  otherwise); rigcheck then builds plain ``dict``/``list``/scalars itself, so that it can record
  a :class:`~rigcheck.core.spec.positions.SourceMap` and refuse anything unsafe.
* Plain scalars are resolved with the YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution),
  so ``1e9`` and ``5.0e8`` are the numbers the user meant (PyYAML's YAML 1.1 rules load them as
  strings) and ``yes``/``on``/``no`` stay strings. ``1_000_000`` is read as a number as well.
* YAML traps become records (:class:`YamlTrap`) that the ``SPEC`` checker reports: duplicate keys
  (YAML loaders silently keep the last one), YAML 1.1 booleans (``on``/``yes``/``no``: true or
  false to PyYAML and most YAML 1.1 tools, strings under YAML 1.2) and octal-looking numbers
  (``0755`` is 493 to YAML 1.1 tools, 755 here).
* What cannot be read safely stops with a :class:`~rigcheck.core.engine.errors.SpecError`: tags other
  than the core ones (``!!python/object``...), alias expansion past a budget (the "billion
  laughs" bomb), recursive aliases, files that are binary, not UTF-8, empty, too big or too deep.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.spec import spec_codes
from rigcheck.core.spec.positions import Mark, SourceMap, join_pointer

try:  # libyaml's C parser, about ten times faster than the pure-Python one (what yaml.cyaml re-exports)
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    _HAVE_LIBYAML = False
else:
    _HAVE_LIBYAML = True

#: Files larger than this are refused before they are read (``RIGCHECK_MAX_SPEC_BYTES`` overrides).
MAX_FILE_BYTES = 32 * 1024 * 1024
#: Mappings and lists nested deeper than this are refused; real specs nest fewer than ten levels.
MAX_DEPTH = 64
#: Aliases may expand the document to at most ``factor x (nodes written) + floor`` nodes.
ALIAS_EXPANSION_FACTOR = 10
ALIAS_EXPANSION_FLOOR = 10_000

_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = _TAG + "str", _TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"
MAP, SEQ, MERGE, TIMESTAMP = _TAG + "map", _TAG + "seq", _TAG + "merge", _TAG + "timestamp"
_YAML11_BOOL = "tag:rigcheck,2026:yaml11-bool"
_OCTAL_LIKE = "tag:rigcheck,2026:octal-like"
#: A decimal byte size ("64GB", "512 MB") in a field measured in GiB: SPEC006.
_DECIMAL_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]B)\s*$", re.IGNORECASE)
_DECIMAL_EXPONENT = {"KB": 3, "MB": 6, "GB": 9, "TB": 12}
_SAFE_TAGS = frozenset({STR, INT, FLOAT, BOOL, NULL, MAP, SEQ, MERGE, TIMESTAMP, _YAML11_BOOL, _OCTAL_LIKE})

_INT_RE = re.compile(r"[-+]?[0-9][0-9_]*\Z")
_OCTAL_LIKE_RE = re.compile(r"[-+]?0[0-9_]+\Z")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+\Z")
_OCT_RE = re.compile(r"0o[0-7]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF_RE = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN_RE = re.compile(r"\.(?:nan|NaN|NAN)\Z")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE12 = frozenset({"true", "True", "TRUE"})
_FALSE12 = frozenset({"false", "False", "FALSE"})
#: What PyYAML (YAML 1.1) reads as booleans beyond YAML 1.2's true/false.
YAML11_TRUE = frozenset({"yes", "Yes", "YES", "on", "On", "ON"})
YAML11_FALSE = frozenset({"no", "No", "NO", "off", "Off", "OFF"})


@dataclass(frozen=True, slots=True)
class YamlTrap:
    """A YAML construct that loaded, but probably not as the author meant."""

    code: str
    pointer: str
    mark: Mark
    message: str
    fix: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class YamlDocument:
    """One YAML file as plain data, with where everything is and what looked wrong."""

    path: str
    data: Any
    source_map: SourceMap
    text: str
    sha256: str
    traps: list[YamlTrap] = field(default_factory=list)


class _Yaml12Resolver(BaseResolver):
    """Resolves plain scalars by the YAML 1.2 core schema and marks YAML 1.1 look-alikes."""

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if not implicit[0]:  # quoted: always a string
                return STR
            tag = _RESOLVED.get(value)  # the memo of resolve_plain_scalar, read here without a call
            return tag if tag is not None else resolve_plain_scalar(value)
        return SEQ if kind is SequenceNode else MAP


#: The longest integer the loader converts; longer ones are refused before ``int()`` (which is
#: quadratic in the digits and refuses more than 4,300 of them).
MAX_INTEGER_DIGITS = 400


#: Tags of short plain scalars already resolved: a spec repeats its values (4,096 nodes written alike
#: repeat each one 4,096 times), and the tag is a function of the text alone. Bounded, so that a file of
#: distinct values cannot grow it without end.
_RESOLVED: dict[str, str] = {}
_RESOLVED_MAX_ENTRIES, _RESOLVED_MAX_LENGTH = 65_536, 64


def resolve_plain_scalar(value: str) -> str:
    """The tag of an unquoted scalar under YAML 1.2's core schema (plus rigcheck's trap tags)."""
    tag = _RESOLVED.get(value)
    if tag is None:
        tag = _resolve_plain_scalar(value)
        if len(value) <= _RESOLVED_MAX_LENGTH and len(_RESOLVED) < _RESOLVED_MAX_ENTRIES:
            _RESOLVED[value] = tag
    return tag


def _resolve_plain_scalar(value: str) -> str:
    if value in _NULLS:
        return NULL
    if value in _TRUE12 or value in _FALSE12:
        return BOOL
    if value in YAML11_TRUE or value in YAML11_FALSE:
        return _YAML11_BOOL
    if value == "<<":
        return MERGE
    first = value[0]
    if first.isdigit() or first in "+-.":
        if _OCTAL_LIKE_RE.match(value) and value.lstrip("+-").rstrip("_") not in ("0",):
            return _OCTAL_LIKE
        if _INT_RE.match(value) or _HEX_RE.match(value) or _OCT_RE.match(value):
            return INT
        if _FLOAT_RE.match(value) or _INF_RE.match(value) or _NAN_RE.match(value):
            return FLOAT
    return STR


class _NodeLoader(Protocol):
    """What :func:`_compose` needs of a loader: libyaml's or the pure-Python one."""

    def get_single_node(self) -> Node | None: ...

    def check_node(self) -> bool: ...

    def get_node(self) -> Node | None: ...

    def dispose(self) -> None: ...


class _PyLoader(Reader, Scanner, Parser, Composer, _Yaml12Resolver):  # pragma: no cover - pure-Python PyYAML
    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        _Yaml12Resolver.__init__(self)


_Loader: Callable[[str], _NodeLoader]
if _HAVE_LIBYAML:

    class _CLoader(_CParser, _Yaml12Resolver):
        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _Yaml12Resolver.__init__(self)

    _Loader = _CLoader
else:  # pragma: no cover - pure-Python PyYAML
    _Loader = _PyLoader


def _mark(node: Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


def max_file_bytes() -> int:
    override = os.environ.get("RIGCHECK_MAX_SPEC_BYTES")
    return int(override) if override and override.isdigit() else MAX_FILE_BYTES


def read_spec_text(path: str) -> tuple[str, str]:
    """Read a spec file as text; return ``(text, sha256 of the bytes)``. Refuses what is not a regular
    file (a FIFO, ``/dev/zero``), files over the cap (counted while reading, not from ``stat``), binary data."""
    from rigcheck.core.spec.boundary import BoundaryError, read_regular

    limit = max_file_bytes()
    try:
        raw = read_regular(path, limit, inside=False)
    except BoundaryError as exc:
        reason = (
            exc.reason
            if "regular file" in exc.reason
            else f"the file is over {limit:,} bytes; specs are limited to {limit:,} bytes"
        )
        raise SpecError(Problem(path, reason, code=spec_codes.UNREADABLE_FILE)) from None
    except OSError as exc:
        raise SpecError(
            Problem(path, f"cannot read the file: {exc.strerror or exc}", code=spec_codes.UNREADABLE_FILE)
        ) from None
    return decode_spec_bytes(raw, path), hashlib.sha256(raw).hexdigest()


def yaml_encoding(raw: bytes) -> str | None:
    """The encoding YAML reads ``raw`` in, from its first bytes (YAML 1.2, section 5.2: a byte order
    mark, else the pattern of NUL bytes around the first ASCII character); None: UTF-8 or not text."""
    head = raw[:4]
    if head.startswith((b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00")):
        return "utf-32"  # the codec reads the mark and drops it
    if len(head) == 4 and head[:3] == b"\x00\x00\x00":
        return "utf-32-be"
    if len(head) == 4 and head[1:] == b"\x00\x00\x00":
        return "utf-32-le"
    if head.startswith((b"\xfe\xff", b"\xff\xfe")):
        return "utf-16"
    if len(head) >= 2 and head[0] == 0 and head[1] != 0:
        return "utf-16-be"
    if len(head) >= 2 and head[0] != 0 and head[1] == 0:
        return "utf-16-le"
    return None


def decode_spec_bytes(raw: bytes, path: str) -> str:
    """``raw`` as text, in any encoding YAML accepts (UTF-8, UTF-16 and UTF-32, with or without a byte
    order mark: :func:`yaml_encoding`); binary data and undecodable bytes raise :class:`SpecError`."""
    wide = yaml_encoding(raw)
    if wide is None and b"\x00" in raw[:8192]:
        raise SpecError(
            Problem(path, "this is a binary file, not a YAML spec", code=spec_codes.UNREADABLE_FILE)
        )
    encoding = wide or "utf-8-sig"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if wide is not None and not raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
            # NUL bytes that only looked like UTF-16 or UTF-32 (no byte order mark): binary data
            raise SpecError(
                Problem(path, "this is a binary file, not a YAML spec", code=spec_codes.UNREADABLE_FILE)
            ) from None
        line = raw.count(b"\n", 0, exc.start) + 1
        name = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
        raise SpecError(
            Problem(
                path,
                f"not {name} text: byte 0x{raw[exc.start]:02x} at offset {exc.start}; save the file as UTF-8",
                line=line,
                code=spec_codes.UNREADABLE_FILE,
            )
        ) from None


def load_yaml_file(path: str) -> YamlDocument:
    """Read and load one spec file. Raises :class:`SpecError` for anything that is not safe YAML data.

    A shipped data file (``specs/hardware``, ``specs/rules``, ``specs/models``) is loaded from
    :mod:`rigcheck.core.catalog.data_cache` when its bytes were loaded before; its positions are then parsed only
    when asked for."""
    text, digest = read_spec_text(path)
    return load_read_file(path, text, digest)


def load_read_file(path: str, text: str, digest: str) -> YamlDocument:
    """:func:`load_yaml_file` for a file already read (:func:`read_spec_text`)."""
    from rigcheck.core.catalog import data_cache

    if not data_cache.is_shipped_data(path):
        return load_yaml_text(text, path, sha256=digest)
    cached = data_cache.get(digest)
    if cached is not None:
        return YamlDocument(path, cached, _LazySourceMap(path, text), text, digest, [])
    document = load_yaml_text(text, path, sha256=digest)
    if not document.traps:
        data_cache.put(digest, document.data)
    return document


def each_root(text: str, path: str) -> Iterator[Node]:
    """The composed root node of each YAML document in ``text`` (aliases are shared nodes, nothing is
    built); raises :class:`SpecError` where the text is not valid YAML."""
    loader = _Loader(text)
    try:
        while loader.check_node():
            root = loader.get_node()
            if root is not None:
                yield root
    except (yaml.YAMLError, RecursionError):
        raise SpecError(Problem(path, "not valid YAML", code=spec_codes.UNREADABLE_FILE)) from None
    finally:
        loader.dispose()


class _LazySourceMap(SourceMap):
    """The source map of a document loaded from the data cache: the text is parsed again the first time a
    position is asked for (an error in shipped data), never otherwise."""

    __slots__ = ("_text",)

    def __init__(self, path: str, text: str) -> None:  # the parent's maps stay unset until needed
        self.path = path
        self._text = text

    def __getattr__(self, name: str) -> Any:  # only called for a slot not yet set
        if name not in ("_keys", "_values"):
            raise AttributeError(name)
        parsed = load_yaml_text(self._text, self.path).source_map
        self._keys, self._values = parsed._keys, parsed._values
        return getattr(self, name)


def load_yaml_text(text: str, path: str = "<string>", *, sha256: str | None = None) -> YamlDocument:
    """Load YAML text that holds one document with a mapping at its top."""
    if sha256 is None:
        sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    root = _compose(text, path)
    if root is None:
        raise SpecError(
            Problem(
                path,
                "the file is empty: a spec needs apiVersion, kind and name",
                code=spec_codes.UNREADABLE_FILE,
            )
        )
    if not isinstance(root, MappingNode):
        what = "a list" if isinstance(root, SequenceNode) else "a single scalar"  # its text is not echoed
        raise SpecError(
            Problem(
                path,
                f"expected a mapping (key: value lines) at the top of the file, found {what}",
                *_line_col(root),
                code=spec_codes.UNREADABLE_FILE,
            )
        )
    builder = _Builder(path)
    if "&" in text:  # an alias needs an anchor: without one nothing expands, and build checks depth
        builder.check_expansion(root)  # alias bombs and nesting depth, before anything is built
    data = builder.build(root, "", 0)
    return YamlDocument(path, data, builder.source_map, text, sha256, builder.traps)


def _line_col(node: Node) -> tuple[int, int]:
    mark = _mark(node)
    return mark.line, mark.column


def _compose(text: str, path: str) -> Node | None:
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise SpecError(_parse_problem(text, path, exc)) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (control codes, NUL)
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        character = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise SpecError(
            Problem(
                path,
                f"not valid YAML: the character {character!r} (U+{ord(character):04X}) is not allowed "
                f"in YAML ({exc.reason})",
                line,
                column,
                code=spec_codes.UNREADABLE_FILE,
            )
        ) from None
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split())
        raise SpecError(
            Problem(path, f"not valid YAML: {message}", code=spec_codes.UNREADABLE_FILE)
        ) from None
    except RecursionError:
        raise SpecError(
            Problem(
                path,
                f"the YAML nests deeper than rigcheck reads ({MAX_DEPTH} levels)",
                code=spec_codes.UNREADABLE_FILE,
            )
        ) from None
    finally:
        loader.dispose()


def _parse_problem(text: str, path: str, exc: yaml.MarkedYAMLError) -> Problem:
    """The parser's complaint as one line at the place to fix: a tab, a key out of line with the keys above
    (:mod:`rigcheck.core.spec.yaml_hints`), else the parser's words with where the construct started."""
    from rigcheck.core.spec.yaml_hints import explain_parse_error, pointer_at

    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = " ".join(str(exc.problem or "").split())
    context = " ".join(str(exc.context or "").split())
    code = spec_codes.UNREADABLE_FILE
    if "expected a single document" in f"{context} {problem}":
        reason = "the file holds several YAML documents (---); rigcheck reads one spec per file"
        return Problem(path, reason, line, column, code=code)
    hint = explain_parse_error(text, problem, context, line, column)
    if hint is not None:
        return Problem(path, hint.message, hint.line, hint.column, hint.pointer, code)
    started = exc.context_mark.line + 1 if exc.context_mark is not None else None
    where = f" ({context}, which starts on line {started})" if context and started else ""
    reason = f"not valid YAML: {problem or context}{where}; check the indentation and quoting here"
    return Problem(path, reason, line, column, pointer_at(text, line), code)


class _Builder:
    """Builds plain data from composed nodes, recording positions and traps."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.source_map = SourceMap(path)
        self.traps: list[YamlTrap] = []

    # -- safety ---------------------------------------------------------------------------------

    def check_expansion(self, root: Node) -> None:
        """Refuse alias graphs that expand far beyond what was written (billion laughs)."""
        written: set[int] = set()
        sizes: dict[int, int] = {}
        in_progress: set[int] = set()
        has_alias = False

        def size(node: Node, depth: int) -> int:
            nonlocal has_alias
            key = id(node)
            if key in sizes:
                has_alias = True
                return sizes[key]
            if key in in_progress:
                line, column = _line_col(node)
                raise SpecError(
                    Problem(
                        self.path,
                        "a YAML alias refers to its own anchor (recursive data)",
                        line,
                        column,
                        code=spec_codes.ALIAS_BOMB,
                    )
                )
            if depth > MAX_DEPTH:
                self._too_deep(node)
            written.add(key)
            total = 1
            if isinstance(node, MappingNode):
                in_progress.add(key)
                for key_node, value_node in node.value:
                    total += size(key_node, depth + 1) + size(value_node, depth + 1)
                in_progress.discard(key)
            elif isinstance(node, SequenceNode):
                in_progress.add(key)
                for item in node.value:
                    total += size(item, depth + 1)
                in_progress.discard(key)
            sizes[key] = total
            return total

        expanded = size(root, 0)
        budget = ALIAS_EXPANSION_FACTOR * len(written) + ALIAS_EXPANSION_FLOOR
        if has_alias and expanded > budget:
            raise SpecError(
                Problem(
                    self.path,
                    f"aliases expand {len(written):,} written YAML nodes to {expanded:,} "
                    f"(budget {budget:,}): refusing a possible alias bomb; write the values out "
                    f"or use fewer nested aliases",
                    code=spec_codes.ALIAS_BOMB,
                )
            )

    def _too_deep(self, node: Node) -> None:
        line, column = _line_col(node)
        raise SpecError(
            Problem(
                self.path,
                f"the YAML nests deeper than {MAX_DEPTH} levels",
                line,
                column,
                code=spec_codes.UNREADABLE_FILE,
            )
        )

    def _refuse_tag(self, node: Node) -> None:
        line, column = _line_col(node)
        tag = node.tag.replace(_TAG, "!!")
        raise SpecError(
            Problem(
                self.path,
                f"the tag {tag} is not allowed: rigcheck reads plain YAML data only "
                f"(strings, numbers, booleans, null, lists and mappings); remove the tag",
                line,
                column,
                code=spec_codes.UNSAFE_TAG,
            )
        )

    # -- building -------------------------------------------------------------------------------

    def build(self, node: Node, pointer: str, depth: int, key_mark: Mark | None = None) -> Any:
        if depth > MAX_DEPTH:
            self._too_deep(node)
        start = node.start_mark  # _mark(node), without the call (once per node of the file)
        self.source_map.add(pointer, Mark(start.line + 1, start.column + 1), key_mark)
        if node.tag not in _SAFE_TAGS:
            self._refuse_tag(node)
        if isinstance(node, ScalarNode):
            return self._scalar(node, pointer)
        if isinstance(node, SequenceNode):
            return [
                self.build(item, join_pointer(pointer, index), depth + 1)
                for index, item in enumerate(node.value)
            ]
        assert isinstance(node, MappingNode)  # the composer makes only scalars, sequences and mappings
        return self._mapping(node, pointer, depth)

    def _mapping(self, node: MappingNode, pointer: str, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        explicit: dict[str, Mark] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:
                merges.append(value_node)
                continue
            if not isinstance(key_node, ScalarNode):
                line, column = _line_col(key_node)
                raise SpecError(
                    Problem(
                        self.path,
                        "mapping keys must be plain names, not lists or mappings",
                        line,
                        column,
                        pointer or "/",
                        code=spec_codes.UNREADABLE_FILE,
                    )
                )
            if key_node.tag not in _SAFE_TAGS:
                self._refuse_tag(key_node)
            key = str(key_node.value)
            start = key_node.start_mark
            key_mark = Mark(start.line + 1, start.column + 1)
            child = join_pointer(pointer, key)
            if key_node.tag == _YAML11_BOOL:
                self._yaml11_boolean(key_node, child, as_key=True)
            if key in explicit:
                first = explicit[key]
                self.traps.append(
                    YamlTrap(
                        spec_codes.DUPLICATE_KEY,
                        child,
                        key_mark,
                        f"key {key!r} appears twice in the same mapping (lines {first.line} and "
                        f"{key_mark.line}); YAML loaders keep the last value silently",
                        f"delete one of the two {key!r} lines (line {first.line} or {key_mark.line})",
                        {"key": key, "first_line": first.line, "second_line": key_mark.line},
                    )
                )
            explicit[key] = key_mark
            result[key] = self.build(value_node, child, depth + 1, key_mark)
        for merge_node in merges:
            self._merge(result, merge_node, pointer, depth)
        return result

    def _merge(self, result: dict[str, Any], merge_node: Node, pointer: str, depth: int) -> None:
        """YAML's ``<<: *anchor`` merge key: keys written in the mapping win over merged ones."""
        sources = merge_node.value if isinstance(merge_node, SequenceNode) else [merge_node]
        for source in sources:
            if not isinstance(source, MappingNode):
                line, column = _line_col(source)
                raise SpecError(
                    Problem(
                        self.path,
                        "a '<<' merge key needs a mapping or a list of mappings",
                        line,
                        column,
                        pointer or "/",
                        code=spec_codes.UNREADABLE_FILE,
                    )
                )
            # built into a map of its own, so that the positions to copy are only this source's (a
            # search of the whole document's map for each merged key took 200 s for 30,000 merges)
            whole, self.source_map = self.source_map, SourceMap(self.path)
            try:
                merged = self._mapping(source, pointer + "/<<", depth + 1)
            finally:
                own, self.source_map = self.source_map, whole
            self._merge_positions(own, pointer, [key for key in merged if key not in result])
            for key, value in merged.items():
                result.setdefault(key, value)

    def _merge_positions(self, own: SourceMap, pointer: str, keys: list[str]) -> None:
        """Record the positions of a merge source (``own``, under ``pointer/<<``) as they are, and
        again under ``pointer`` for each merged key: a finding about a merged value points at the
        line it came from. One pass over ``own``."""
        base = pointer + "/<</"
        targets = {join_pointer(base[:-1], key)[len(base) :]: join_pointer(pointer, key) for key in keys}
        for origin, value, key in own.entries():
            self.source_map.add(origin, value, key)
            if origin.startswith(base):
                segment, slash, rest = origin[len(base) :].partition("/")
                target = targets.get(segment)
                if target is not None:
                    self.source_map.add(target + slash + rest, value, key)

    def _scalar(self, node: ScalarNode, pointer: str) -> Any:
        tag, value = node.tag, node.value
        if tag in (STR, TIMESTAMP):
            if pointer.endswith("_gib") and tag == STR:
                self._decimal_memory(node, pointer)
            return value
        if tag == INT:
            text = value.replace("_", "")
            if len(text) > MAX_INTEGER_DIGITS:
                self._refuse_long_number(node, pointer, len(text))
            if text.startswith(("0x", "0o")):
                return int(text, 0)
            return int(text)
        if tag == FLOAT:
            lowered = value.lower()
            if lowered.endswith("inf"):
                return float("-inf") if lowered.startswith("-") else float("inf")
            if lowered.endswith("nan"):
                return float("nan")
            return float(value.replace("_", ""))
        if tag == BOOL:
            return value in _TRUE12
        if tag == NULL:
            return None
        if tag == _YAML11_BOOL:
            self._yaml11_boolean(node, pointer, as_key=False)
            return value
        if tag == _OCTAL_LIKE:
            return self._octal_like(node, pointer)
        self._refuse_tag(node)  # merge keys in value position and anything unexpected
        return None  # pragma: no cover - _refuse_tag raises

    def _refuse_long_number(self, node: ScalarNode, pointer: str, digits: int) -> None:
        """Python refuses ``int()`` of more than 4,300 digits and no rig quantity needs more than a few
        dozen; a number this long is a hostile or broken file, said in one line."""
        line, column = _line_col(node)
        raise SpecError(
            Problem(
                self.path,
                f"a {digits}-digit integer is not a quantity any rig has (at most {MAX_INTEGER_DIGITS} "
                "digits are read); write the real value",
                line,
                column,
                pointer=pointer,
            )
        )

    def _yaml11_boolean(self, node: ScalarNode, pointer: str, *, as_key: bool) -> None:
        value = node.value
        meant = "true" if value in YAML11_TRUE else "false"
        where = "key" if as_key else "value"
        self.traps.append(
            YamlTrap(
                spec_codes.YAML11_BOOLEAN,
                pointer,
                _mark(node),
                f"the unquoted {where} {value!r} is the boolean {meant} to YAML 1.1 tools (PyYAML, "
                f"many CI systems) but the string {value!r} to YAML 1.2 tools",
                f"write {meant} for a boolean, or quote it ('{value}') for the text",
                {"value": value, "yaml11_reading": meant == "true", "yaml12_reading": value},
            )
        )

    def _decimal_memory(self, node: ScalarNode, pointer: str) -> None:
        """``memory_gib: 64GB``: 64 x 10^9 bytes is 59.6 GiB, while memory sold as "64 GB" (DIMMs, a GPU's
        VRAM) is 64 GiB (JEDEC 100B.01 uses the binary meaning for memory)."""
        match = _DECIMAL_BYTES.match(node.value)
        if match is None:
            return
        number, prefix = match.group(1), match.group(2).upper()
        exponent = _DECIMAL_EXPONENT[prefix]
        read_as = float(number) * 10**exponent / 2**30
        binary = prefix[0] + "iB"
        self.traps.append(
            YamlTrap(
                spec_codes.DECIMAL_MEMORY_SIZE,
                pointer,
                _mark(node),
                f"{node.value!r} is read as {number} x 10^{exponent} bytes = {read_as:.4g} GiB, but memory "
                f"sold as {number} {prefix} is {number} {binary}",
                f"write {number} (the field is in GiB) or '{number} {binary}'; keep '{node.value}' only "
                "if you mean decimal gigabytes",
                {"value": node.value, "read_as_gib": round(read_as, 4)},
            )
        )

    def _octal_like(self, node: ScalarNode, pointer: str) -> int:
        text = node.value.replace("_", "")
        if len(text.lstrip("+-")) > MAX_INTEGER_DIGITS:  # the same guard as any integer's, before int()
            self._refuse_long_number(node, pointer, len(text.lstrip("+-")))
        decimal = int(text, 10)
        digits = text.lstrip("+-")
        sign = -1 if text.startswith("-") else 1
        octal = sign * int(digits, 8) if set(digits) <= set("01234567") else None
        if octal == decimal:  # 007: both readings agree
            return decimal
        yaml11 = f"the octal number {octal}" if octal is not None else "a string"
        self.traps.append(
            YamlTrap(
                spec_codes.OCTAL_LOOKING_NUMBER,
                pointer,
                _mark(node),
                f"{node.value} has a leading zero: rigcheck reads it as {decimal} (YAML 1.2), "
                f"YAML 1.1 tools read it as {yaml11}",
                f"write {decimal} without the leading zero"
                + (", or 0o" + digits.lstrip("0") + " for octal" if octal is not None else ""),
                {"value": node.value, "read_as": decimal, "yaml11_reading": octal},
            )
        )
        return decimal
