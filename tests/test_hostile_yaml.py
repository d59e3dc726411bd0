"""Issue 44, second class, the YAML layer: every shape of a 1 MB spec is linted in seconds, with memory
linear in its size and a report of bounded size.

Each case is built from scratch in a temporary repository and linted as GitHub Actions would run it.
Before this change 30,000 merge keys (0.6 MB) took 202 s (each merged key searched the whole
document's positions) and 80,000 unknown keys took 7 s (a did-you-mean search for every key, though
only 100 problems are listed).
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from rigcheck.core.engine.errors import SpecError
from rigcheck.core.spec.loader import load_yaml_file
from tests.test_hostile import RIG

MB = 1 << 20

#: Each case: the spec text for about ``size`` bytes of pathological YAML.
CASES: dict[str, Callable[[int], str]] = {
    "nested flow": lambda size: RIG + "x: " + "[" * (size // 2) + "]" * (size // 2) + "\n",
    "braces": lambda size: RIG + "{" * size + "\n",
    "question keys": lambda size: RIG + "? " * (size // 2) + "\n",
    "long flow list": lambda size: RIG + "x: [" + "1, " * (size // 3) + "1]\n",
    "dash lines": lambda size: RIG + "x:\n" + "- \n" * (size // 3),
    "dash line": lambda size: RIG + "x: " + "- " * (size // 2) + "\n",
    "comments": lambda size: "# " + "c" * size + "\n" + RIG,
    "long key": lambda size: RIG + "k" * size + ": 1\n",
    "colons": lambda size: RIG + ":" * size + "\n",
    "long plain scalar": lambda size: RIG + "description: " + "word " * (size // 5) + "\n",
    "quoted escapes": lambda size: RIG + 'description: "' + "\\t" * (size // 2) + '"\n',
    "block scalar": lambda size: RIG + "d: |\n" + "  line\n" * (size // 7),
    "documents": lambda size: RIG + "---\n" * (size // 4),
    "tabs": lambda size: RIG + "\t" * size + "\n",
    "unknown keys": lambda size: RIG + "".join(f"    k{i}: 1\n" for i in range(size // 12)),
    "repeated keys": lambda size: RIG + "    memory_gib: 64\n" * (size // 19),
    "anchors and aliases": lambda size: (
        RIG
        + "".join(f"a{i}: &a{i} [1]\n" for i in range(size // 27))
        + "b: ["
        + ", ".join(f"*a{i}" for i in range(size // 27))
        + "]\n"
    ),
    "merge keys": lambda size: RIG + "".join(f"m{i}: {{<<: {{a: 1, b: 2}}}}\n" for i in range(size // 24)),
    "deep block nesting": lambda size: (
        RIG + "".join("  " * (i % 60) + f"k{i}:\n" for i in range(size // 70)) + "end: 1\n"
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_megabyte_of_yaml_is_linted_in_seconds(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".git").mkdir()
    (tmp_path / "rig.yaml").write_text(CASES[name](MB), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    started = time.perf_counter()
    result = run_cli("lint", "-f", "json", "-o", "out.json")
    took = time.perf_counter() - started
    assert result.exit_code in (0, 1), result.err[-500:]
    assert took < 6, took  # at most about 1 s here; CI's two cores are slower
    report = (tmp_path / "out.json").read_text(encoding="utf-8")
    assert len(report) < 200_000 and json.loads(report)["findings"]
    assert len(result.out) + len(result.err) < 20_000


def _peak_while_loading(path: Path) -> int:
    tracemalloc.start()
    try:
        load_yaml_file(str(path))
    except SpecError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "name", ["long flow list", "unknown keys", "anchors and aliases", "merge keys", "repeated keys"]
)
def test_loading_memory_grows_linearly(tmp_path: Path, name: str) -> None:
    """The shapes that load (the others stop at their first error): twice the input, at most about
    twice the memory (a quadratic loader would take four times)."""
    peaks = []
    for size in (MB // 8, MB // 4):
        path = tmp_path / f"{size}.yaml"
        path.write_text(CASES[name](size), encoding="utf-8")
        peaks.append(_peak_while_loading(path))
    assert peaks[1] < 2.6 * peaks[0], peaks
    assert peaks[1] < 400 * (MB // 4), peaks  # and a few hundred bytes per byte of YAML at most
