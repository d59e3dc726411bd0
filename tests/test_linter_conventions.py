"""Issue 48: the options people bring from ruff: --exit-zero, --statistics, --extend-select, in check and lint."""

from __future__ import annotations

import collections
import json

PAIR = ("dgx-h100-x4", "llama-3-8b-zero3")  # a shipped pair with a failure and a warning


def _counts(report: dict) -> collections.Counter:  # type: ignore[type-arg]
    return collections.Counter(
        (f["code"], f["severity"]) for f in report["findings"] if f["severity"] in ("warn", "fail")
    )


def test_exit_zero_keeps_the_report_and_drops_only_the_exit_code(run_cli) -> None:  # type: ignore[no-untyped-def]
    plain = run_cli("check", *PAIR)
    zero = run_cli("check", *PAIR, "--exit-zero")
    assert plain.exit_code == 1 and zero.exit_code == 0
    assert zero.out == plain.out  # the same report
    assert run_cli("check", "no-such-rig.yaml", "--exit-zero").exit_code == 2  # bad input is still 2


def test_statistics_counts_what_the_report_finds(run_cli) -> None:  # type: ignore[no-untyped-def]
    report = run_cli("check", *PAIR, "-f", "json").json()
    stats = run_cli("check", *PAIR, "--statistics")
    assert stats.exit_code == 1
    rows = [line.split() for line in stats.out.splitlines()]
    assert {(code, severity): int(count) for count, code, severity, *_ in rows} == dict(_counts(report))
    counts = [int(row[0]) for row in rows]
    assert counts == sorted(counts, reverse=True)


def test_extend_select_adds_to_a_selection(run_cli) -> None:  # type: ignore[no-untyped-def]
    chosen = run_cli("check", *PAIR, "--select", "MEM001", "--extend-select", "PWR005", "-f", "json").json()
    assert {f["code"] for f in chosen["findings"]} == {"MEM001", "PWR005"}
    everything = run_cli("check", *PAIR, "-f", "json").json()
    extended = run_cli("check", *PAIR, "--extend-select", "PWR005", "-f", "json").json()
    assert _counts(extended) == _counts(everything)  # with no selection every rule runs already


def test_lint_takes_them_too(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "rig.yaml").write_text(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n    gpus: {model: RTX 4090, count: 1}\n"
        "    psu: {watts: 300}\n"
    )
    plain = run_cli("lint", str(tmp_path), "-f", "json")
    assert plain.exit_code == 1
    assert run_cli("lint", str(tmp_path), "--exit-zero").exit_code == 0
    stats = run_cli("lint", str(tmp_path), "--statistics")
    total = sum(int(line.split()[0]) for line in stats.out.splitlines())
    assert total == sum(_counts(json.loads(plain.out)).values())
