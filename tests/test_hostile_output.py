"""A pull request is hostile input (issue 15): strings from specs, paths and plugins reach every
output escaped for it. No raw ESC, BEL or other control byte; no line that the Actions runner
reads as a workflow command (``::`` at the start, ``##[`` anywhere) unless rigcheck wrote it; no
Markdown link, image or HTML built from spec text; JSON without NaN or Infinity; JUnit that is XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rigcheck.core.engine.findings import Finding
from rigcheck.core.report.render import RenderOptions

INJECTED = "\n::error file=README.md::pwned"
NODE = "bo\x1b[31mx\x07" + INJECTED  # a node name: every power finding starts "node NAME: ..."
NODE_TEXT = "bo\\x1b[31mx\\x07\\n::error file=README.md::pwned"  # how the text format shows it
LINKS = "[x](javascript:alert(1)) ![y](http://evil/) <img src=x onerror=alert(1)>"

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and LF, DEL, C1
OWN_SGR = re.compile(r"\x1b\[(?:[0-9;]+)m")  # rigcheck's own colours (--color always)


def rig(node: str = NODE, *, extra: str = "") -> str:
    """2 x RTX 3090 on an 800 W PSU (PWR001 fails), with ``node`` as the node's name; JSON strings
    are YAML double-quoted scalars, so any character can be written."""
    return (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: hostile\nnodes:\n"
        f"  - name: {json.dumps(node)}\n"
        "    gpus: {model: RTX 3090, count: 2}\n    cpu: {cores: 16, tdp_w: 100}\n    memory_gib: 128\n"
        f"    psu: {{watts: 800}}\n{extra}"
    )


def command_lines(text: str) -> list[str]:
    """Lines the Actions runner would run as workflow commands: ``::`` after leading whitespace
    (``TryParseV2`` trims it), or the legacy ``##[`` anywhere (``TryParse``)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


@pytest.fixture
def actions(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run as under GitHub Actions (after run_cli, which clears GITHUB_ACTIONS)."""

    def enable() -> None:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)

    return enable


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("rigcheck.commands._shared.report_root", lambda: str(tmp_path))
    return tmp_path


# --- the escape functions --------------------------------------------------------------------------


def test_escape_text_shows_controls_and_keeps_plain_text() -> None:
    from rigcheck.core.report.render.escape import escape_text

    plain = "node ws: 4 x 350 W = 1,650 W (103%): over; C:\\rigs\\a.yaml ✓ Ω 中文"
    assert escape_text(plain) == plain
    assert escape_text("a\x1b[31mb\x07c\x00d\x7fe\x9bf") == "a\\x1b[31mb\\x07c\\x00d\\x7fe\\x9bf"
    assert escape_text("one\ntwo\r\tthree") == "one\\ntwo\\r\\tthree"
    assert (
        escape_text("trojan \u202e source \u2066x\u2069 \u2028")
        == "trojan \\u202e source \\u2066x\\u2069 \\u2028"
    )
    assert escape_text("lone \ud800 surrogate") == "lone \\ud800 surrogate"
    assert escape_text("##[error]x and ##vso[task.complete]") == "##\\x5berror]x and ##vso\\x5btask.complete]"


def test_github_escapes_round_trip_through_the_runner() -> None:
    from rigcheck.core.report.render.escape import (
        escape_github_data,
        escape_github_line,
        escape_github_property,
    )

    def runner_data(text: str) -> str:  # ActionCommand.UnescapeData
        return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")

    def runner_property(text: str) -> str:  # ActionCommand.UnescapeProperty
        return runner_data(text.replace("%3A", ":").replace("%2C", ","))

    text = "50% a:b,c\r\n::error::x %0A"
    assert runner_data(escape_github_data(text)) == text
    assert runner_property(escape_github_property(text)) == text
    assert escape_github_data("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert not set(escape_github_property(text)) & {":", ",", "\n", "\r"}
    assert escape_github_line("::error file=x::y") == "%3A:error file=x::y"
    assert escape_github_line("  ::warning::y\n::error::z") == "  %3A:warning::y%0A::error::z"
    assert escape_github_line("rigs/a.yaml:1:1: error: ##[error]x") == "rigs/a.yaml:1:1: error: ##%5Berror]x"
    plain = "rigs/a.yaml:3:7: error: /nodes/0/name: field required [SPEC010]"
    assert escape_github_line(plain) == plain


def test_markdown_escape_forms_no_link_image_or_html() -> None:
    from rigcheck.core.report.render.escape import escape_markdown

    escaped = escape_markdown(LINKS + " a|b \\[c\x1b")
    assert escaped == (
        "\\[x\\]\\(javascript:alert(1)) \\!\\[y\\]\\(http&#58;//evil/) &lt;img src=x onerror=alert(1)&gt;"
        " a\\|b \\\\\\[c\\\\x1b"
    )
    plain = "node ws: 8 cores for 4 GPU processes x (2 workers + 1) + 3 = 15 needed; see `rigcheck rules`"
    assert escape_markdown(plain) == plain


# --- standard error: problems of loading -------------------------------------------------------------


def test_stderr_pointer_is_escaped_under_github_actions(write_spec, run_cli, actions) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(
        rig("box", extra='    "bad\\n::error file=README.md::pwned\\u001b[2J": 1\n'), "rig.yaml"
    )
    actions()
    result = run_cli("check", path, "--format", "text")
    assert result.exit_code == 2
    assert command_lines(result.err) == []
    assert result.err == (
        f"{path}:10:5: error: /nodes/0/bad%0A::error file=README.md::pwned\\x1b[2J: unknown field "
        "'bad\\n::error file=README.md::pwned\\x1b[2J' [SPEC011]\n"
    )


def test_stderr_config_key_is_escaped_under_github_actions(repo, run_cli, actions) -> None:  # type: ignore[no-untyped-def]
    (repo / ".rigcheck.yaml").write_text('"x\\n::error file=README.md::pwned\\a": 1\n', encoding="utf-8")
    (repo / "rig.yaml").write_text(rig("box"), encoding="utf-8")
    actions()
    result = run_cli("lint")
    assert result.exit_code == 2
    assert command_lines(result.err) == []
    assert result.err == (
        ".rigcheck.yaml:1:1: error: /x%0A::error file=README.md::pwned\\x07: unknown key "
        "'x\\n::error file=README.md::pwned\\x07' [CONFIG001]\n"
    )


def test_stderr_path_cannot_start_a_command_under_github_actions(repo, run_cli, actions) -> None:  # type: ignore[no-untyped-def]
    name = "::error file=README.md::pwned ##[warning]x.yaml"  # a file name in the pull request
    (repo / name).write_text(rig("box").replace("count: 2", "count: two"), encoding="utf-8")
    actions()
    result = run_cli("check", name)
    assert result.exit_code == 2
    assert command_lines(result.err) == []
    assert result.err.startswith("%3A:error file=README.md::pwned ##%5Bwarning]x.yaml:6:")


def test_stderr_outside_actions_shows_control_characters(write_spec, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(
        rig("box", extra='    "bad\\n::error file=README.md::pwned\\u001b[2J": 1\n'), "rig.yaml"
    )
    result = run_cli("check", path)
    assert result.exit_code == 2
    assert not CONTROL.search(result.err)
    assert result.err == (
        f"{path}:10:5: error: /nodes/0/bad\\n::error file=README.md::pwned\\x1b[2J: unknown field "
        "'bad\\n::error file=README.md::pwned\\x1b[2J' [SPEC011]\n"
    )


# --- the formats -------------------------------------------------------------------------------------


def test_text_format_escapes_spec_strings(write_spec, run_cli, actions) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(rig(), "rig.yaml")
    actions()
    for color in ("never", "always"):
        result = run_cli("check", path, "--format", "text", "--select", "PWR001", "--color", color)
        assert result.exit_code == 1, result.err
        assert not CONTROL.search(OWN_SGR.sub("", result.out)), result.out
        assert command_lines(result.out) == []
    plain = run_cli("check", path, "--format", "text", "--select", "PWR001", "--color", "never").out
    [line] = [line for line in plain.splitlines() if "PWR001 node" in line]
    assert line.endswith(
        f" PWR001 node {NODE_TEXT}: GPUs 2 x 350 W + 100 W CPU + 100 W platform = 900 W on 1 x 800 W "
        "= 800 W (112%): over the rating"
    )


def test_text_format_escapes_pointers_and_legacy_commands(repo, run_cli) -> None:  # type: ignore[no-untyped-def]
    key = '    "bad\\n::error file=README.md::pwned\\u001b[2J ##[error]x": 1\n'
    (repo / "rig.yaml").write_text(rig("box", extra=key), encoding="utf-8")
    result = run_cli("lint", "--format", "text", "--color", "never")
    assert result.exit_code == 1, result.err
    assert not CONTROL.search(result.out) and command_lines(result.out) == []
    assert (
        "      at rig.yaml:10:5  /nodes/0/bad\\n::error file=README.md::pwned\\x1b[2J ##\\x5berror]x\n"
        in result.out
    )


def test_markdown_format_neutralises_links_images_and_html(write_spec, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(rig("w " + LINKS + "\x1b[31m"), "rig.yaml")
    result = run_cli("check", path, "--format", "markdown", "--select", "PWR001")
    assert result.exit_code == 1, result.err
    out = result.out
    for formed in ("](", "![", "<img", "\x1b", "http://"):
        assert formed not in out, formed
    [row] = [line for line in out.splitlines() if "PWR001" in line]
    assert row.startswith(
        "| ❌ | PWR001 | node w \\[x\\]\\(javascript:alert(1)) \\!\\[y\\]\\(http&#58;//evil/) "
        "&lt;img src=x onerror=alert(1)&gt;\\\\x1b\\[31m: GPUs 2 x 350 W"
    ), row


def test_github_format_has_no_raw_control_bytes(write_spec, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(rig(), "rig.yaml")
    result = run_cli("check", path, "--format", "github", "--select", "PWR001")
    assert result.exit_code == 1, result.err
    assert not CONTROL.search(result.out)
    lines = result.out.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "rigcheck:"]
    assert (
        lines[0]
        .split("::", 2)[2]
        .startswith("node bo\\x1b[31mx\\x07%0A::error file=README.md::pwned: GPUs 2 x 350 W")
    )


class Opaque:
    def __str__(self) -> str:
        return "opaque"


@pytest.mark.parametrize(
    ("extra", "message"),
    [({}, "m \x7f\x9b[2J\u2028"), ({"obj": Opaque()}, "m \x7f\x9b[2J\u2028 \ud800")],
    ids=["pydantic-core", "fallback"],
)
def test_json_never_writes_nan_or_infinity(check, extra, message) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.report.render.json import render_json

    report = check(rig("box"), select=("PWR001",))
    evidence = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "set": {2, 1}, **extra}
    finding = report.findings[0].model_copy(update={"evidence": evidence, "message": message})
    text = render_json(report.model_copy(update={"findings": [finding]}), RenderOptions())
    assert not CONTROL.search(text) and "\u2028" not in text
    text.encode("utf-8")

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON report")

    loaded = json.loads(text, parse_constant=refuse)
    expected = {"nan": None, "inf": None, "-inf": None, "set": [1, 2], **({"obj": "opaque"} if extra else {})}
    assert loaded["findings"][0]["evidence"] == expected
    assert loaded["findings"][0]["message"] == message  # the data, exactly (written as \u escapes)


def test_sarif_escapes_messages_and_writes_no_raw_controls(check) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.report.render.sarif import render_sarif

    report = check(rig("box"), select=("PWR001",))
    finding = report.findings[0].model_copy(
        update={"message": "m " + LINKS + " \x1b[31m\x9b2J\u2028", "evidence": {"x": float("nan")}}
    )
    text = render_sarif(report.model_copy(update={"findings": [finding]}), RenderOptions())
    assert not CONTROL.search(text) and "\u2028" not in text
    sarif = json.loads(text, parse_constant=lambda constant: pytest.fail(constant))
    message = sarif["runs"][0]["results"][0]["message"]["text"]
    assert message.startswith(
        "m [x\\](javascript:alert(1)) ![y\\](http://evil/) <img src=x onerror=alert(1)> \\x1b[31m\\x9b2J\\u2028"
    )
    assert not re.search(r"(?<!\\)\]\(", message)  # no unescaped "](": no embedded link


def test_junit_is_well_formed_xml_with_hostile_strings(check) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.report.render.junit import render_junit

    report = check(rig("box"), select=("PWR001",))
    finding: Finding = report.findings[0].model_copy(
        update={
            "message": "m \x1b[31m\x00\ud800\ufffe",
            "code": "EVIL\x0b1",
            "checker": "evil\x01.x",
            "subject": "s\x07",
        }
    )
    text = render_junit(report.model_copy(update={"findings": [finding]}), RenderOptions())
    text.encode("utf-8")  # no lone surrogate
    root = ET.fromstring(text)
    [case] = root.iter("testcase")
    assert case.get("classname") == "rigcheck.evil\ufffd"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "m \ufffd[31m\ufffd\ufffd\ufffd"
    assert not CONTROL.search(text)
