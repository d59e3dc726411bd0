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


def _stdin(monkeypatch, text: str) -> None:  # type: ignore[no-untyped-def]
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))


def test_quiet_lists_exactly_the_warnings_and_failures(run_cli) -> None:  # type: ignore[no-untyped-def]
    report = run_cli("check", *PAIR, "-f", "json").json()
    quiet = run_cli("check", *PAIR, "-q")
    assert quiet.exit_code == 1
    listed = [line.split()[:2] for line in quiet.out.splitlines() if line.startswith("  ") and line[2] != " "]
    marks = {"✗": "fail", "!": "warn", "XX": "fail", "!!": "warn"}
    assert collections.Counter((code, marks[mark]) for mark, code in listed) == _counts(report)
    assert "passed" not in quiet.out and "rigcheck 0." not in quiet.out  # no header, no summary
    clean = run_cli("check", "dgx-h100", "-q", "--select", "PWR001")
    assert clean.exit_code == 0 and clean.out == ""


def test_lint_exclude_and_extend_exclude(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rig = "apiVersion: rigcheck/v1\nkind: Rig\nname: {}\nnodes:\n  - name: n\n    gpus: {{model: RTX 4090, count: 1}}\n"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "rig.yaml").write_text(rig.format(folder))
    (tmp_path / ".rigcheck.yaml").write_text("exclude: [a]\n")
    monkeypatch.chdir(tmp_path)

    def subjects(*extra: str) -> set[str]:
        runs = run_cli("lint", ".", "-f", "json", *extra).json()["runs"]
        return {run["rig"].split("/")[0] for run in runs}

    assert subjects() == {"b"}  # the config's exclude
    assert subjects("--exclude", "b") == {"a"}  # replaces it
    assert subjects("--extend-exclude", "b") == set()  # adds to it
    assert subjects("--exclude", "a,b") == set()
    monkeypatch.chdir(tmp_path / "b")  # a command-line glob is relative to the working folder
    assert {
        run["rig"] for run in run_cli("lint", "..", "--exclude", "rig.yaml", "-f", "json").json()["runs"]
    } == set()


def test_stdin_spec_is_read_as_the_file_it_stands_for(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``-`` reads standard input; ``--stdin-filename`` names it in locations, and its bytes are read
    instead of the file's (ruff's --stdin-filename): the same findings as the file, at the same places."""
    monkeypatch.chdir(tmp_path)
    text = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: piped\nnodes:\n  - name: n\n"
        "    gpus: {model: RTX 4090, count: 1}\n    psu: {watts: 300}\n"
    )
    (tmp_path / "rig.yaml").write_text(text)
    from_file = run_cli("check", "rig.yaml", "-f", "json").json()
    _stdin(monkeypatch, text)
    from_stdin = run_cli("check", "-", "--stdin-filename", "rig.yaml", "-f", "json").json()
    assert [(f["code"], f["severity"], f["message"], f["location"]) for f in from_stdin["findings"]] == [
        (f["code"], f["severity"], f["message"], f["location"]) for f in from_file["findings"]
    ]
    # the piped text wins over the file of that name, and a problem is placed by it
    _stdin(monkeypatch, text.replace("count: 1", "count: one"))
    bad = run_cli("validate", "-", "--stdin-filename", "rig.yaml")
    assert bad.exit_code == 2 and bad.out.startswith("rig.yaml:6:") and "/nodes/0/gpus/count" in bad.out
    _stdin(monkeypatch, text)
    plain = run_cli("validate", "-")
    assert plain.exit_code == 0 and plain.out.startswith("<stdin>: valid Rig 'piped'")
    _stdin(monkeypatch, text)
    linted = run_cli("lint", "-", "--stdin-filename", "rig.yaml", "-f", "json").json()
    assert [run["rig"] for run in linted["runs"]] == ["rig.yaml"]
    assert run_cli("check", "-", "-").exit_code == 2  # one standard input for one spec


def test_stdin_over_the_cap_is_one_line_and_exit_2(run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RIGCHECK_MAX_SPEC_BYTES", "100")
    _stdin(monkeypatch, "x" * 101)
    result = run_cli("validate", "-")
    assert result.exit_code == 2 and "over 100 bytes" in result.err and len(result.err.splitlines()) == 1


def test_every_format_is_in_the_help_of_check_and_lint(run_cli, builtin_registry) -> None:  # type: ignore[no-untyped-def]
    import re

    for command in ("check", "lint"):
        text = " ".join(run_cli(command, "--help").out.split())
        listed = re.search(r"report format: ([a-z, ]+) \(or a plugin's\)", text)
        assert listed, text
        assert sorted(listed.group(1).split(", ")) == sorted(builtin_registry.formats)


def test_bash_completion_completes_commands_options_and_formats(run_cli, tmp_path, builtin_registry) -> None:  # type: ignore[no-untyped-def]
    import shutil
    import subprocess

    import pytest

    script = run_cli("completion", "bash").out
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    path = tmp_path / "rigcheck.bash"
    path.write_text(script)

    def complete(*words: str) -> set[str]:
        line = " ".join(f"'{word}'" for word in words)
        probe = (
            f"source {path}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _rigcheck; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
        return set(done.stdout.split())

    from rigcheck.cli import COMMANDS

    assert complete("rigcheck", "") >= set(COMMANDS)
    assert complete("rigcheck", "li") == {"lint"}
    assert complete("rigcheck", "check", "-f", "") == set(builtin_registry.formats)
    assert complete("rigcheck", "lint", "--ext") == {"--extend-select", "--extend-exclude"}
    assert complete("rigcheck", "validate", "--format", "") == {"text", "json"}
    assert "--stdin-filename" in complete("rigcheck", "check", "--")


def test_zsh_and_fish_scripts_name_every_command_and_option(run_cli) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.cli import COMMANDS

    bash = run_cli("completion", "bash").out
    zsh = run_cli("completion", "zsh").out
    assert zsh.startswith("#compdef rigcheck") and bash in zsh  # zsh runs the bash function via bashcompinit
    fish = run_cli("completion", "fish").out
    for command in COMMANDS:
        assert f"-a {command} " in fish
    assert "'__fish_seen_subcommand_from lint' -l extend-exclude -r -F" in fish
    assert run_cli("completion", "tcsh").exit_code == 2


def test_a_plugins_format_name_cannot_run_code_when_completing() -> None:
    """bash's ``compgen -W`` and fish's ``complete -a`` expand their words: a format named ``$(...)`` or
    ``(...)`` is left out of the scripts, the others stay."""
    from rigcheck.commands.completion import bash_script, commands, fish_script

    found = commands(["text", "$(touch /tmp/owned)", "(rm -rf ~)", "site-report"])
    for script in (bash_script(found), fish_script(found)):
        assert "touch" not in script and "rm -rf" not in script
        assert "site-report" in script
