"""Issue 48, point 4: the composite action at the repository root (action.yml), the example workflow,
the pre-commit hook and the install lines of the docs work as written against this repository, before
any release: each pins a commit of this repository that holds what it uses."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

from .conftest import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
RIG = (
    "apiVersion: rigcheck/v1\nkind: Rig\nname: tiny-psu\nnodes:\n  - name: n\n"
    "    gpus: {model: RTX 4090, count: 1}\n    psu: {watts: 300}\n"
)


def _steps() -> list[dict]:  # type: ignore[type-arg]
    return list(ACTION["runs"]["steps"])


def _step(name: str) -> dict:  # type: ignore[type-arg]
    [step] = [step for step in _steps() if step.get("name", "").startswith(name)]
    return step


def _env(step: dict, inputs: dict[str, str]) -> dict[str, str]:  # type: ignore[type-arg]
    """The step's environment as the runner sets it: each ``${{ inputs.X }}`` replaced by the input
    given, else its default; ``${{ github.action_path }}`` by this repository."""

    def value(expression: str) -> str:
        name = expression.strip()
        if name == "github.action_path":
            return str(REPO)
        assert name.startswith("inputs."), name
        key = name[len("inputs.") :]
        return inputs.get(key, ACTION["inputs"][key].get("default", ""))

    return {
        key: re.sub(r"\$\{\{(.*?)\}\}", lambda match: value(match.group(1)), str(text))
        for key, text in step.get("env", {}).items()
    }


def test_the_action_is_composite_and_keeps_inputs_out_of_its_scripts() -> None:
    assert ACTION["runs"]["using"] == "composite"
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    for name in re.findall(r"inputs\.([a-z-]+)", text):
        assert name in ACTION["inputs"], name
    for step in _steps():
        if "run" in step:
            assert "${{" not in step["run"], step["run"]  # script injection: inputs come as env only
            assert step["shell"] == "bash"
    upload = _step("Upload SARIF")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "always()" in upload["if"]  # the lint's exit 1 must not skip the upload


def _run_step(step: dict, inputs: dict[str, str], cwd: Path, bin_dir: Path, summary: Path):  # type: ignore[no-untyped-def,type-arg]
    env = {
        **os.environ,
        **_env(step, inputs),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "RIGCHECK_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _lint_as_the_action_does(bin_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "rigs").mkdir(parents=True)
    (repo / "rigs" / "tiny.yaml").write_text(RIG)
    summary = tmp_path / "summary.md"
    done = _run_step(_step("rigcheck lint"), {"args": "--fail-on warn"}, repo, bin_dir, summary)
    assert done.returncode == 1, done.stderr  # the PSU is far too small
    assert "::error file=rigs/tiny.yaml" in done.stdout  # annotations on the spec's lines
    sarif = json.loads((repo / ACTION["inputs"]["sarif-file"]["default"]).read_text())
    codes = {result["ruleId"] for result in sarif["runs"][0]["results"]}
    assert "PWR001" in codes
    assert "PWR001" in summary.read_text()  # the Markdown report in the job summary


def test_the_lint_step_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    _lint_as_the_action_does(Path(sys.executable).parent, tmp_path)


@pytest.mark.slow
def test_the_install_step_installs_rigcheck_from_the_checkout(tmp_path: Path) -> None:
    """The install step, run as written in a fresh virtualenv, gives a rigcheck that lints."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / ("Scripts" if sys.platform == "win32" else "bin")
    done = _run_step(_step("Install rigcheck"), {}, tmp_path, bin_dir, tmp_path / "summary.md")
    assert done.returncode == 0, done.stderr
    assert (bin_dir / "rigcheck").exists()
    _lint_as_the_action_does(bin_dir, tmp_path)


def _holds(commit: str, path: str) -> bool | None:
    """Whether ``commit`` is in this repository's history (an ancestor of HEAD) and holds ``path``;
    None without the history (an sdist)."""
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        return None

    def git(*args: str) -> int:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True).returncode

    return (
        git("merge-base", "--is-ancestor", commit, "HEAD") == 0
        and git("cat-file", "-e", f"{commit}:{path}") == 0
    )


@pytest.mark.parametrize(
    ("document", "pattern", "needs"),
    [
        ("examples/github-actions/rigcheck.yml", r"uses: rigcheck/rigcheck@([0-9a-f]{40})", "action.yml"),
        ("docs/ci.md", r"uses: rigcheck/rigcheck@([0-9a-f]{40})", "action.yml"),
        ("docs/ci.md", r"rev: ([0-9a-f]{40})", ".pre-commit-hooks.yaml"),
        ("docs/plugins.md", r"git\+https://github.com/rigcheck/rigcheck@([0-9a-f]{40})", "pyproject.toml"),
    ],
)
def test_pins_name_a_commit_of_this_repository_that_holds_what_they_use(
    document: str, pattern: str, needs: str
) -> None:
    text = (REPO / document).read_text(encoding="utf-8")
    pins = re.findall(pattern, text)
    assert pins, f"{document} pins no commit"
    assert "v0.1.0" not in text  # no tag that does not exist
    for pin in pins:
        held = _holds(pin, needs)
        if held is None:
            pytest.skip("no git history here (an sdist)")
        assert held, f"{document}: {pin} is not a commit of this repository with {needs}"


def test_the_example_workflow_uses_the_action_and_may_upload() -> None:
    workflow = yaml.safe_load((REPO / "examples/github-actions/rigcheck.yml").read_text(encoding="utf-8"))
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["rigcheck"]["steps"]
    assert any(step.get("uses", "").startswith("rigcheck/rigcheck@") for step in steps)
    assert not any("pip install rigcheck" in step.get("run", "") for step in steps)  # not on PyPI


def test_the_pre_commit_hook_runs_the_console_script() -> None:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert hook["language"] == "python"  # pre-commit pip-installs the repository at rev
    assert hook["entry"].split()[0] in scripts
