"""Baselines: accept today's findings so that only new ones fail a pull request.

A baseline file lists warnings and failures by rule + file + JSON pointer + subject, with a count,
and never by line (as Checkov keys its baseline on file + resource): editing a spec above a finding
keeps it baselined, while a new finding (another rule, field or pair) is not. Files are stored
relative to the baseline file, so the baseline works from any working directory.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rigcheck.core.engine.errors import Problem, SpecError
from rigcheck.core.engine.findings import Finding, Severity, Suppression
from rigcheck.core.spec import spec_codes
from rigcheck.core.spec.boundary import BoundaryError, read_named, replacing

BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 64 * 2**20  # a baseline of a million findings is about 150 MB; far past any real one
Key = tuple[str, str, str, str]


def finding_key(finding: Finding, base: Path) -> Key:
    location = finding.location
    file = _relative(location.file, base) if location and location.file else ""
    return (finding.code, file, location.pointer if location else "", finding.subject or "")


def write_baseline(findings: Sequence[Finding], path: str) -> int:
    """Write the counting warnings and failures to ``path``; returns how many entries."""
    base = Path(path).resolve().parent
    counts = Counter(
        finding_key(finding, base)
        for finding in findings
        if finding.counts and finding.severity in (Severity.WARN, Severity.FAIL)
    )
    entries = [
        {"rule": code, "file": file, "pointer": pointer, "subject": subject, "count": count}
        for (code, file, pointer, subject), count in sorted(counts.items())
    ]
    document = {"rigcheck_baseline": BASELINE_VERSION, "findings": entries}
    with replacing(path) as handle:  # beside the file, renamed over it; never through a link
        handle.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return len(entries)


def read_baseline(path: str) -> Counter[Key]:
    try:
        document = json.loads(read_named(path, MAX_BASELINE_BYTES).decode("utf-8"))
        if document.get("rigcheck_baseline") != BASELINE_VERSION:
            raise ValueError(f"not a rigcheck baseline (version {BASELINE_VERSION})")
        return Counter(
            {
                (entry["rule"], entry["file"], entry["pointer"], entry["subject"]): int(entry.get("count", 1))
                for entry in document["findings"]
            }
        )
    except FileNotFoundError:
        raise SpecError(
            Problem(path, "baseline file not found (create it with --create-baseline)", 1, 1)
        ) from None
    except BoundaryError as exc:
        raise SpecError(
            Problem(path, f"cannot read the baseline: {exc.reason}", 1, 1, "", spec_codes.OUTSIDE_ROOT)
        ) from None
    except OSError as exc:
        raise SpecError(Problem(path, f"cannot read the baseline: {exc.strerror or exc}", 1, 1)) from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise SpecError(Problem(path, f"cannot read the baseline: {exc}", 1, 1)) from None


class Baseline:
    """Marks the findings the baseline lists as baselined, one at a time in order (each entry covers
    ``count`` findings)."""

    def __init__(self, path: str) -> None:
        self.remaining = read_baseline(path)
        self.base = Path(path).resolve().parent
        self.reason = f"in the baseline {path}"

    def apply(self, finding: Finding) -> Finding:
        if finding.counts and finding.severity in (Severity.WARN, Severity.FAIL):
            key = finding_key(finding, self.base)
            if self.remaining[key] > 0:
                self.remaining[key] -= 1
                return finding.with_changes(
                    suppressions=(*finding.suppressions, Suppression(kind="baseline", reason=self.reason))
                )
        return finding


def _relative(file: str, base: Path) -> str:
    try:
        return os.path.relpath(Path(file).resolve(), base).replace(os.sep, "/")
    except ValueError:
        return file.replace(os.sep, "/")
