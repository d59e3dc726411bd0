"""Read tool outputs from files and turn each into one :class:`~rigcheck.evidence.model.Evidence`.

The first parser whose ``detect(text)`` is true parses the file. Nothing a file contains makes
this raise: an unrecognised, empty, binary or oversized file, or a parser that fails, gives an
``Evidence`` whose ``problems`` say so. Only a file that cannot be opened at all (missing, a
directory, unreadable) raises :class:`~rigcheck.core.engine.errors.UsageError`, because that is a mistake
on the command line rather than in the evidence.

Before any parser sees the text, Windows line ends become ``\n`` and terminal escape sequences
(ECMA-48 CSI, such as ``ESC[4m``) are removed: ``nvidia-smi topo -m`` underlines its header line
even when its output goes to a file (seen with driver 580.159.04).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rigcheck.core.engine.errors import UsageError
from rigcheck.core.report.render.escape import escape_text
from rigcheck.evidence.model import Evidence
from rigcheck.evidence.parsers import BUILTIN_PARSERS

MAX_BYTES = 20 * 1024 * 1024
_TERMINAL_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # ECMA-48 control sequences (CSI)
ParserRef = Any  # a parser object, or a "module:ATTR" string naming one


@functools.cache
def import_parser(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{reference!r} is not of the form 'module:ATTR'")
    return getattr(importlib.import_module(module_name), attribute)


def _name(parser: Any) -> str:
    return str(getattr(parser, "name", None) or type(parser).__name__)


def _as_evidence(result: Any, parser: Any, path: str) -> Evidence:
    """A parser's result as Evidence: an Evidence as is, a dict of facts validated (unknown keys go
    to ``extra``), anything else reported."""
    name = _name(parser)
    if isinstance(result, Evidence):
        return result
    if isinstance(result, dict):
        fields = Evidence.model_fields
        known = {key: value for key, value in result.items() if key in fields}
        rest = {key: value for key, value in result.items() if key not in fields}
        known.setdefault("source", path)
        known.setdefault("tool", name)
        known["extra"] = {**(known.get("extra") or {}), **rest}
        try:
            return Evidence.model_validate(known)
        except ValidationError as exc:
            return Evidence(
                source=path,
                tool=name,
                problems=[
                    f"parser {name} returned facts that do not fit the evidence model: {exc.error_count()} errors"
                ],
            )
    return Evidence(
        source=path,
        tool=name,
        problems=[f"parser {name} returned {type(result).__name__}, not Evidence"],
    )


#: The most problems kept from one file, and the most characters of each (a problem may quote a line
#: of the file: a hostile 1 MB line is not echoed into every report).
MAX_PROBLEMS = 50
MAX_PROBLEM_CHARS = 300


def parse_text(text: str, path: str, parsers: Sequence[ParserRef] | None = None) -> Evidence:
    """Parse ``text`` (the content of ``path``) with the first parser that recognises it; its problems
    bounded (:data:`MAX_PROBLEMS` of :data:`MAX_PROBLEM_CHARS` each, the rest counted)."""
    evidence = _parse_text(text, path, parsers)
    problems = evidence.problems
    if len(problems) > MAX_PROBLEMS or any(len(problem) > MAX_PROBLEM_CHARS for problem in problems):
        kept = [_cut(problem) for problem in problems[:MAX_PROBLEMS]]
        if len(problems) > MAX_PROBLEMS:
            kept.append(f"and {len(problems) - MAX_PROBLEMS:,} more problems")
        evidence.problems = kept
    return evidence


def _cut(problem: str) -> str:
    if len(problem) <= MAX_PROBLEM_CHARS:
        return problem
    return f"{problem[: MAX_PROBLEM_CHARS - 40]}... ({len(problem):,} characters, cut)"


def _parse_text(text: str, path: str, parsers: Sequence[ParserRef] | None) -> Evidence:
    # a parser (a plugin's, or a built-in on a pathological file) gets the checkers' watchdog: one that
    # loops is stopped and said, the other files are still read
    from rigcheck.core.engine.engine import DEFAULT_TIMEOUT_S, CheckerTimeout, call_with_timeout

    text = text.replace("\r\n", "\n")
    if "\x1b" in text:
        text = _TERMINAL_ESCAPES.sub("", text)
    notes: list[str] = []
    for reference in BUILTIN_PARSERS if parsers is None else parsers:
        try:
            parser = import_parser(reference) if isinstance(reference, str) else reference
        except Exception as exc:  # a broken plugin reference must not stop the other files
            notes.append(f"parser {reference!r} could not be imported: {type(exc).__name__}: {exc}")
            continue
        name = _name(parser)
        try:
            detected = bool(call_with_timeout(functools.partial(parser.detect, text), DEFAULT_TIMEOUT_S))
        except CheckerTimeout:
            notes.append(f"parser {name} took over {DEFAULT_TIMEOUT_S:g} s to look at the file; stopped")
            continue
        except Exception as exc:
            notes.append(f"parser {name} failed to detect: {type(exc).__name__}: {exc}")
            continue
        if not detected:
            continue
        try:
            parsed = call_with_timeout(functools.partial(parser.parse, text, path), DEFAULT_TIMEOUT_S)
            evidence = _as_evidence(parsed, parser, path)
        except CheckerTimeout:
            return Evidence(
                source=path,
                tool=name,
                problems=[
                    *notes,
                    f"parser {name} took over {DEFAULT_TIMEOUT_S:g} s to read the file; stopped",
                ],
            )
        except Exception as exc:
            return Evidence(
                source=path,
                tool=name,
                problems=[*notes, f"parser {name} failed: {type(exc).__name__}: {exc}"],
            )
        if notes:
            evidence.problems = [*notes, *evidence.problems]
        return evidence
    return Evidence(
        source=path, tool="unknown", problems=[*notes, f"no parser recognised this file: {_why(text)}"]
    )


def _why(text: str) -> str:
    if not text.strip():
        return "it is empty (some tools print nothing: `nvidia-smi nvlink -s` on a GPU without NVLink)"
    if "\x00" in text or text.count("\ufffd") > max(8, len(text) // 100):
        return "it looks binary, not the text output of a tool"
    first = next(line.strip() for line in text.splitlines() if line.strip())
    return (
        f"it does not look like nvidia-smi, nccl-tests, fio, bandwidthTest, p2pBandwidthLatencyTest, "
        f"nvbandwidth, dcgmi diag, ibstat, ibv_devinfo, nvcc, torch, df or pip output (first line: {first[:80]!r})"
    )


def _decode(data: bytes) -> str:
    """UTF-8 (a BOM dropped); UTF-16 when a BOM says so (PowerShell's ``>`` writes UTF-16)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def file_sha256(path: str | os.PathLike[str]) -> str | None:
    """SHA-256 of a file's bytes (read through :func:`rigcheck.core.spec.boundary.read_named`, as the
    evidence was); None when it cannot be read."""
    import hashlib

    from rigcheck.core.spec.boundary import BoundaryError, read_named

    try:
        return hashlib.sha256(read_named(path, MAX_BYTES)).hexdigest()
    except (BoundaryError, OSError):
        return None


def load_evidence(
    paths: Iterable[str | os.PathLike[str]], parsers: Sequence[ParserRef] | None = None
) -> list[Evidence]:
    """One Evidence per file, in the order given (one per tool output where a file holds several:
    :func:`parse_parts`); ``parsers`` defaults to the built-in ones. Each file
    is read through the boundary (:func:`rigcheck.core.spec.boundary.read_named`): a committed link out of
    the repository, a FIFO or a device is a one-line usage error; a file over :data:`MAX_BYTES` is an
    Evidence with that problem, not read."""
    from rigcheck.core.spec.boundary import BoundaryError, read_named

    results: list[Evidence] = []
    for entry in paths:
        path = Path(entry)
        source = str(entry)
        if not os.path.lexists(path):
            raise UsageError(f"evidence file not found: {escape_text(source)}")
        if path.is_dir():
            raise UsageError(f"evidence path is a directory, not a file: {escape_text(source)}")
        try:
            data = read_named(path, MAX_BYTES)
        except BoundaryError as exc:
            if not exc.reason.startswith("the file is over"):
                raise UsageError(f"cannot read evidence file {escape_text(source)}: {exc.reason}") from None
            results.append(
                Evidence(
                    source=source,
                    tool="unknown",
                    problems=[
                        f"the file is over the {MAX_BYTES // 1024 // 1024} MiB limit for evidence files; "
                        "it was not read"
                    ],
                )
            )
            continue
        except OSError as exc:
            raise UsageError(
                f"cannot read evidence file {escape_text(source)}: {exc.strerror or exc}"
            ) from None
        results.extend(parse_parts(_decode(data), source, parsers))
    return results


def parse_parts(text: str, source: str, parsers: Sequence[ParserRef] | None = None) -> list[Evidence]:
    """One Evidence per tool output in ``text`` (:func:`rigcheck.evidence.split.split_outputs`): a file
    holding one output gives one; a pod check saved as one file gives one per tool, each named by its
    lines (``pod.txt lines 1-24``)."""
    from rigcheck.evidence.split import split_outputs

    parts = split_outputs(text.replace("\r\n", "\n"))
    if len(parts) == 1:
        return [parse_text(text, source, parsers)]
    return [parse_text(body, f"{source} lines {first}-{last}", parsers) for first, last, body in parts]
