"""``runs_on`` by name (issue 20): a workload names its rig by the rig's ``name`` or its file's stem, and
lint finds it with one lookup, not a scan of every spec (quadratic in the files: 1,000 workloads took
2.3 s longer to lint naming rigs than naming files); unknown names get a "did you mean" for the first
``MAX_HINTED_NAMES`` only (each is a fuzzy search over every name)."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from rigcheck.core.lint import lint
from rigcheck.core.lint.lint import MAX_HINTED_NAMES, SpecNames

RIG = """\
apiVersion: rigcheck/v1
kind: Rig
name: {name}
nodes:
  - gpus: {{model: RTX 4090, count: 1}}
    cpu: {{cores: 16}}
    memory_gib: 64
"""

WORKLOAD = """\
apiVersion: rigcheck/v1
kind: Workload
name: {name}
runs_on: [{rig}]
model: {{preset: qwen-1.8b}}
task: lora
precision: bf16-mixed
batch: {{micro: 1, seq_len: 512}}
"""


def _scan(docs: list[SimpleNamespace], kind: str, entry: str) -> SimpleNamespace | None:
    """What lint did before the index: the first spec, in order, of ``kind`` named ``entry`` or in a
    file with that stem."""
    found = [doc for doc in docs if doc.kind == kind and entry in (doc.name, Path(doc.path).stem)]
    return found[0] if found else None


def test_the_index_finds_what_a_scan_in_order_finds() -> None:
    """Names and stems that collide (two specs with one name, a name that is another file's stem, the
    other kind with the same name), also for specs added after the index was made."""
    rng = random.Random(20)
    words = ["a", "b", "c", "d", "e"]
    docs = [
        SimpleNamespace(
            kind=rng.choice(["Rig", "Workload"]), name=rng.choice(words), path=f"x/{rng.choice(words)}.yaml"
        )
        for _ in range(40)
    ]
    index = SpecNames(docs[:25])  # type: ignore[arg-type]
    for doc in docs[25:]:
        index.add(doc)  # type: ignore[arg-type]
    for kind in ("Rig", "Workload"):
        for entry in [*words, "f"]:
            assert index.first(kind, entry) is _scan(docs, kind, entry), (kind, entry)
        assert index.sorted(kind) == sorted({doc.name for doc in docs if doc.kind == kind})


@pytest.fixture
def named_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Rigs named by name, by file stem, a name two rigs share, and a rig outside the scanned folder
    that one workload loads by path and a later one names."""
    monkeypatch.chdir(tmp_path)
    specs = {
        "scan/rigs/alpha.yaml": RIG.format(name="rig-alpha"),
        "scan/rigs/beta.yaml": RIG.format(name="rig-beta"),
        "scan/rigs/twin-1.yaml": RIG.format(name="twin"),
        "scan/rigs/twin-2.yaml": RIG.format(name="twin"),
        "scan/workloads/by-name.yaml": WORKLOAD.format(name="by-name", rig="rig-alpha"),
        "scan/workloads/by-stem.yaml": WORKLOAD.format(name="by-stem", rig="beta"),
        "scan/workloads/by-twin.yaml": WORKLOAD.format(name="by-twin", rig="twin"),
        "scan/workloads/c1-by-path.yaml": WORKLOAD.format(name="c1-by-path", rig="../../extra/gamma.yaml"),
        "scan/workloads/c2-by-later-name.yaml": WORKLOAD.format(name="c2-by-later-name", rig="rig-gamma"),
        "extra/gamma.yaml": RIG.format(name="rig-gamma"),
    }
    for path, text in specs.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def test_workloads_find_their_rigs_by_name_stem_and_first_of_a_shared_name(named_repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("lint", "scan", "--root", ".", "--format", "json", "--isolated")
    assert result.exit_code in (0, 1), result.err
    report = result.json()
    pairs = {(run["workload"], run["rig"]) for run in report["runs"] if run["workload"]}
    assert pairs == {
        ("scan/workloads/by-name.yaml", "scan/rigs/alpha.yaml"),
        ("scan/workloads/by-stem.yaml", "scan/rigs/beta.yaml"),
        ("scan/workloads/by-twin.yaml", "scan/rigs/twin-1.yaml"),  # the first in scan order
        ("scan/workloads/c1-by-path.yaml", "extra/gamma.yaml"),
        ("scan/workloads/c2-by-later-name.yaml", "extra/gamma.yaml"),  # loaded by path, then found by name
    }
    assert not [f for f in report["findings"] if f["code"] in ("LINT001", "LINT002", "SPEC011")]


def test_only_the_first_unknown_names_get_a_suggestion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:  # type: ignore[no-untyped-def]
    """Each "did you mean" is a fuzzy search over every name: past MAX_HINTED_NAMES unknown names the
    rest are only named, with the names there are in the fix, so the lint stays linear in the files."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rigs").mkdir()
    (tmp_path / "workloads").mkdir()
    count = MAX_HINTED_NAMES + 5
    for number in range(count):
        (tmp_path / f"rigs/rig-{number:03d}.yaml").write_text(RIG.format(name=f"rig-{number:03d}"))
        (tmp_path / f"workloads/job-{number:03d}.yaml").write_text(
            WORKLOAD.format(name=f"job-{number:03d}", rig=f"rigg-{number:03d}")
        )
    searches = [0]
    from rigcheck.core.spec import fields

    real = fields.did_you_mean

    def counted(word: str, candidates: object) -> str:
        searches[0] += 1
        return real(word, candidates)  # type: ignore[arg-type]

    monkeypatch.setattr(fields, "did_you_mean", counted)
    result = run_cli("lint", ".", "--format", "json", "--isolated", "--select", "LINT")
    assert result.exit_code == 1, result.err
    unknown = sorted(
        (f for f in result.json()["findings"] if "matches no rig" in f["message"]),
        key=lambda f: f["location"]["file"],
    )
    assert len(unknown) == count and searches[0] == MAX_HINTED_NAMES
    hinted = [f for f in unknown if "did you mean" in f["message"]]
    assert len(hinted) == MAX_HINTED_NAMES
    assert "did you mean 'rig-000'?" in unknown[0]["message"]
    assert all("rig-000, rig-001" in f["fix"] for f in unknown)  # the names there are, hinted or not
    assert lint.MAX_HINTED_NAMES == MAX_HINTED_NAMES
