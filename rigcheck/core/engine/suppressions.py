"""Suppressions: comments in spec files and waivers in the project config that accept a finding.

- ``# rigcheck: ignore[PWR001,PWR002] reason: ...`` at the end of a line covers that line's field
  (and everything under it); alone on a line it covers the next line's field.
- ``# rigcheck: ignore-file[PLT] reason: ...`` anywhere in a file covers the whole file.
- Config waivers ``{rule, path | spec, pointer, reason, expires}`` do the same for files that
  cannot carry comments (vendored or generated specs); after ``expires`` they stop applying.

Codes are full codes or prefixes. A reason is required (SUP001 otherwise, and the comment is not
applied). A suppression that covers no warning, failure or not-checked finding of a rule that ran on
its file is reported (SUP002, like ruff's RUF100). Suppressed findings stay in the report with the
suppression attached; they do not count toward the verdict or the exit code.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from rigcheck.core.engine.config import Waiver
from rigcheck.core.engine.errors import Problem
from rigcheck.core.engine.findings import Finding, Location, Severity, Suppression
from rigcheck.core.engine.rules import structural
from rigcheck.core.lint.lint_rules import EXPIRED_WAIVER, INVALID_SUPPRESSION, UNUSED_SUPPRESSION
from rigcheck.core.spec.documents import SpecDocument

_COMMENT = re.compile(
    r"(?:^|\s)#\s*rigcheck\s*:\s*(?P<kind>ignore-file|ignore)\s*(?:\[(?P<codes>[^\]]*)\])?(?P<rest>.*)$"
)
_REASON = re.compile(r"^\s*(?:--|-|:)?\s*reason\s*[:=]\s*(?P<reason>\S.*?)\s*$", re.IGNORECASE)
_CODE = re.compile(r"^(ALL|[A-Z][A-Z0-9]*)$")


@dataclass
class Comment:
    """One ``# rigcheck: ignore...`` comment."""

    file: str
    line: int
    column: int
    kind: str  # "inline" or "file"
    codes: tuple[str, ...]
    reason: str | None
    target_line: int | None = None
    pointers: tuple[str, ...] = ()
    problem: str | None = None
    used: set[str] = field(default_factory=set)  # codes that matched a finding

    @property
    def location(self) -> Location:
        return Location(file=self.file, line=self.line, column=self.column, pointer="")

    def covers(self, finding: Finding) -> str | None:
        """The code entry that covers ``finding``, if any."""
        entry = next((code for code in self.codes if code == "ALL" or finding.code.startswith(code)), None)
        if entry is None or finding.location is None:
            return None
        if self.kind == "file":
            return entry
        if finding.location.line == self.target_line:
            return entry
        pointer = finding.location.pointer
        if any(pointer == target or pointer.startswith(target + "/") for target in self.pointers if target):
            return entry
        return None


def scan_comments(document: SpecDocument) -> list[Comment]:
    """The suppression comments of a spec file, each with the field it covers."""
    lines = document.yaml.text.splitlines()
    comments: list[Comment] = []
    for number, text in enumerate(lines, start=1):
        if "rigcheck" not in text:
            continue
        match = _COMMENT.search(text)
        if match is None or not _outside_quotes(text, match.start()):
            continue
        codes = tuple(
            code.strip().upper() for code in (match.group("codes") or "").split(",") if code.strip()
        )
        reason_match = _REASON.match(match.group("rest"))
        kind = "file" if match.group("kind") == "ignore-file" else "inline"
        comment = Comment(
            file=document.path,
            line=number,
            column=text.index("#", match.start()) + 1,
            kind=kind,
            codes=codes,
            reason=reason_match.group("reason") if reason_match else None,
        )
        if not codes:
            comment.problem = "names no rule: write ignore[CODE] with one or more codes or prefixes"
        elif any(not _CODE.match(code) for code in codes):
            bad = ", ".join(code for code in codes if not _CODE.match(code))
            comment.problem = f"{bad} is not a rule code or prefix"
        elif comment.reason is None:
            comment.problem = "has no reason: add 'reason: <why this is accepted>'"
        if kind == "inline":
            content = text[: match.start()].strip()
            target = number if content else _next_content_line(lines, number)
            comment.target_line = target
            comment.pointers = tuple(document.yaml.source_map.pointers_on_line(target)) if target else ()
        comments.append(comment)
    return comments


def _outside_quotes(text: str, index: int) -> bool:
    """Whether position ``index`` is outside single- and double-quoted scalars (a real comment)."""
    single = double = False
    for char in text[:index]:
        if char == "'" and not double:
            single = not single
        elif char == '"' and not single:
            double = not double
    return not single and not double


def _next_content_line(lines: Sequence[str], number: int) -> int | None:
    for following in range(number, len(lines)):
        stripped = lines[following].strip()
        if stripped and not stripped.startswith("#"):
            return following + 1
    return None


class Suppressor:
    """Suppressions applied one finding at a time (``check`` and ``lint`` stream their findings): the
    comments and waivers are read once, each finding gets the suppressions that cover it, and
    :meth:`finish` gives the SUP findings (bad comments, expired waivers, then unused ones, where
    ``active`` says which rules ran on each file); ``inline=False`` (``--no-ignores``) applies none."""

    def __init__(
        self,
        documents: Iterable[SpecDocument],
        *,
        waivers: Sequence[tuple[Waiver, Problem]] = (),
        base: Path | None = None,
        today: _dt.date | None = None,
        known_codes: Iterable[str] = (),
        inline: bool = True,
    ) -> None:
        today = today or _dt.date.today()
        self.base = base or Path.cwd()
        known = set(known_codes)
        self.extra: list[Finding] = []
        comments: list[Comment] = []
        self.names: dict[str, str] = {}
        for document in documents:
            self.names[_key(document.path)] = document.name
            if inline:
                comments.extend(scan_comments(document))
        for comment in comments:
            if comment.problem is None and known:
                unknown = [
                    code
                    for code in comment.codes
                    if code != "ALL" and not any(k.startswith(code) for k in known)
                ]
                if unknown:
                    comment.problem = f"names unknown rule(s) {', '.join(unknown)}"
            if comment.problem:
                self.extra.append(
                    _stamp(
                        INVALID_SUPPRESSION.failed(
                            f"suppression comment {comment.problem}; it is not applied",
                            location=comment.location,
                            subject=f"file {comment.file}",
                            fix="# rigcheck: ignore[CODE] reason: <why>, with codes `rigcheck rules` lists",
                        )
                    )
                )
        self.valid = [comment for comment in comments if comment.problem is None]
        self._by_file: dict[str, list[Comment]] = {}
        for comment in self.valid:
            self._by_file.setdefault(_key(comment.file), []).append(comment)
        self.live_waivers: list[tuple[Waiver, Problem]] = []
        for waiver, where in waivers if inline else ():
            if waiver.expires is not None and waiver.expires < today:
                self.extra.append(
                    _stamp(
                        EXPIRED_WAIVER.warned(
                            f"waiver of {waiver.rule} for {waiver.path or waiver.spec} expired on "
                            f"{waiver.expires} ({waiver.reason}); the findings it covered count again",
                            location=Location(
                                file=where.file, line=where.line, column=where.column, pointer=where.pointer
                            ),
                            subject=f"config {where.file}",
                            fix="fix the problem, or renew the waiver with a new expires: date and reason",
                        )
                    )
                )
            else:
                self.live_waivers.append((waiver, where))
        self.used_waivers: set[int] = set()
        self._keys: dict[str, str] = {}

    def _file_key(self, path: str | None) -> str:
        key = self._keys.get(path or "")
        if key is None:
            key = self._keys[path or ""] = _key(path)
        return key

    def apply(self, finding: Finding) -> Finding:
        """``finding`` with the suppressions that cover it (itself when none does)."""
        if finding.severity is Severity.PASS or finding.location is None or structural(finding.code):
            return finding  # a broken spec, a crashed checker: never suppressed (rules.structural)
        if not self._by_file and not self.live_waivers:
            return finding
        attached: list[Suppression] = []
        file = finding.location.file
        for comment in self._by_file.get(self._file_key(file), ()):
            entry = comment.covers(finding)
            if entry is not None:
                comment.used.add(entry)
                attached.append(
                    Suppression(kind=comment.kind, reason=comment.reason or "", location=comment.location)
                )
        for index, (waiver, where) in enumerate(self.live_waivers):
            if waiver.matches(
                finding.code, file, self.names.get(self._file_key(file)), finding.location.pointer, self.base
            ):
                self.used_waivers.add(index)
                attached.append(
                    Suppression(
                        kind="waiver",
                        reason=waiver.reason,
                        location=Location(
                            file=where.file, line=where.line, column=where.column, pointer=where.pointer
                        ),
                        expires=waiver.expires.isoformat() if waiver.expires else None,
                    )
                )
        return finding.with_changes(suppressions=tuple(attached)) if attached else finding

    def finish(self, active: Mapping[str, AbstractSet[str]] | None) -> list[Finding]:
        """The SUP findings: bad comments and expired waivers, then suppressions that matched nothing
        among the rules that ran (``active``: file path -> rule codes)."""
        return self.extra + _unused(self.valid, self.live_waivers, self.used_waivers, active)


def _unused(
    comments: Sequence[Comment],
    waivers: Sequence[tuple[Waiver, Problem]],
    used_waivers: set[int],
    active: Mapping[str, AbstractSet[str]] | None,
) -> list[Finding]:
    out = []
    active_by_file = {_key(path): codes for path, codes in (active or {}).items()}
    for comment in comments:
        ran = active_by_file.get(_key(comment.file), set())
        for code in comment.codes:
            if code in comment.used:
                continue
            if not any(code == "ALL" or name.startswith(code) for name in ran):
                continue  # the rule did not run on this file: nothing to judge
            what = "the file" if comment.kind == "file" else f"line {comment.target_line}"
            out.append(
                _stamp(
                    UNUSED_SUPPRESSION.warned(
                        f"suppression of {code} matches no finding on {what}",
                        location=comment.location,
                        subject=f"file {comment.file}",
                        fix=f"remove {code} from the comment (or the whole comment)",
                    )
                )
            )
    all_ran = set().union(*active_by_file.values()) if active_by_file else set()
    for index, (waiver, where) in enumerate(waivers):
        if index in used_waivers or not any(
            waiver.rule == "ALL" or name.startswith(waiver.rule) for name in all_ran
        ):
            continue
        out.append(
            _stamp(
                UNUSED_SUPPRESSION.warned(
                    f"waiver of {waiver.rule} for {waiver.path or waiver.spec} matches no finding",
                    location=Location(
                        file=where.file, line=where.line, column=where.column, pointer=where.pointer
                    ),
                    subject=f"config {where.file}",
                    fix="remove the waiver",
                )
            )
        )
    return out


def _key(path: str | None) -> str:
    return os.path.normcase(os.path.abspath(path)) if path else ""


def _stamp(finding: Finding) -> Finding:
    return finding.with_changes(checker="suppressions", plugin="rigcheck")
