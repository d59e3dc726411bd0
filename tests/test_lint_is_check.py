"""``rigcheck lint`` says of every spec exactly what ``rigcheck check`` says of it (issue 43).

The regressions first: a repository of 5 rigs and 5 workloads where one rig names an unknown GPU (every
format files every finding under its own run); the config reference's ``select: [PWR, MEM, CUDA]``
example, which once let a broken spec pass; spec spellings the loader reads that discovery once
skipped. Then the differential suite: generated repositories (Hypothesis, fixed seed) where, for every
run, lint's findings equal a standalone ``check`` of the same files, every format groups findings as
the JSON report does, and ``--jobs 2`` writes the report of ``--jobs 1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

from rigcheck.core.engine.errors import SpecError
from rigcheck.core.lint import cpus, lint_workers
from rigcheck.core.spec.documents import Unsure, may_declare_rigcheck, read_if_spec
from rigcheck.core.spec.loader import load_yaml_text
from tests import lint_vs_check as lvc
from tests.conftest import SPECS
from tests.test_lint_formats import normalized
from tests.test_lint_jobs import FORKS

UNKNOWN_GPU = "RTX 4090 Ti"


def _rig(name: str, renamed: str | None = None, *, gpu: str | None = None) -> str:
    text = (SPECS / "rigs" / f"{name}.yaml").read_text(encoding="utf-8")
    if renamed:
        text = re.sub(r"(?m)^name: .*$", f"name: {renamed}", text, count=1)
    if gpu:  # the first model: in a rig is its GPU's
        text = re.sub(r"(?m)^(\s+model: ).*$", rf"\g<1>{gpu}", text, count=1)
    return text


def _workload(name: str, renamed: str | None = None, runs_on: list[str] | None = None) -> str:
    text = (SPECS / "workloads" / f"{name}.yaml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^runs_on:.*\n(  - .*\n)*", "", text)
    if renamed:
        text = re.sub(r"(?m)^name: .*$", f"name: {renamed}", text, count=1)
    if runs_on is not None:
        text += "runs_on: [" + ", ".join(runs_on) + "]\n"
    return text


# -- the 5 + 5 repository with an unknown GPU, in every format --------------------------------------------


def _five_and_five(root: Path) -> None:
    """5 rigs (the second, in sorted order, names an unknown GPU) and 5 workloads, paired by a matrix of
    every rig with two workloads; the other three workloads are orphans."""
    (root / "rigs").mkdir(parents=True)
    (root / "workloads").mkdir()
    rigs = {
        "a-home": _rig("home-2x3090"),
        "b-bad": _rig("puget-quad-3090", gpu=UNKNOWN_GPU),
        "c-desk": _rig("rtx4090-desktop"),
        "d-h100": _rig("dgx-h100"),
        "e-l40s": _rig("l40s-node"),
    }
    for name, text in rigs.items():
        (root / "rigs" / f"{name}.yaml").write_text(text, encoding="utf-8")
    for name in (
        "qwen-1.8b-lora",
        "llama-3-8b-full-finetune",
        "gpt-125m-pretrain",
        "llama-2-7b-lora-4090",
        "llama-3-70b-serving",
    ):
        (root / "workloads" / f"{name}.yaml").write_text(_workload(name), encoding="utf-8")
    (root / ".rigcheck.yaml").write_text(
        "matrix:\n  rigs: [rigs/*.yaml]\n"
        "  workloads: [workloads/qwen-1.8b-lora.yaml, workloads/llama-3-8b-full-finetune.yaml]\n",
        encoding="utf-8",
    )


def test_a_rig_with_an_unknown_gpu_shifts_no_finding_in_any_format(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _five_and_five(root)
    code, reports = lvc.lint(root, formats=lvc.FORMATS)
    report = json.loads(reports["json"])
    assert code == 1
    runs = report["runs"]
    assert len(runs) == 5 + 5 * 2  # every run asked for is recorded, the broken rig's too
    lvc.runs_exist(report)
    lvc.every_format_groups_as_json(reports)
    bad = [index for index, run in enumerate(runs) if run["rig"].endswith("b-bad.yaml")]
    assert len(bad) == 3 and all(runs[index]["verdict"] == "fail" for index in bad)
    alone = next(index for index in bad if runs[index]["workload"] is None)
    spec = [f for f in report["findings"] if f["code"] == "SPEC013"]
    assert [f["run"] for f in spec] == [alone]  # listed once, with the rig's own run
    assert UNKNOWN_GPU in spec[0]["message"]
    for index in bad:  # its pairs count it, as check of the pair fails on it
        assert runs[index]["summary"]["failed"] >= 1
    # the text lists nothing under a heading that says it is listed above
    text = reports["text"]
    assert "FAIL rig puget-quad-3090" in text
    block = text.split("FAIL rig puget-quad-3090", 1)[1].split("\n\n", 1)[0]
    assert "SPEC013" in block
    # the runs after the broken rig keep their own findings: each pair against check of its files
    _agree(root, report)


def test_the_same_repository_without_the_broken_rig_is_unchanged_in_the_other_runs(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _five_and_five(root)
    _, with_bad = lvc.lint(root)
    (root / "rigs" / "b-bad.yaml").unlink()
    _, without = lvc.lint(root)

    def by_subject(text: str) -> dict[str, Any]:
        report = json.loads(text)
        return {
            run["subject"] + " " + run["rig"]: (
                run["verdict"],
                sorted(lvc.key(f) for f in lvc.flagged(report) if f.get("run") == index),
            )
            for index, run in enumerate(report["runs"])
        }

    kept, fewer = by_subject(with_bad["json"]), by_subject(without["json"])
    assert {subject: kept[subject] for subject in fewer} == fewer


# -- selection never hides a broken spec -----------------------------------------------------------------


def test_the_select_example_reports_a_misspelt_field_and_an_unknown_gpu(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".rigcheck.yaml").write_text("select: [PWR, MEM, CUDA]\n", encoding="utf-8")
    (root / "typo.yaml").write_text(_rig("home-2x3090").replace("\nname:", "\nnmae:", 1), encoding="utf-8")
    (root / "gpu.yaml").write_text(_rig("home-2x3090", "gpu", gpu=UNKNOWN_GPU), encoding="utf-8")
    code, reports = lvc.lint(root, formats=("json", "sarif"))
    codes = {f["code"] for f in json.loads(reports["json"])["findings"] if f["severity"] == "fail"}
    assert code == 1
    assert {"SPEC011", "SPEC013"} <= codes
    results = json.loads(reports["sarif"])["runs"]
    assert sum(len(run["results"]) for run in results) >= 3
    assert lvc.run(root, "check", "typo.yaml")[0] == 2


@pytest.mark.parametrize(
    "config",
    [
        "select: [PWR]\n",
        "ignore: [SPEC, ENGINE, LINT, SUP, CONFIG]\n",
        "severity: {SPEC013: off, LINT001: off}\n",
        "severity: {SPEC: warn}\n",
    ],
)
def test_structural_findings_cannot_be_deselected(tmp_path: Path, config: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".rigcheck.yaml").write_text(config, encoding="utf-8")
    (root / "gpu.yaml").write_text(_rig("home-2x3090", gpu=UNKNOWN_GPU), encoding="utf-8")
    (root / "orphan.yaml").write_text(_workload("gpt-125m-pretrain"), encoding="utf-8")
    code, reports = lvc.lint(root)
    found = {(f["code"], f["severity"]) for f in json.loads(reports["json"])["findings"]}
    assert code == 1
    assert ("SPEC013", "fail") in found and ("LINT001", "warn") in found


def test_a_comment_cannot_suppress_a_broken_spec(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    text = _rig("home-2x3090", gpu=UNKNOWN_GPU)
    text = text.replace(UNKNOWN_GPU, f"{UNKNOWN_GPU}  # rigcheck: ignore[SPEC013] reason: not in the catalog")
    (root / "gpu.yaml").write_text(
        "# rigcheck: ignore-file[SPEC] reason: generated\n" + text, encoding="utf-8"
    )
    code, reports = lvc.lint(root)
    report = json.loads(reports["json"])
    assert code == 1
    spec = [f for f in report["findings"] if f["code"] == "SPEC013"]
    assert spec and not spec[0].get("suppressions")


# -- the loader decides what a spec is -------------------------------------------------------------------

_RIG_BODY = _rig("home-2x3090").replace("apiVersion: rigcheck/v1\n", "")

SPELLINGS = {
    "anchor": "apiVersion: &v rigcheck/v1\n",
    "escaped key": '"\\u0061piVersion": rigcheck/v1\n',
    "escaped value": 'apiVersion: "\\x72igcheck/v1"\n',
    "escaped line break": 'apiVersion: "rig\\\n  check/v1"\n',
    "comment between key and value": "apiVersion: # the version\n  rigcheck/v1\n",
    "folded block": "apiVersion: >-\n  rigcheck/v1\n",
    "literal block": "apiVersion: |-\n  rigcheck/v1\n",
    "tagged": "apiVersion: !!str rigcheck/v1\n",
    "single-quoted": "'apiVersion': 'rigcheck/v1'\n",
    "explicit key": "? apiVersion\n: rigcheck/v1\n",
    "after 70 KiB of comments": "# a comment line of filler text\n" * 2300 + "apiVersion: rigcheck/v1\n",
}
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")


def _spelled() -> dict[str, bytes]:
    files = {name: (_RIG_BODY + head).encode() for name, head in SPELLINGS.items()}
    files.update({f"in {enc}": ("apiVersion: rigcheck/v1\n" + _RIG_BODY).encode(enc) for enc in ENCODINGS})
    return files


def test_every_spelling_the_loader_reads_is_linted(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    files = _spelled()
    for index, data in enumerate(files.values()):
        (root / f"r{index:02d}.yaml").write_bytes(data)
    for index, name in enumerate(files):
        code, _, err = lvc.run(root, "validate", f"r{index:02d}.yaml")
        assert code == 0, (name, err)
    _, reports = lvc.lint(root)
    linted = sorted(run["rig"] for run in json.loads(reports["json"])["runs"])
    assert linted == sorted(f"r{index:02d}.yaml" for index in range(len(files)))


def test_yaml_that_cannot_be_parsed_where_specs_live_is_a_finding(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "rigs").mkdir(parents=True)
    (root / "ci").mkdir()
    (root / "rigs" / "good.yaml").write_text(_rig("home-2x3090"), encoding="utf-8")
    (root / "rigs" / "broken.yaml").write_text("kind: Rig\nnodes: [unclosed\n", encoding="utf-8")
    (root / "ci" / "named.yaml").write_text("# rigcheck\nkey: [unclosed\n", encoding="utf-8")
    (root / "ci" / "helm.yaml").write_text("value: {{ .Values.x }}\n", encoding="utf-8")
    (root / "ci" / "list.yaml").write_text("- rigcheck\n- hooks\n", encoding="utf-8")
    _, reports = lvc.lint(root)
    files = {(f.get("location") or {}).get("file") for f in json.loads(reports["json"])["findings"]}
    assert "rigs/broken.yaml" in files and "ci/named.yaml" in files
    assert "ci/helm.yaml" not in files and "ci/list.yaml" not in files


_SCALAR = st.text(alphabet="rigchekRIGCHE/v1\\ux0-_ \"'", max_size=14)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    key=st.sampled_from(
        ["apiVersion", '"apiVersion"', "'apiVersion'", '"\\u0061piVersion"', "? apiVersion\n:"]
    ),
    value=st.one_of(
        _SCALAR,
        _SCALAR.map(lambda text: '"' + text.replace('"', "") + '"'),
        st.sampled_from(['"\\x72igcheck/v1"', '"rig\\\n  check/v1"', "&a rigcheck/v2", ">-\n  rigcheck/v1"]),
    ),
    encoding=st.sampled_from(ENCODINGS),
)
def test_the_pre_filter_never_drops_what_the_loader_takes(key: str, value: str, encoding: str) -> None:
    """A generated apiVersion spelling: whenever the parsed document declares rigcheck, the pre-filter
    keeps the file (never a spec dropped unread)."""
    text = f"{key} {value}\nkind: Rig\n"
    try:
        document = load_yaml_text(text, "generated.yaml")
    except Exception:
        return
    declared = str(document.data.get("apiVersion", "")).startswith("rigcheck/")
    if declared:
        assert may_declare_rigcheck(text), text
        assert may_declare_rigcheck(text.encode(encoding).decode(encoding))
    with tempfile.TemporaryDirectory() as folder:  # and lint's question gets the loader's answer
        path = Path(folder, "generated.yaml")
        path.write_bytes(text.encode(encoding))
        found = read_if_spec(str(path))
        assert (found is not None and not isinstance(found, Unsure)) == declared, (text, found)


def test_read_if_spec_follows_the_documents(tmp_path: Path) -> None:
    several = tmp_path / "several.yaml"
    several.write_text("apiVersion: rigcheck/v1\nkind: Rig\n---\nkind: Other\n", encoding="utf-8")
    other = tmp_path / "k8s.yaml"
    other.write_text(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: "a\\tb"}\n---\nkind: Other\n', encoding="utf-8"
    )
    refused = tmp_path / "refused.yaml"  # parses, but the loader refuses a value: a broken spec
    refused.write_text(
        "<<: {apiVersion: rigcheck/v1}\nkind: Rig\nwatts: " + "9" * 5000 + "\n", encoding="utf-8"
    )
    with pytest.raises(SpecError, match="several YAML documents"):
        read_if_spec(str(several))
    with pytest.raises(SpecError, match="5000-digit"):
        read_if_spec(str(refused))
    assert read_if_spec(str(other)) is None


# -- the differential suite ------------------------------------------------------------------------------

_RIGS = ("home-2x3090", "rtx4090-desktop", "l40s-node", "gcp-n1-t4", "aws-g5-xlarge")
_WORKLOADS = ("qwen-1.8b-lora", "gpt-125m-pretrain", "llama-2-7b-lora-4090")
_BREAKS = (
    *("none",) * 6,
    "unknown gpu",
    "misspelt field",
    "yaml error",
    "suppressed file",
    "suppressed line",
)


@st.composite
def repositories(draw: st.DrawFn) -> dict[str, Any]:
    """A small repository: rigs and workloads from shipped specs under random file names, some broken
    (an unknown GPU, a misspelt field, a YAML error), some with suppressions; workloads paired by
    ``runs_on`` (by name or file, some unknown), by config pairs or a matrix, or not at all; a file
    that is not a spec; a waiver."""
    names = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=7, max_size=7, unique=True))
    rig_count = draw(st.integers(1, 3))
    workload_count = draw(st.integers(0, 3))
    files: dict[str, str] = {}
    rigs = []
    for index in range(rig_count):
        base = draw(st.sampled_from(_RIGS))
        broken = draw(st.sampled_from(_BREAKS))
        name = f"rig-{names[index]}"
        text = _rig(base, name, gpu=UNKNOWN_GPU if broken == "unknown gpu" else None)
        if broken == "misspelt field":
            text = text.replace("\nnodes:", "\nnodez:", 1)
        elif broken == "yaml error":
            text += "nodes: [unclosed\n"
        elif broken == "suppressed file":
            text = "# rigcheck: ignore-file[PLT,PWR] reason: generated\n" + text
        elif broken == "suppressed line":
            text = re.sub(
                r"(?m)^(\s+length_mm: \d+)", r"\1  # rigcheck: ignore[PLT003] reason: measured", text
            )
        path = f"{draw(st.sampled_from(['', 'rigs/', 'hw/x/']))}{names[index]}.yaml"
        files[path] = text
        rigs.append((path, name))
    pairs = []
    for index in range(workload_count):
        base = draw(st.sampled_from(_WORKLOADS))
        name = f"wl-{names[3 + index]}"
        targets = draw(
            st.lists(st.sampled_from([*rigs, ("nowhere.yaml", "no-such-rig")]), max_size=2, unique=True)
        )
        by_file = draw(st.booleans())
        path = f"{draw(st.sampled_from(['', 'workloads/']))}{names[3 + index]}.yaml"
        runs_on = [
            (
                os.path.relpath(target, os.path.dirname(path) or ".")
                if by_file and target != "nowhere.yaml"
                else rig_name
            )
            for target, rig_name in targets
        ]
        text = _workload(base, name, runs_on or None)
        if draw(st.sampled_from(_BREAKS)) == "misspelt field":
            text = text.replace("\ntask:", "\ntaks:", 1)
        files[path] = text
        if rigs and draw(st.booleans()):
            pairs.append((draw(st.sampled_from(rigs))[0], path))
    if draw(st.booleans()):
        files["ci.yaml"] = "on: push\njobs: {build: {runs-on: ubuntu-latest}}\n"
    config = ""
    if pairs:
        config += "pairs:\n" + "".join(f"  - {{rig: {rig}, workload: {wl}}}\n" for rig, wl in pairs)
    if draw(st.integers(0, 3)) == 0:  # every rig under rigs/ with every workload under workloads/
        config += "matrix:\n  rigs: [rigs/*.yaml]\n  workloads: [workloads/*.yaml]\n"
    if rigs and draw(st.booleans()):
        config += f"waivers:\n  - {{rule: PLT003, path: {rigs[0][0]}, reason: measured}}\n"
    return {"files": files, "config": config}


def _write(root: Path, repository: dict[str, Any]) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for path, text in repository["files"].items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    if repository["config"]:
        (root / ".rigcheck.yaml").write_text(repository["config"], encoding="utf-8")


def _agree(root: Path, report: dict[str, Any]) -> None:
    """For every run: check of the same files says what lint filed under the run and its rig's run.

    Unused suppressions (SUP002) are left out of the comparison: lint says them of the whole lint, where
    a waiver one run leaves unused may be used by another; check says them of its one run."""
    runs = report["runs"]
    alone = {run["rig"]: index for index, run in enumerate(runs) if run["workload"] is None}
    lint_flagged = lvc.flagged(report)
    for index, run in enumerate(runs):
        code, checked, err = lvc.check(root, run["rig"], run["workload"])
        own = [lvc.key(f) for f in lint_flagged if f.get("run") == index]
        rig = [lvc.key(f) for f in lint_flagged if f.get("run") == alone.get(run["rig"]) != index]
        if checked is None:  # a spec broken at check time: check says it in one line per problem
            assert code == 2, err
            assert run["verdict"] == "fail"
            said = lvc.problems(err)
            assert said, err
            # listed with this run, or with an earlier run that reads the same file (and counted here)
            files = {run["rig"], run["workload"]}
            filed = {
                lvc.key(f)[0:1] + lvc.key(f)[3:]
                for f in lint_flagged
                if f.get("run") is not None
                and f["run"] <= index
                and (f.get("location") or {}).get("file") in files
            }
            assert set(said) <= filed, (said, filed)
            assert run["summary"]["failed"] >= sum(said.values())
            continue
        said = [f for f in lvc.flagged(checked) if not f["code"].startswith("SUP")]
        expected = sorted(lvc.key(f) for f in said)
        severities = {f["severity"] for f in said}
        verdict = "fail" if "fail" in severities else "warn" if severities else "pass"
        assert run["verdict"] == verdict, (run, verdict)
        counts = (sum(f["severity"] == "warn" for f in said), sum(f["severity"] == "fail" for f in said))
        assert (run["summary"]["warned"], run["summary"]["failed"]) == counts, run
        assert set(own) <= set(expected), (run["subject"], set(own) - set(expected))
        if run["workload"] is None:
            assert sorted(own) == expected
        else:  # what check says of the pair is listed with the pair or with its rig
            assert not set(expected) - set(own) - set(rig), (run["subject"], set(expected) - set(own))


@seed(43)
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(repository=repositories())
def test_lint_agrees_with_check_on_generated_repositories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repository: dict[str, Any]
) -> None:
    root = tmp_path / "repo"
    _write(root, repository)
    _, reports = lvc.lint(root, "--jobs", "1", formats=lvc.FORMATS)
    report = json.loads(reports["json"])
    runs = report["runs"]
    event(f"runs: {min(len(runs), 4)}{'+' if len(runs) >= 4 else ''}")
    event(f"pairs: {sum(1 for run in runs if run['workload'])}")
    event(
        "a broken spec"
        if any(f["code"].startswith("SPEC01") for f in lvc.flagged(report))
        else "no broken spec"
    )
    lvc.runs_exist(report)
    lvc.every_format_groups_as_json(reports)
    _agree(root, report)
    if FORKS and len(runs) >= 2:  # two forked workers, one run each: the same report
        monkeypatch.setattr(lint_workers, "RUNS_PER_WORKER", 1)
        monkeypatch.setattr(cpus, "usable_cpus", lambda: 2)
        chosen: list[int] = []
        count = lint_workers.worker_count
        monkeypatch.setattr(
            lint_workers, "worker_count", lambda *a, **k: chosen.append(count(*a, **k)) or chosen[-1]
        )
        _, forked = lvc.lint(root, "--jobs", "2", formats=("json", "text", "sarif"))
        monkeypatch.setattr(lint_workers, "worker_count", count)
        event(f"workers: {chosen}")
        for name, text in forked.items():
            assert normalized(name, text) == normalized(name, reports[name]), name


def test_the_shipped_specs_with_an_unknown_gpu_rig_first_agree_with_check(tmp_path: Path) -> None:
    """The acceptance case: the shipped rigs and workloads with the project's pairs, and a rig naming an
    unknown GPU that sorts first, so that every later run's index would shift if it were dropped."""
    root = tmp_path / "repo"
    for kind in ("rigs", "workloads"):
        shutil.copytree(SPECS / kind, root / "specs" / kind)
    config = (SPECS.parent / ".rigcheck.yaml").read_text(encoding="utf-8")
    (root / ".rigcheck.yaml").write_text(config.split("pairs:", 1)[1].join(["pairs:", ""]), encoding="utf-8")
    (root / "specs" / "rigs" / "000-unknown.yaml").write_text(
        _rig("home-2x3090", "aaa-unknown-gpu", gpu=UNKNOWN_GPU), encoding="utf-8"
    )
    _, reports = lvc.lint(root, formats=lvc.FORMATS)
    report = json.loads(reports["json"])
    assert report["runs"][0]["rig"] == "specs/rigs/000-unknown.yaml"
    assert report["runs"][0]["verdict"] == "fail"
    assert sum(1 for run in report["runs"] if run["workload"]) >= 9
    lvc.runs_exist(report)
    lvc.every_format_groups_as_json(reports)
    _agree(root, report)
