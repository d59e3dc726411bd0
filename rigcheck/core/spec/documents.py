"""Spec files to validated models: ``load_spec(path)`` returns a :class:`SpecDocument`.

Validation errors from pydantic are turned into :class:`~rigcheck.core.engine.errors.Problem` records
that name the file, line, column and JSON pointer of the field, with a did-you-mean suggestion
for misspelt field names and enumerated values.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from pydantic import BaseModel, ValidationError

from rigcheck.core.engine.errors import MAX_MESSAGE, Problem, SpecError
from rigcheck.core.engine.findings import Location, new_location
from rigcheck.core.spec import spec_codes
from rigcheck.core.spec.fields import did_you_mean
from rigcheck.core.spec.loader import YamlDocument, YamlTrap, load_yaml_file, load_yaml_text
from rigcheck.core.spec.positions import Mark, pointer_for_data_path, pointer_from_path

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

KINDS = ("Rig", "Workload")


@dataclass(slots=True)
class SpecDocument:
    """A validated spec with its source: the model plus the YAML it came from."""

    yaml: YamlDocument
    kind: str
    model: Any  # Rig | Workload
    #: The locations made so far, by pointer: checkers and the twins of a node point at the same fields
    #: again (the 4,096-node rig asks for 77,868 locations at 53,251 pointers). Locations are frozen.
    _located: dict[str, Location] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def path(self) -> str:
        return self.yaml.path

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def sha256(self) -> str:
        return self.yaml.sha256

    @property
    def traps(self) -> list[YamlTrap]:
        return self.yaml.traps

    def pointer(self, *path: str | int) -> str:
        """The pointer into this file for a model path (``("nodes", 0, "gpus", 0)``)."""
        return pointer_for_data_path(self.yaml.data, path)

    def locate(self, pointer: str) -> Location:
        """The location of ``pointer`` (or of its nearest written ancestor) in this file."""
        where = self._located.get(pointer)
        if where is None:
            _, mark = self.yaml.source_map.locate(pointer)
            where = self._located[pointer] = new_location(self.path, mark.line, mark.column, pointer)
        return where

    def summary(self) -> SpecSummary:
        return SpecSummary(self.path, self.kind, self.name, self.sha256)


class SpecSummary(NamedTuple):
    """What a report keeps of a spec (its ``inputs[]`` entry): ``rigcheck lint`` lets the model and
    the YAML go once no run is left to read them."""

    path: str
    kind: str
    name: str
    sha256: str


def load_spec(path: str, *, kind: str | None = None) -> SpecDocument:
    """Read, parse and validate one spec file. Raises :class:`SpecError` with every problem found."""
    return _validate(load_yaml_file(path), kind)


def parse_spec(text: str, path: str = "<string>", *, kind: str | None = None) -> SpecDocument:
    """Like :func:`load_spec`, for YAML text already in memory."""
    return _validate(load_yaml_text(text, path), kind)


def spec_from_yaml(document: YamlDocument, *, kind: str | None = None) -> SpecDocument:
    """Validate a loaded YAML document as a spec (``kind``: the one expected, if any)."""
    return _validate(document, kind)


def declares_rigcheck(document: YamlDocument) -> bool:
    """Whether the document's top level says ``apiVersion: rigcheck/...``, however it is written."""
    return _declares(document.data)


def _declares(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("apiVersion", "")).startswith("rigcheck/")


def may_declare_rigcheck(text: str) -> bool:
    """Whether any YAML document in ``text`` could say ``apiVersion: rigcheck/...``: only when the word
    is in the text or a backslash escape could spell it (``"\\x72igcheck/v1"``). Plain, quoted and block
    scalars fold a line break into a space, or keep it, so nothing else can make the word; a test
    generates spellings and checks that this never drops a spec the loader reads."""
    return "rigcheck" in text or "\\" in text


#: How much of a file that cannot be read whole is searched for the word "rigcheck".
_HEAD_BYTES = 1 << 20


def _head_names_rigcheck(path: str) -> bool:
    """Whether the first MiB of the file, read as YAML would (:func:`yaml_encoding`), names rigcheck."""
    from rigcheck.core.spec.boundary import BoundaryError, read_head
    from rigcheck.core.spec.loader import yaml_encoding

    try:
        head = read_head(path, _HEAD_BYTES)
    except (BoundaryError, OSError):
        return False
    return "rigcheck" in head.decode(yaml_encoding(head) or "utf-8", errors="replace")


def _any_declares(roots: Iterator[Any]) -> bool | None:
    """Whether any of the composed documents ``roots`` declares rigcheck; None when the YAML breaks."""
    try:
        return any(_node_declares(root, 0) for root in roots)
    except SpecError:
        return None


def _node_declares(node: Any, depth: int) -> bool:
    """Whether a composed mapping says ``apiVersion: rigcheck/...`` (the parser has already read
    escapes, quotes, block scalars and tags; aliases are the nodes they name), itself or through a
    merge key (``<<: *base``)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if not isinstance(node, MappingNode) or depth > 8:  # merges nest a level or two; an anchor can
        return False  # merge itself (``&a {<<: *a}``), so the walk has a floor
    for key, value in node.value:
        if isinstance(key, ScalarNode) and key.value == "apiVersion":
            if isinstance(value, ScalarNode) and value.value.startswith("rigcheck/"):
                return True
        elif isinstance(key, ScalarNode) and key.value == "<<":
            merged = value.value if isinstance(value, SequenceNode) else [value]
            if any(_node_declares(item, depth + 1) for item in merged):
                return True
    return False


class Unsure(NamedTuple):
    """A YAML file the loader cannot read or parse, so cannot tell whether it is a spec: its problems,
    and whether its text names rigcheck (then it is most likely a broken spec)."""

    problems: list[Problem]
    names_rigcheck: bool


#: What :func:`read_if_spec` says of a file its pre-filter kept from the parser: no document in it can
#: declare rigcheck (whether it is valid YAML at all was not asked).
NOT_PARSED = Unsure([], False)


def read_if_spec(path: str, *, pre_filter: bool = True) -> YamlDocument | Unsure | None:
    """The loader's answer, for ``rigcheck lint``, to whether the YAML file at ``path`` is a spec: its
    document when one of its documents declares ``apiVersion: rigcheck/...`` (:func:`declares_rigcheck`,
    in any encoding and spelling YAML reads), None when none does, :class:`Unsure` when it cannot be read
    or parsed, :data:`NOT_PARSED` when ``pre_filter`` (:func:`may_declare_rigcheck`) kept it from the
    parser. A spec that cannot be loaded (several documents in one file) raises :class:`SpecError`."""
    from rigcheck.core.spec.loader import each_root, load_read_file, read_spec_text

    try:
        text, digest = read_spec_text(path)
    except SpecError as exc:  # too large, binary, not text in any encoding YAML reads
        return Unsure(exc.problems, _head_names_rigcheck(path))
    if pre_filter and not may_declare_rigcheck(text):
        return NOT_PARSED
    try:
        document = load_read_file(path, text, digest)
    except SpecError as exc:
        # Composed document by document, nothing built: one declares rigcheck (a spec with a value it
        # refuses, several documents in a spec file), none does (a list at the top, an empty file), or
        # the YAML itself is broken.
        declared = _any_declares(each_root(text, path))
        if declared:
            raise
        return Unsure(exc.problems, "rigcheck" in text) if declared is None else None
    return document if declares_rigcheck(document) else None


def _validate(document: YamlDocument, expected: str | None) -> SpecDocument:
    from rigcheck.core.spec.models import SPEC_KINDS

    data = document.data
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in SPEC_KINDS:
        pointer = "/kind"
        _, mark = document.source_map.locate(pointer if "kind" in data else "")
        if kind is None:
            message = (
                "missing 'kind:'; a spec starts with apiVersion: rigcheck/v1 and kind: Rig or kind: Workload"
            )
        else:
            message = f"kind {kind!r} is not Rig or Workload{did_you_mean(str(kind), KINDS)}"
        raise SpecError(
            Problem(document.path, message, mark.line, mark.column, pointer, code=spec_codes.INVALID_VALUE)
        )
    if expected is not None and kind != expected:
        _, mark = document.source_map.locate("/kind")
        raise SpecError(
            Problem(
                document.path,
                f"expected a {expected} spec here, this file is a {kind}",
                mark.line,
                mark.column,
                "/kind",
                code=spec_codes.INVALID_VALUE,
            )
        )
    model_class = SPEC_KINDS[kind]
    try:
        model = model_class.model_validate(data)
    except ValidationError as exc:
        raise SpecError(validation_problems(exc, document, model_class)) from None
    return SpecDocument(document, kind, model)


def validation_problems(
    exc: ValidationError, document: YamlDocument, model_class: type[BaseModel]
) -> list[Problem]:
    """Turn pydantic errors into positioned problems, one per field, in file order; past
    :data:`MAX_PROBLEMS` in one file, the rest are counted in one last problem (a file of 5,000 unknown
    keys once took 35 s and printed 360 KB)."""
    found: dict[str, tuple[ErrorDetails, tuple[str | int, ...], Mark]] = {}
    source_map = document.source_map
    for error in exc.errors(include_url=False):
        loc = _data_loc(document.data, error["loc"], error["type"])
        pointer = pointer_for_data_path(document.data, loc)
        if pointer in found:
            continue  # one message per field: union branches repeat the same complaint
        mark = source_map.key_mark(pointer) if error["type"] in _AT_KEY else source_map.value_mark(pointer)
        if mark is None:
            _, mark = source_map.locate(pointer)
        found[pointer] = (error, loc, mark)
    ordered = sorted(found.items(), key=lambda item: (item[1][2].line, item[1][2].column))
    # the messages (a did-you-mean search each) only for the problems listed: 80,000 unknown keys
    # took 7 s when each got its message
    problems = []
    keys_by_line: dict[tuple[str | int, ...], list[tuple[int, str]]] = {}  # for _mapping_above
    for pointer, (error, loc, mark) in ordered[:MAX_PROBLEMS]:
        message, code = _message(error, loc, model_class)
        if error["type"] == "extra_forbidden" and loc:
            message = _misplaced(document, model_class, loc, keys_by_line) or message
        problems.append(Problem(document.path, message, mark.line, mark.column, pointer or "/", code))
    if len(ordered) <= MAX_PROBLEMS:
        return problems
    pointer, (error, loc, mark) = ordered[MAX_PROBLEMS]
    more = Problem(
        document.path,
        f"and {len(ordered) - MAX_PROBLEMS:,} more problems from here on (the first {MAX_PROBLEMS} are listed)",
        mark.line,
        mark.column,
        pointer or "/",
        _message(error, loc, model_class)[1],
    )
    return [*problems, more]


#: The errors a problem is placed at the key of (an unknown or missing field), not at the value.
_AT_KEY = frozenset({"extra_forbidden", "missing"})


#: The most problems listed for one file: a fixed file shows the next ones, and a hostile file of
#: thousands of unknown keys makes a bounded report.
MAX_PROBLEMS = 100


def _data_loc(data: Any, loc: tuple[Any, ...], error_type: str) -> tuple[str | int, ...]:
    """Drop the union-branch tags pydantic puts in ``loc`` (``'constrained-str'``, ``'int'``)."""
    kept: list[str | int] = []
    current = data
    for position, step in enumerate(loc):
        last = position == len(loc) - 1
        if isinstance(step, int):
            kept.append(step)
            current = current[step] if isinstance(current, list) and 0 <= step < len(current) else current
            continue
        if isinstance(current, dict) and (
            step in current or (last and error_type in ("missing", "extra_forbidden"))
        ):
            kept.append(step)
            current = current.get(step)
        # otherwise a union tag: skip it
    return tuple(kept)


_FRIENDLY = {
    "int_parsing": "expected a whole number",
    "int_type": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_parsing": "expected a number",
    "float_type": "expected a number",
    "bool_parsing": "expected true or false",
    "bool_type": "expected true or false",
    "string_type": "expected text",
    "dict_type": "expected a mapping (key: value lines)",
    "model_type": "expected a mapping (key: value lines)",
    "model_attributes_type": "expected a mapping (key: value lines)",
    "list_type": "expected a list",
    "finite_number": "expected a finite number",
}


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _message(
    error: ErrorDetails, loc: tuple[str | int, ...], model_class: type[BaseModel]
) -> tuple[str, str]:
    """The problem's message and code."""
    kind = error["type"]
    given = error.get("input")
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else "?"
        allowed = _field_names(model_class, loc[:-1])
        return f"unknown field {name!r}{did_you_mean(name, allowed)}", spec_codes.UNKNOWN_FIELD
    if kind == "missing":
        name = str(loc[-1]) if loc else "?"
        return f"missing required field {name!r}", spec_codes.INVALID_VALUE
    if kind == "literal_error":
        expected = str(error.get("ctx", {}).get("expected", ""))
        options = [part.strip(" '") for part in expected.replace(" or ", ", ").split(",") if part.strip()]
        return (
            f"expected {expected}, got {_describe(given)}{did_you_mean(str(given), options)}",
            spec_codes.INVALID_VALUE,
        )
    if kind in ("value_error", "assertion_error"):
        text = str(error.get("ctx", {}).get("error", error["msg"]))
        return text, spec_codes.INVALID_VALUE
    friendly = _FRIENDLY.get(kind)
    if kind == "list_type" and loc and loc[-1] == "gpus" and isinstance(given, str):
        import re

        text = given.strip()[:200]  # a count and a model name: short, matched in one pass
        counted = re.fullmatch(r"(\d+)\s*[x\u00d7*]\s*(\S.*)", text)  # 2x, 2\u00d7 or 2*
        model, count = (counted.group(2), counted.group(1)) if counted else (text, "1")
        model = model if len(model) <= 60 else model[:57] + "..."
        return (
            f"{friendly}, got {_describe(given)}: write gpus: {{model: {model}, count: {count}}} "
            "(or a list of such groups)",
            spec_codes.INVALID_VALUE,
        )
    if friendly is not None:
        return f"{friendly}, got {_describe(given)}", spec_codes.INVALID_VALUE
    text = error["msg"]
    text = text[:1].lower() + text[1:]
    text = text.replace("input should be", "must be")
    return f"{text}, got {_describe(given)}", spec_codes.INVALID_VALUE


def _misplaced(
    document: YamlDocument,
    model_class: type[BaseModel],
    loc: tuple[str | int, ...],
    keys_by_line: dict[tuple[str | int, ...], list[tuple[int, str]]],
) -> str | None:
    """For an unknown field that an enclosing mapping takes (indented too far) or the mapping just above it
    takes (not indented enough): say it looks like an indentation problem, and where it belongs."""
    name, parent = str(loc[-1]), loc[:-1]
    for depth in range(len(parent) - 1, -1, -1):
        outer = loc[:depth]
        if name in _field_names(model_class, outer):
            return (
                f"unknown field {name!r} under {_line_of(document, parent)}, but {name!r} is a field of "
                f"{_where(document, outer)}: this looks like an indentation problem (indented too far); indent "
                f"{name + ':'!r} to column {_key_column(document, outer)}, like the other keys there"
            )
    inner = _mapping_above(document, loc, keys_by_line)
    if inner is not None and any(name in _field_names(model_class, path) for path in (inner, (*inner, 0))):
        return (
            f"unknown field {name!r} in {_where(document, parent)}, but {name!r} is a field of "
            f"{_where(document, inner)} just above: this looks like an indentation problem (not indented "
            f"enough); indent {name + ':'!r} to column {_key_column(document, inner)}, like the other keys there"
        )
    return None


def _value_at(data: Any, path: tuple[str | int, ...]) -> Any:
    """The data at ``path``, or ``None`` where it is not there."""
    for step in path:
        if isinstance(data, dict):
            data = data.get(step)
        elif isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
        else:
            return None
    return data


def _line_of(document: YamlDocument, path: tuple[str | int, ...]) -> str:
    """``'pcie:' (line 19)`` for a mapping's key, ``/nodes/0 (line 9)`` for a list item or the root."""
    pointer = pointer_for_data_path(document.data, path)
    mark = document.source_map.key_mark(pointer)
    if mark is not None and path and isinstance(path[-1], str):
        return f"'{path[-1]}:' (line {mark.line})"
    return _where(document, path)


def _where(document: YamlDocument, path: tuple[str | int, ...]) -> str:
    pointer = pointer_for_data_path(document.data, path)
    if not pointer:
        return "the top level"
    _, mark = document.source_map.locate(pointer)
    return f"{pointer} (line {mark.line})"


def _key_column(document: YamlDocument, path: tuple[str | int, ...]) -> int:
    """The column the keys of the mapping at ``path`` start in (its first key's)."""
    mark = document.source_map.value_mark(pointer_for_data_path(document.data, path))
    return mark.column if mark is not None else 1


def _mapping_above(
    document: YamlDocument,
    loc: tuple[str | int, ...],
    keys_by_line: dict[tuple[str | int, ...], list[tuple[int, str]]],
) -> tuple[str | int, ...] | None:
    """The mapping a key written at ``loc`` would have joined with more indentation: the value of the key
    just above it in the same mapping (for a list, its last item). ``keys_by_line`` keeps each
    mapping's keys sorted by line, made once per mapping (one scan per unknown key was quadratic)."""
    import bisect

    parent = loc[:-1]
    data = _value_at(document.data, parent)
    source_map = document.source_map
    mine = source_map.key_mark(pointer_for_data_path(document.data, loc))
    if not isinstance(data, dict) or mine is None:
        return None
    lines = keys_by_line.get(parent)
    if lines is None:
        lines = keys_by_line[parent] = sorted(
            (mark.line, str(key))
            for key in data
            if (mark := source_map.key_mark(pointer_for_data_path(document.data, (*parent, key)))) is not None
        )
    at = bisect.bisect_left(lines, (mine.line, ""))
    if at == 0:
        return None
    key = lines[at - 1][1]
    path = (*parent, key)
    value = data[key]
    if isinstance(value, list):
        return (*path, len(value) - 1) if value else None
    return path if isinstance(value, dict) else None


def _field_names(model_class: type[BaseModel], path: tuple[str | int, ...]) -> list[str]:
    """Field names (aliases where set) of the model found at ``path`` below ``model_class``."""
    current: Any = model_class
    for step in path:
        current = _unwrap(current, want_list=isinstance(step, int))
        if isinstance(step, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = _find_field(current, step)
        if field is None:
            return []
        current = field.annotation
    current = _unwrap(current, want_list=False)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [info.alias or name for name, info in current.model_fields.items()]
    return []


def _find_field(model: type[BaseModel], name: str) -> Any:
    for field_name, info in model.model_fields.items():
        if name in (field_name, info.alias):
            return info
    return None


def _unwrap(annotation: Any, *, want_list: bool) -> Any:
    """Peel Annotated, Optional/Union and (for an index step) list down to the interesting type."""
    for _ in range(8):
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Annotated:
            annotation = args[0]
        elif origin in (Union, types.UnionType):
            candidates = [arg for arg in args if arg is not type(None)]
            preferred = [arg for arg in candidates if (typing.get_origin(arg) is list) == want_list]
            annotation = (preferred or candidates)[0]
        elif origin is list and want_list:
            return _unwrap(args[0], want_list=False)
        else:
            return annotation
    return annotation


def problem_at(
    document: SpecDocument,
    pointer: str,
    message: str,
    code: str = spec_codes.INVALID_VALUE,
    *,
    whole: bool = False,
) -> Problem:
    """A problem positioned at ``pointer`` of ``document`` (for errors found after validation); ``whole``: a
    message that rigcheck's own data bounds, never clipped (every card an ambiguous GPU name matches)."""
    location = document.locate(pointer)
    limit = len(message) if whole else MAX_MESSAGE
    return Problem(document.path, message, location.line or 1, location.column or 1, pointer, code, limit)


__all__ = ["Location", "SpecDocument", "load_spec", "parse_spec", "pointer_from_path", "problem_at"]
