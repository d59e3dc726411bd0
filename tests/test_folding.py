"""Issue 44: a report lists at most FOLD_AFTER findings of one rule at one severity in one file and folds
the rest into one LINT003 finding; the summary, verdict and exit code are those of the unfolded run.

Each case is a lint of generated nodes with and without folding (``Pipeline.fold``, which
``--create-baseline`` turns off): the relationship between the two lists is what is asserted.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rigcheck.core.engine.config import load_settings
from rigcheck.core.engine.finding_store import stands_for
from rigcheck.core.engine.findings import Finding
from rigcheck.core.lint.lint import Pipeline, lint
from rigcheck.core.lint.lint_rules import FINDINGS_FOLDED, FOLD_AFTER

HEAD = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n"
#: 8 L40S on a 600 W PSU: PWR001 fails and PWR002 warns on every node; the other rules pass or skip.
NODE = "  - name: n{i}\n    gpus: {{model: L40S, count: 8}}\n    psu: {{watts: 600}}\n"


def _rig(tmp_path: Path, nodes: int, header: str = "") -> Path:
    path = tmp_path / "rig.yaml"
    path.write_text(header + HEAD + "".join(NODE.format(i=i) for i in range(nodes)), encoding="utf-8")
    return path


def _lint(path: Path, registry: Any, catalog: Any, *, fold: bool) -> Any:
    settings = load_settings([str(path)], isolated=True)
    return lint([str(path)], Pipeline(registry, catalog, settings, 10.0, fold=fold))


def _group(finding: Finding) -> tuple[Any, ...]:
    code, _ = stands_for(finding)
    return (
        finding.location.file if finding.location else None,
        code,
        finding.severity,
        bool(finding.suppressions),
    )


@pytest.mark.parametrize("nodes", [FOLD_AFTER - 1, FOLD_AFTER, FOLD_AFTER + 1, 2 * FOLD_AFTER + 37])
@pytest.mark.parametrize("suppressed", [False, True])
def test_folding_keeps_every_count_and_lists_the_first_of_each_group(
    tmp_path: Path, builtin_registry: Any, catalog: Any, nodes: int, suppressed: bool
) -> None:
    header = "# rigcheck: ignore-file[PWR001] reason: a bigger PSU is on order\n" if suppressed else ""
    path = _rig(tmp_path, nodes, header)
    whole = _lint(path, builtin_registry, catalog, fold=False)
    folded = _lint(path, builtin_registry, catalog, fold=True)
    assert folded.summary == whole.summary
    assert (folded.verdict, folded.exit_code) == (whole.verdict, whole.exit_code)

    unfolded = list(whole.findings)
    assert not any(f.code == FINDINGS_FOLDED.code for f in unfolded)
    by_group: dict[tuple[Any, ...], list[Finding]] = {}
    for finding in unfolded:
        by_group.setdefault(_group(finding), []).append(finding)
    listed = [f for f in folded.findings if f.code != FINDINGS_FOLDED.code]
    notices = [f for f in folded.findings if f.code == FINDINGS_FOLDED.code]
    # what is listed is each group's first FOLD_AFTER findings, in the unfolded order
    seen: Counter[tuple[Any, ...]] = Counter()
    first = []
    for finding in unfolded:
        seen[_group(finding)] += 1
        if seen[_group(finding)] <= FOLD_AFTER:
            first.append(finding)
    assert listed == first
    # one notice per group past the limit, at its first folded finding, standing for the rest
    expected = {
        key: (len(group) - FOLD_AFTER, group[FOLD_AFTER].location)
        for key, group in by_group.items()
        if len(group) > FOLD_AFTER
    }
    assert {_group(n): (n.evidence["folded"], n.location) for n in notices} == expected
    assert len(notices) == len(expected)
    # the per-node rules fold exactly when there are more nodes than the limit
    assert any(key[1] == "PWR001" for key in expected) == (nodes > FOLD_AFTER)
    if suppressed and nodes > FOLD_AFTER:
        assert next(n.suppressions for n in notices if _group(n)[1] == "PWR001")


def test_twenty_thousand_nodes_give_a_report_of_a_megabyte_with_the_same_counts(
    run_cli, tmp_path: Path
) -> None:
    """Issue 44: 20,000 GPU entries once took 22 s and made a 254 MB JSON report (every pass and skip of
    every node listed). The summary grows linearly with the nodes; the list does not."""
    summaries = {}
    for nodes in (FOLD_AFTER, 2 * FOLD_AFTER, 20_000):
        folder = tmp_path / str(nodes)
        folder.mkdir()
        _rig(folder, nodes)
        out = folder / "out.json"
        started = time.perf_counter()
        result = run_cli("lint", str(folder), "-f", "json", "-o", str(out))
        took = time.perf_counter() - started
        assert result.exit_code == 1, result.err
        report = json.loads(out.read_text(encoding="utf-8"))
        summaries[nodes] = Counter(report["summary"])
        if nodes == 20_000:
            assert took < 60, took
            assert out.stat().st_size < 5_000_000
            per_rule = Counter()
            for finding in report["findings"]:
                if finding["severity"] == "fail":
                    code, count = stands_for(Finding.model_validate(finding))
                    per_rule[code] += count
            assert per_rule["PWR001"] == 20_000
    per_node = summaries[2 * FOLD_AFTER] - summaries[FOLD_AFTER]  # what FOLD_AFTER more nodes add
    more = (20_000 - FOLD_AFTER) // FOLD_AFTER
    for key in ("passed", "skipped", "warned", "failed"):
        assert summaries[20_000][key] == summaries[FOLD_AFTER][key] + per_node[key] * more
