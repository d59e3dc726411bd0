"""Issue 45: an optimisation stays only if it cannot change a report. The memory estimator keeps the
estimates it made (``_MADE``), the training parts by what they read (``ReadMemo``) and stops a
fix-search estimate half-way once it cannot fit (the ceiling); recording the rule data's reads
(:func:`rigcheck.core.catalog.facts.record_reads`) turns all three off, so that every read happens.
The lint of the shipped specs and of the lint test repository, every finding of it, is the same with
them and without them. (Lint workers, folding and the checker cache have their own on/off tests:
test_lint_jobs.py, test_folding.py, test_lazy_checkers.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rigcheck.core.catalog.facts import record_reads
from rigcheck.core.engine.config import load_settings
from rigcheck.core.lint.lint import Pipeline, lint

REPO = Path(__file__).resolve().parents[1]


def _findings(path: Path, registry: Any, catalog: Any) -> tuple[Any, list[Any]]:
    settings = load_settings([str(path)], isolated=True)
    report = lint([str(path)], Pipeline(registry, catalog, settings, 10.0, jobs=1))
    rows = [finding.model_dump(mode="json") for finding in report.findings]
    return report.summary, rows


@pytest.mark.parametrize("corpus", [REPO / "specs", REPO / "tests" / "lint_repo"], ids=["specs", "lint_repo"])
def test_every_finding_is_the_same_with_the_estimator_optimisations_off(
    corpus: Path, builtin_registry: Any, catalog: Any
) -> None:
    on = _findings(corpus, builtin_registry, catalog)
    with record_reads():
        off = _findings(corpus, builtin_registry, catalog)
    assert on[1] and on == off
    if corpus.name == "lint_repo":  # the fix search ran there: a MEM001 failure with its verified fix
        assert any(row["code"] == "MEM001" and row["severity"] == "fail" and row["fix"] for row in on[1])
