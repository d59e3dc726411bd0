"""The pre-commit hook and the GitHub Actions example call rigcheck the way its CLI accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from rigcheck.cli import build_parser

REPO = Path(__file__).parents[1]


def test_pre_commit_hook() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(hook for hook in hooks if hook["id"] == "rigcheck")
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    args = build_parser().parse_args(shlex.split(hook["entry"])[1:])
    assert args.command == "lint"


def test_github_actions_example_uploads_the_sarif_it_writes() -> None:
    """The example workflow runs the action at the repository root (action.yml), whose lint step writes the
    SARIF file its upload step sends, with annotations on standard output."""
    workflow = yaml.load(
        (REPO / "examples/github-actions/rigcheck.yml").read_text(encoding="utf-8"), yaml.BaseLoader
    )
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["rigcheck"]["steps"]
    assert any(step.get("uses", "").startswith("rigcheck/rigcheck@") for step in steps)
    action = yaml.load((REPO / "action.yml").read_text(encoding="utf-8"), yaml.BaseLoader)
    inputs = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    lint = next(step for step in action["runs"]["steps"] if step.get("name") == "rigcheck lint")
    env = {
        key: re.sub(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", lambda m: inputs[m.group(1)], value)
        for key, value in lint["env"].items()
    }
    argv = shlex.split(_expand(lint["run"], env))
    args = build_parser().parse_args(argv[1:])
    assert args.command == "lint"
    pairs = dict(zip(args.format, args.output, strict=False))  # formats pair with outputs by position
    upload = next(step for step in action["runs"]["steps"] if "upload-sarif" in step.get("uses", ""))
    assert pairs["sarif"] == inputs["sarif-file"] and "inputs.sarif-file" in upload["with"]["sarif_file"]
    assert args.format[len(args.output) :] == ["github"]  # the one format on standard output
    assert "always()" in upload["if"]


def _expand(command: str, env: dict[str, str]) -> str:
    """``$NAME`` and ``"$NAME"`` of ``command`` replaced from ``env``, as bash expands them."""
    return re.sub(r"\$([A-Z_]+)", lambda m: env.get(m.group(1), ""), command)


def test_each_output_writes_the_format_just_before_it(builtin_registry, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`-f github -f sarif -o r.sarif` once wrote the github annotations into r.sarif (by position)."""
    from rigcheck.commands._options import output_files
    from rigcheck.commands.reporting import report_outputs

    def outputs(argv: list[str]) -> list[tuple[str, str | None]]:
        args = build_parser().parse_args(argv)
        return [
            (out.format, out.path)
            for out in report_outputs(args.format, output_files(args), builtin_registry)
        ]

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    argv = ["lint", "-f", "github", "-f", "sarif", "-o", "r.sarif", "-f", "json", "-o", "r.json"]
    assert outputs(argv) == [("github", None), ("sarif", "r.sarif"), ("json", "r.json")]
    assert outputs(["lint", "-o", "r.txt"]) == [("text", "r.txt")]  # no --format: the default one
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["lint", "-f", "sarif", "-o", "a.sarif", "-o", "b.sarif"])
    assert exc.value.code == 2
