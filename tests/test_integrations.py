"""The pre-commit hook and the GitHub Actions example call rigcheck the way its CLI accepts."""

from __future__ import annotations

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
    workflow = yaml.load(
        (REPO / "examples/github-actions/rigcheck.yml").read_text(encoding="utf-8"), yaml.BaseLoader
    )
    steps = workflow["jobs"]["rigcheck"]["steps"]
    lint = next(step for step in steps if step.get("name") == "Lint specs")
    argv = shlex.split(lint["run"])
    args = build_parser().parse_args(argv[1:])
    assert args.command == "lint"
    pairs = dict(zip(args.format, args.output, strict=False))  # formats pair with outputs by position
    upload = next(step for step in steps if "upload-sarif" in step.get("uses", ""))
    assert pairs["sarif"] == upload["with"]["sarif_file"]
    assert args.format[len(args.output) :] == ["github"]  # the one format on standard output
    assert upload["if"] == "always()"
    assert workflow["permissions"]["security-events"] == "write"


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
