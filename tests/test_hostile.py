"""Issue 15: a pull request is hostile input. Each test here is one escape found when rigcheck was
attacked as a stranger's pull request would attack it (the repository and plugin boundaries); each
failed on the code before the fix. Output escaping, numbers and merge have their own files
(test_hostile_output.py, test_hostile_numbers.py, test_hostile_merge.py); docs/security.md is the
threat model."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

RIG = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n    gpus: {model: L40S}\n"


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A checked repository: a .git folder (the root) and the given files."""
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def lint(run_cli, *args: str):  # type: ignore[no-untyped-def]
    result = run_cli("lint", *args, "--format", "json")
    assert result.exit_code in (0, 1, 2), result.err
    return result


def codes(result) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return sorted((f["code"], f["severity"]) for f in result.json()["findings"] if f["severity"] != "pass")


# -- the config's plugins: never a module name --------------------------------------------------------


@pytest.mark.parametrize("module", ["venv.__main__", "this", "jsonschema.__main__", "unittest.__main__"])
def test_config_plugins_do_not_import_modules(run_cli, tmp_path, monkeypatch, module: str) -> None:  # type: ignore[no-untyped-def]
    """`plugins: [venv.__main__]` ended lint with exit 0 and no output (and made a virtualenv)."""
    root = repo(tmp_path, {".rigcheck.yaml": f"plugins: [{module}]\n", "rig.yaml": RIG})
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "argv", ["rigcheck"])
    already_imported = module in sys.modules
    result = run_cli("lint", "--format", "json")
    assert result.exit_code == 2
    assert already_imported or module not in sys.modules
    assert "not an installed rigcheck plugin" in result.err and module in result.err
    assert "Zen of Python" not in result.out and "Zen of Python" not in result.err
    assert not (root / "pyvenv.cfg").exists() and sorted(p.name for p in root.iterdir()) == [
        ".git",
        ".rigcheck.yaml",
        "rig.yaml",
    ]


def test_a_config_plugin_whose_code_is_in_the_repository_is_refused_before_it_runs(
    run_cli, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A src layout on PYTHONPATH (or an editable install) with an entry point: found in metadata,
    refused before import."""
    marker = tmp_path / "ran"
    root = repo(
        tmp_path,
        {
            ".rigcheck.yaml": "plugins: [evil]\n",
            "rig.yaml": RIG,
            "src/evilpkg/__init__.py": f"open({str(marker)!r}, 'w').write('x')\n",
            "src/evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
            "src/evil-1.0.dist-info/entry_points.txt": "[rigcheck]\nevil = evilpkg\n",
        },
    )
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root / "src"))
    result = run_cli("lint", "--format", "json")
    assert result.exit_code == 2 and "inside the folder being checked" in result.err
    assert not marker.exists() and "evilpkg" not in sys.modules


def test_a_config_names_an_installed_plugin_by_its_distribution(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("rigcheck_site_policy")
    monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
    root = repo(tmp_path, {".rigcheck.yaml": "plugins: [rigcheck-site-policy]\n", "rig.yaml": RIG})
    monkeypatch.chdir(root)
    plugins = {p["name"] for p in run_cli("lint", "--format", "json").json()["plugins"]}
    assert "site_policy" in plugins


# -- what plugin code does: reported, not obeyed ------------------------------------------------------

HOSTILE_PLUGIN = """
import os, sys, time
from rigcheck import Checker, Rule, RuleDocs, Severity, hookimpl

DOCS = RuleDocs(what="w", why="y", example="e", fix="f")
RULE = Rule(code="EVIL001", name="evil", summary="s", severity=Severity.WARN, docs=DOCS)
MODE = os.environ.get("EVIL_MODE", "")

if MODE == "exit-on-import":
    sys.exit(0)


class Evil(Checker):
    name = "evil"
    rules = (RULE,)

    def check(self, ctx):
        if MODE == "sys-exit":
            sys.exit(0)
        if MODE == "os-exit":
            os._exit(0)
        if MODE == "interrupt":
            raise KeyboardInterrupt
        if MODE == "print":
            print("garbage that is not JSON")
        if MODE == "swallow-timeout":
            end = time.monotonic() + 30
            while time.monotonic() < end:
                try:
                    time.sleep(0.01)
                except BaseException:
                    pass
        if MODE == "unserialisable":
            yield RULE.warned("w", evidence={"object": object()})
            return
        if MODE == "mutate":
            ctx.facts("power")["sustained"]._values["warn_above_fraction"] = 0.0
        if MODE == "mutate-catalog":
            ctx.nodes[0].gpus[0].facts.tdp_w = 1
        yield RULE.passed("ok")


@hookimpl
def rigcheck_checkers(register):
    if MODE == "exit-in-hook":
        raise SystemExit(3)
    register(Evil())
"""


@pytest.fixture
def hostile(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "evil_checker.py").write_text(HOSTILE_PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "evil_checker", raising=False)
    rig = tmp_path / "rig.yaml"
    rig.write_text(RIG, encoding="utf-8")

    def run(run_cli, mode: str, *extra: str):  # type: ignore[no-untyped-def]
        monkeypatch.setenv("EVIL_MODE", mode)
        monkeypatch.delitem(sys.modules, "evil_checker", raising=False)
        return run_cli("check", str(rig), "-p", "evil_checker", "--format", "json", *extra)

    return run


@pytest.mark.parametrize("mode", ["sys-exit", "interrupt", "exit-on-import", "exit-in-hook"])
def test_a_plugin_that_ends_the_process_is_a_finding(run_cli, hostile, mode: str) -> None:  # type: ignore[no-untyped-def]
    result = hostile(run_cli, mode)
    if mode == "exit-on-import":  # -p names a module on purpose: its failure is a usage error
        assert result.exit_code == 2 and "evil_checker" in result.err
        return
    report = result.json()
    engine = [f for f in report["findings"] if f["code"].startswith("ENGINE")]
    assert result.exit_code == 1 and engine, result.out
    assert any(word in engine[0]["message"] for word in ("SystemExit", "KeyboardInterrupt"))
    assert any(f["code"] == "PLT001" for f in report["findings"])  # the other checkers ran


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--isolate-plugins needs fork")
def test_os_exit_in_an_isolated_checker_is_a_finding(run_cli, hostile) -> None:  # type: ignore[no-untyped-def]
    result = hostile(run_cli, "os-exit", "--isolate-plugins")
    report = result.json()
    engine = [f for f in report["findings"] if f["code"] == "ENGINE001"]
    assert result.exit_code == 1 and engine and "exited with status 0" in engine[0]["message"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--isolate-plugins needs fork")
def test_an_isolated_checker_gives_its_findings_back(run_cli, hostile) -> None:  # type: ignore[no-untyped-def]
    report = hostile(run_cli, "", "--isolate-plugins").json()
    assert [f["message"] for f in report["findings"] if f["code"] == "EVIL001"] == ["ok"]


def test_what_a_checker_prints_does_not_corrupt_the_json_report(run_cli, hostile) -> None:  # type: ignore[no-untyped-def]
    result = hostile(run_cli, "print")
    report = json.loads(result.out)  # would fail on the printed line
    run = next(c for c in report["checkers"] if c["name"] == "evil")
    assert "printed 25 characters to standard output (captured" in run["reason"]


def test_a_checker_that_swallows_its_timeout_is_abandoned(run_cli, hostile) -> None:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    result = hostile(run_cli, "swallow-timeout", "--checker-timeout", "0.5")
    assert time.monotonic() - started < 10
    timed = [f for f in result.json()["findings"] if f["code"] == "ENGINE002"]
    assert timed and "did not finish within 0.5 s" in timed[0]["message"]


def test_evidence_that_is_not_json_is_replaced_and_reported(run_cli, hostile) -> None:  # type: ignore[no-untyped-def]
    report = hostile(run_cli, "unserialisable").json()
    evil = next(f for f in report["findings"] if f["code"] == "EVIL001")
    assert "unserialisable_evidence" in evil["evidence"]
    assert any(f["code"] == "ENGINE003" for f in report["findings"])


@pytest.mark.parametrize("mode", ["mutate", "mutate-catalog"])
def test_a_checker_cannot_change_the_facts_other_checkers_read(run_cli, hostile, mode: str) -> None:  # type: ignore[no-untyped-def]
    report = hostile(run_cli, mode).json()
    crashed = [f for f in report["findings"] if f["code"] == "ENGINE001"]
    assert crashed and ("read-only" in crashed[0]["message"] or "frozen" in crashed[0]["message"])
    from rigcheck.core.catalog.catalog import Catalog  # noqa: F401  (the shared catalog is untouched)
    from rigcheck.core.catalog.facts import load_rule_facts

    assert load_rule_facts("power")["sustained"]["warn_above_fraction"] == 0.8


# -- the repository boundary --------------------------------------------------------------------------


def workload_on(*rigs: str) -> str:
    listed = ", ".join(repr(r) for r in rigs)
    return (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: gpt2-124m}\ntask: pretrain\n"
        f"runs_on: [{listed}]\n"
    )


def test_runs_on_outside_the_repository_is_a_finding_not_a_read(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "outside" / "secret.yaml"
    secret.parent.mkdir()
    secret.write_text(RIG.replace("name: r", "name: SECRET-TOKEN-123"), encoding="utf-8")
    root = repo(tmp_path / "repo", {"w.yaml": workload_on("/etc/passwd", "../outside/secret.yaml", "/etc/*")})
    monkeypatch.chdir(root)
    result = lint(run_cli)
    found = [f for f in result.json()["findings"] if f["code"] == "SPEC014"]
    assert len(found) == 3 and all("outside the checked root" in f["message"] for f in found)
    assert "SECRET-TOKEN-123" not in result.out and "root:x:0" not in result.out


def test_config_pairs_and_matrix_globs_stay_inside(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = "pairs: [{rig: /etc/hostname, workload: w.yaml}]\nmatrix: {rigs: ['/etc/*.conf'], workloads: [w.yaml]}\n"
    root = repo(tmp_path, {".rigcheck.yaml": config, "w.yaml": workload_on("r.yaml"), "r.yaml": RIG})
    monkeypatch.chdir(root)
    found = [f for f in lint(run_cli).json()["findings"] if f["code"] == "SPEC014"]
    assert {f["location"]["pointer"] for f in found} == {"/pairs/0", "/matrix/rigs/0"}


def test_a_committed_symlink_out_of_the_repository_is_not_followed(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside.yaml"
    outside.write_text(RIG.replace("name: r", "name: OUTSIDE-SPEC"), encoding="utf-8")
    root = repo(tmp_path / "repo", {"r.yaml": RIG})
    (root / "link.yaml").symlink_to(outside)
    monkeypatch.chdir(root)
    result = lint(run_cli)
    assert ("SPEC014", "fail") in codes(result) and "OUTSIDE-SPEC" not in result.out


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_symlink_to_dev_zero_does_not_exhaust_memory(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = repo(tmp_path, {"r.yaml": RIG})
    (root / "zero.yaml").symlink_to("/dev/zero")
    monkeypatch.chdir(root)
    assert ("SPEC014", "fail") in codes(lint(run_cli))
    # and named on the command line, where the user's own paths are trusted: still not read endlessly
    result = run_cli("validate", "/dev/zero")
    assert result.exit_code == 2 and "not a regular file" in result.out + result.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_yaml_does_not_hang_lint(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = repo(tmp_path, {"r.yaml": RIG})
    os.mkfifo(root / "pipe.yaml")
    monkeypatch.chdir(root)
    started = time.monotonic()
    result = lint(run_cli)
    assert time.monotonic() - started < 10
    assert any(f["code"] == "SPEC014" and "a FIFO" in f["message"] for f in result.json()["findings"])


def test_a_file_that_is_one_scalar_is_not_echoed(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "token.yaml"
    path.write_text("ghp_SECRETSECRETSECRETSECRET\n", encoding="utf-8")
    result = run_cli("validate", str(path))
    shown = result.out + result.err
    assert result.exit_code == 2 and "SECRET" not in shown and "a single scalar" in shown


def test_a_config_baseline_outside_the_repository_is_refused(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = repo(tmp_path, {".rigcheck.yaml": "baseline: /etc/passwd\n", "r.yaml": RIG})
    monkeypatch.chdir(root)
    result = run_cli("lint")
    assert result.exit_code == 2 and "SPEC014" in result.err and "root:x" not in result.err + result.out


def _hf_workload(hf_config: str) -> str:
    return workload_on("r.yaml").replace("model: {preset: gpt2-124m}", f"model: {{hf_config: {hf_config!r}}}")


HF_CONFIG = '{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}'


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_hf_config_outside_the_repository_is_a_finding_not_a_read(
    run_cli, tmp_path, monkeypatch, how
) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside" / "config.json"
    outside.parent.mkdir()
    outside.write_text(HF_CONFIG, encoding="utf-8")
    named = {"absolute": str(outside), "dotdot": "../outside/config.json", "symlink": "link.json"}[how]
    root = repo(tmp_path / "repo", {"r.yaml": RIG, "w.yaml": _hf_workload(named)})
    (root / "link.json").symlink_to(outside)
    monkeypatch.chdir(root)
    found = [f for f in lint(run_cli).json()["findings"] if f["code"] == "SPEC014"]
    assert [f["location"]["pointer"] for f in found] == ["/model/hf_config"], found
    assert "outside the checked root" in found[0]["message"]
    # `check` confines to the spec's repository too; --root widens it on purpose
    result = run_cli("check", "r.yaml", "w.yaml")
    assert result.exit_code == 2 and "[SPEC014]" in result.err
    result = run_cli("check", "--root", str(tmp_path), "r.yaml", "w.yaml")
    assert result.exit_code in (0, 1), result.err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_hf_config_that_is_dev_zero_is_refused_from_the_open_file(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = repo(tmp_path, {"r.yaml": RIG, "w.yaml": _hf_workload("zero.json")})
    (root / "zero.json").symlink_to("/dev/zero")
    monkeypatch.chdir(root)
    result = run_cli("check", "--root", "/", "r.yaml", "w.yaml")
    assert result.exit_code == 2 and "not a regular file (a character device)" in result.err


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e300", "-1", "1.5"])
def test_a_threshold_override_must_be_a_finite_number_in_range(run_cli, tmp_path, monkeypatch, value) -> None:  # type: ignore[no-untyped-def]
    """`thresholds: {...: .inf}` switched the sustained-power warning off for every rig."""
    config = f"thresholds:\n  power.sustained.warn_above_fraction: {value}\n"
    root = repo(tmp_path, {".rigcheck.yaml": config, "r.yaml": RIG})
    monkeypatch.chdir(root)
    result = run_cli("lint")
    assert result.exit_code == 2, result.out
    assert "/thresholds/power.sustained.warn_above_fraction" in result.err and "[CONFIG001]" in result.err
    assert ("finite" if "n" in value else "between 0 and 1") in result.err


# -- discovery: a spec is a spec however it is written --------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: rigcheck/v1\nkind: !!str Rig\nname: a\nnodes: [{gpus: {model: L40S}}]\n",
        '"apiVersion": rigcheck/v1\n"kind": Rig\nname: a\nnodes: [{gpus: {model: L40S}}]\n',
        "{apiVersion: rigcheck/v1, kind: Rig, name: a, nodes: [{gpus: {model: L40S}}]}\n",
        "apiVersion: rigcheck/v1\n<<: {kind: Rig}\nname: a\nnodes: [{gpus: {model: L40S}}]\n",
    ],
    ids=["tagged-kind", "quoted-keys", "flow-style", "merge-key"],
)
def test_every_way_of_writing_a_spec_is_checked(run_cli, tmp_path, monkeypatch, text: str) -> None:  # type: ignore[no-untyped-def]
    root = repo(tmp_path, {"a.yaml": text})
    monkeypatch.chdir(root)
    report = lint(run_cli).json()
    assert [run["subject"] for run in report["runs"]] == ["rig a"], report["subject"]


def test_a_spec_over_5_mb_is_checked_not_skipped(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Discovery skipped any file over 5 MB without a word: lint said "0 rigs", exit 0."""
    comments = ("# " + "x" * 98 + "\n") * (6 * 2**20 // 100)  # 6 MB that the schema does not bound
    root = repo(tmp_path, {"big.yaml": RIG + comments})
    monkeypatch.chdir(root)
    assert [run["subject"] for run in lint(run_cli).json()["runs"]] == ["rig r"]


def test_a_spec_over_the_cap_is_a_finding(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RIGCHECK_MAX_SPEC_BYTES", str(2 * 2**20))  # above rigcheck's own data files
    root = repo(tmp_path, {"big.yaml": RIG + "description: " + "x" * (3 * 2**20) + "\n"})
    monkeypatch.chdir(root)
    assert ("SPEC012", "fail") in codes(lint(run_cli))


def test_an_unreadable_yaml_file_is_a_finding(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = repo(tmp_path, {"r.yaml": RIG, "locked.yaml": RIG})
    real_open = os.open

    def refuse(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith("locked.yaml"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    monkeypatch.chdir(root)
    found = [f for f in lint(run_cli).json()["findings"] if f["code"] == "SPEC012"]
    assert found and "Permission denied" in found[0]["message"]


# -- slow paths ------------------------------------------------------------------------------------


def test_many_unknown_gpu_names_are_bounded(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    nodes = "".join(f"  - gpus: {{model: NOPE-{i}}}\n" for i in range(3000))
    path = tmp_path / "r.yaml"
    path.write_text(f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n{nodes}", encoding="utf-8")
    started = time.monotonic()
    result = run_cli("check", str(path))
    assert result.exit_code == 2 and time.monotonic() - started < 15
    lines = result.err.splitlines()
    assert sum("did you mean" in line for line in lines) <= 20


def test_a_huge_value_is_not_echoed_whole(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.yaml"
    path.write_text(RIG.replace("model: L40S", "model: " + "Z" * 2_000_000), encoding="utf-8")
    started = time.monotonic()
    result = run_cli("check", str(path))
    assert result.exit_code == 2 and time.monotonic() - started < 15
    assert len(result.err) < 5000 and "at most 4096 characters" in result.err


@pytest.mark.parametrize(
    "files",
    [
        {".rigcheck.yaml": 'baseline: "a\\0b"\n'},
        {".rigcheck.yaml": 'pairs: [{rig: "r\\0.yaml", workload: w.yaml}]\n'},
        {".rigcheck.yaml": 'matrix: {rigs: ["r\\0*"], workloads: [w.yaml]}\n'},
        {".rigcheck.yaml": 'exclude: ["x\\0"]\n'},
        {"w.yaml": workload_on("r.yaml").replace("runs_on: ['r.yaml']", 'runs_on: ["r\\0.yaml"]')},
        {"w.yaml": _hf_workload("r.yaml").replace("hf_config: 'r.yaml'", 'hf_config: "c\\0.json"')},
    ],
    ids=["baseline", "pairs", "matrix", "exclude", "runs_on", "hf_config"],
)
def test_a_path_with_a_nul_character_is_an_error_not_a_crash(run_cli, tmp_path, monkeypatch, files) -> None:  # type: ignore[no-untyped-def]
    """Found by the fuzz suite: `baseline: "\\0"` ended lint with "internal error: ValueError"."""
    root = repo(tmp_path, {"r.yaml": RIG, "w.yaml": workload_on("r.yaml"), **files})
    monkeypatch.chdir(root)
    result = run_cli("lint", "-f", "json")
    assert result.exit_code in (0, 1, 2) and "internal error" not in result.err, result.err


@pytest.mark.parametrize(
    ("old", "new", "pointer", "limit"),
    [
        ("name: r", "name: " + "x" * 300, "/name", 253),
        ("name: n", "name: " + "n" * 5_000, "/nodes/0/name", 4096),
    ],
)
def test_a_long_string_is_refused_not_copied_into_every_finding(
    run_cli, tmp_path, old, new, pointer, limit
) -> None:  # type: ignore[no-untyped-def]
    """A 20 MB rig name was valid: lint copied it into each of the rig's findings (a 0.5 GB report,
    1.5 GB of memory)."""
    path = tmp_path / "r.yaml"
    path.write_text(RIG.replace(old, new, 1), encoding="utf-8")
    result = run_cli("validate", str(path))
    assert result.exit_code == 2
    assert f"{pointer}: string should have at most {limit} characters" in result.out, result.out
