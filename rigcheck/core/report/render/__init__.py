"""Report renderers, one module per format. Renderers read a finished Report; they never decide
verdicts. Each is registered through the ``rigcheck_formats`` hook and imported only when used."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RenderOptions:
    """How to render.

    ``color`` only on a terminal (never with NO_COLOR); ``verbose`` shows evidence; ``show_passes``
    lists the passed checks (the text format otherwise counts them); ``quiet`` (``-q``) makes the text
    format list only the warnings and failures, with no header or summary (ruff's ``--quiet``); ``rules`` maps
    each rule code to its :class:`rigcheck.core.engine.rules.Rule` (for SARIF ``rules[]``, help texts and
    titles); ``root`` is the directory file paths are made relative to (the repository root, for
    SARIF and GitHub annotations).
    """

    color: bool = False
    verbose: bool = False
    show_passes: bool = False
    quiet: bool = False
    unicode: bool = True
    rules: Mapping[str, Any] = field(default_factory=dict)
    root: str | None = None


def relative_path(path: str | None, root: str | None) -> str | None:
    """``path`` relative to ``root`` with forward slashes; unchanged when it lies outside ``root``."""
    if path is None:
        return None
    if root is None:
        return path.replace(os.sep, "/")
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, os.path.abspath(root))
    except ValueError:  # another drive on Windows
        return absolute.replace(os.sep, "/")
    if relative.startswith(".."):
        return absolute.replace(os.sep, "/")
    return relative.replace(os.sep, "/")


def shown_path(path: str) -> str:
    """A spec's path as a person reads it: relative to the working directory when it lies below it,
    ``<shipped>/rigs/NAME.yaml`` for one of rigcheck's own specs elsewhere (an installed package's
    ``site-packages/...`` says nothing), else as given."""
    from rigcheck.core.spec.boundary import resolved
    from rigcheck.resources import specs_dir

    absolute = os.path.abspath(path)
    here = os.path.abspath(os.getcwd())
    if os.path.commonpath([absolute, here]) == here and not _inside_installed_package(absolute):
        return os.path.relpath(absolute, here).replace(os.sep, "/")
    try:
        shipped = resolved(specs_dir())
    except FileNotFoundError:
        return path
    if os.path.commonpath([absolute, shipped]) == shipped:
        return "<shipped>/" + os.path.relpath(absolute, shipped).replace(os.sep, "/")
    return path


def _inside_installed_package(path: str) -> bool:
    parts = path.replace(os.sep, "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


def materialized(report: Any) -> Any:
    """``report`` with its findings in a list, for a writer that walks them more than once (a lint's
    findings are a store that reads them back, maybe from disk, on every walk)."""
    if isinstance(report.findings, list):
        return report
    return report.model_copy(update={"findings": list(report.findings)})


def finding_context(report: Any, finding: Any) -> str | None:
    """The rig + workload pair a finding came from, when that is not plain from its file: the pair of
    its lint run (``None`` for a rig checked alone, whose file says it), or the subject of a
    ``rigcheck check`` of a rig and a workload."""
    runs = report.runs
    if finding.run is not None and finding.run < len(runs):
        run = runs[finding.run]
        return run.subject if run.workload else None
    # a check of a pair: no runs, a rig and a workload (every rig a lint reads has a run of its own)
    if not runs and {"Rig", "Workload"} <= {item.kind for item in report.inputs}:
        return str(report.subject)
    return None
