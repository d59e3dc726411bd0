"""Issue 48's acceptance: the newcomer walk-through (docs/walkthrough.md: install, a Hugging Face id's
estimate, the pod's one-file self-check to a rig spec, the check, the lint the Action runs) runs as
written. Every ``rigcheck`` command of the page's shell blocks runs in order, in a folder holding the
page's files; what the page leaves to other tools (pip, ssh, hf) is stood in for: a Hugging Face cache
holding Mistral-7B-v0.3's config.json and the pod's saved outputs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from .conftest import REPO
from .test_hf_model_ids import PARAMS, _cache
from .test_one_file_pod_check import DF, PIP, SMI

PAGE = (REPO / "docs" / "walkthrough.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE, flags=re.S)


def _action_lint_line() -> str:
    """The lint command of action.yml with its inputs' defaults, as the runner expands it."""
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    step = next(step for step in action["runs"]["steps"] if step.get("name") == "rigcheck lint")
    defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    env = {
        key: re.sub(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", lambda m: defaults[m.group(1)], str(value))
        for key, value in step["env"].items()
    }
    line = re.sub(r"\$([A-Z_]+)", lambda m: env[m.group(1)], step["run"]).replace('"', "")
    return " ".join(line.split())


def test_the_walkthrough_runs_as_written(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # a repository: the checked root
    monkeypatch.setenv("HF_HUB_CACHE", str(_cache(tmp_path / "hf")))  # `hf download ... config.json`
    (tmp_path / "pod.txt").write_text(
        SMI + DF + PIP
    )  # `ssh root@POD "nvidia-smi && df -h && pip show torch"`
    for block in _blocks("yaml"):
        first, _, body = block.partition("\n")
        if first.startswith("# file: "):
            path = tmp_path / first[len("# file: ") :].strip()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
    for line in (line for block in _blocks("sh") for line in block.splitlines()):
        if line.startswith("mkdir -p "):  # the shell's part
            for folder in shlex.split(line)[2:]:
                (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    commands = [
        line for block in _blocks("sh") for line in block.splitlines() if line.startswith("rigcheck ")
    ]
    assert [shlex.split(c)[1] for c in commands] == ["estimate", "evidence", "probe", "check", "lint"]
    said = {}
    for command in commands:
        words = shlex.split(command)
        result = run_cli(*words[1:])
        assert result.exit_code in (0, 1), f"{command}: {result.err}"
        said[words[1]] = result
    assert f"{PARAMS / 1e9:.3f}B" in said["estimate"].out  # 7.248B parameters, read from the cache
    assert (tmp_path / "rigs" / "pod.yaml").is_file()
    assert said["check"].exit_code == 1 and "CUDA004" in said["check"].out  # the +cpu torch on the GPUs
    assert (tmp_path / "rigcheck.sarif").is_file() and "::error" in said["lint"].out


def test_the_pages_lint_line_is_the_actions_and_its_pin_is_the_examples() -> None:
    [lint] = [
        line for block in _blocks("sh") for line in block.splitlines() if line.startswith("rigcheck lint")
    ]
    assert lint == _action_lint_line()
    pins = set(re.findall(r"rigcheck/rigcheck@([0-9a-f]{40})", PAGE))
    example = (REPO / "examples" / "github-actions" / "rigcheck.yml").read_text(encoding="utf-8")
    assert pins and pins <= set(re.findall(r"rigcheck/rigcheck@([0-9a-f]{40})", example))


def test_a_spec_written_into_a_missing_folder_is_one_line_and_exit_2(
    run_cli, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The walk-through found it: ``probe --from pod.txt -o rigs/pod.yaml`` before ``mkdir rigs`` was an
    "internal error"; the boundary's refusal is now one line naming the file, as every bad input is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.txt").write_text(SMI + DF + PIP)
    result = run_cli("probe", "--from", "pod.txt", "-o", "rigs/pod.yaml")
    assert result.exit_code == 2 and "internal error" not in result.err
    assert result.err.strip().splitlines() == [result.err.strip()] and "rigs/pod.yaml" in result.err
