"""Issue 44, fourth class: every string through the one escape layer, in every command.

Each case is built from scratch under ``GITHUB_ACTIONS=true``: a spec key or file name, a plugin's
rule docs or catalog entry holding a forged workflow command, an ANSI escape, an OSC 8 link and a
bidirectional override. No line of any output may start a workflow command rigcheck did not write, or
carry a raw control or bidi character; Markdown forms no bare link; JUnit carries no bidi control.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from rigcheck.cli import main
from tests.test_hostile import RIG

FORGED = "x\n::error file=README.md,line=1,title=pwned::injected"
NASTY = FORGED + "\n::add-mask::s\n::stop-commands::t\x1b[31m\x1b]8;;https://evil.example\x07link\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


#: The workflow commands rigcheck writes itself (``-f github``): one annotation a line.
OWN_COMMAND = re.compile(r"^::(error|warning|notice) (file=[^:]*,)?[^:]*title=rigcheck [^:]*::")


def _clean(*texts: str) -> None:
    """No raw control or bidi character, and no line that starts a workflow command rigcheck did not
    write (its own annotations carry the rest escaped, ``%0A`` for a line break)."""
    for text in texts:
        assert not RAW.search(text), repr(RAW.search(text))
        for line in text.splitlines():
            assert not line.lstrip().startswith("::") or OWN_COMMAND.match(line), line
            assert "##[" not in line, line


def _yaml_key(text: str) -> str:
    return json.dumps(text)  # a double-quoted YAML scalar is JSON's string syntax


def test_validate_escapes_a_hostile_key(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    (root / "bad.yaml").write_text(RIG + f"    {_yaml_key(NASTY)}: 1\n", encoding="utf-8")
    code, out, err = run(capsys, "validate", "bad.yaml")
    assert code == 2
    _clean(out, err)
    assert "unknown field" in out + err


def test_validate_json_escapes_a_hostile_key(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    (root / "bad.yaml").write_text(RIG + f"    {_yaml_key(NASTY)}: 1\n", encoding="utf-8")
    code, out, err = run(capsys, "validate", "bad.yaml", "-f", "json")
    assert code == 2
    _clean(out, err)
    assert json.loads(out)[0]["errors"]


@pytest.mark.skipif(sys.platform == "win32", reason="a line break in a file name")
def test_a_hostile_file_name_is_escaped(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    name = "r\n::error file=README.md::pwned\u202e.yaml"
    (root / name).write_text(RIG.replace("L40S", "RTX 4090 Ti"), encoding="utf-8")
    for args in (("validate", name), ("check", name), ("lint", "-f", "text")):
        code, out, err = run(capsys, *args)
        assert code in (1, 2), (args, err)
        _clean(out, err)


def test_a_hostile_key_in_lint_and_check_is_escaped(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    (root / "bad.yaml").write_text(RIG + f"    {_yaml_key(NASTY)}: 1\n", encoding="utf-8")
    for fmt in ("text", "github", "markdown"):
        code, out, err = run(capsys, "lint", "-f", fmt)
        assert code == 1, err
        _clean(out, err)
    code, out, err = run(capsys, "check", "bad.yaml")
    assert code == 2
    _clean(out, err)


PLUGIN = """
from rigcheck import Checker, Rule, RuleDocs, Severity, hookimpl

NASTY = {nasty!r}
DOCS = RuleDocs(what=NASTY, why=NASTY, example=NASTY, fix=NASTY, references=("https://evil.example/" + NASTY,))
RULE = Rule(code="EVIL001", name="evil", summary=NASTY, severity=Severity.WARN, docs=DOCS)


class Evil(Checker):
    name = "evil"
    rules = (RULE,)

    def check(self, ctx):
        yield RULE.warned(NASTY + " see https://evil.example/x and www.evil.example", location=ctx.rig_at("/name"))


@hookimpl
def rigcheck_checkers(register):
    register(Evil())


@hookimpl
def rigcheck_catalog(register):
    register({{"id": "evil-x1", "name": "Evil X1 " + NASTY[:20].replace(chr(10), " ") + chr(0x202e),
              "vendor": "nvidia", "architecture": "Hopper", "compute_capability": "9.0",
              "memory_gib": 80, "source": "https://evil.example/" + NASTY, "as_of": "2026-11-01"}})
"""


@pytest.fixture
def evil_plugin(actions, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "evil_plugin.py").write_text(PLUGIN.format(nasty=NASTY), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    yield actions
    sys.modules.pop("evil_plugin", None)


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "EVIL001"),
        ("rules",),
        ("rules", "--format", "json"),
        ("gpus",),
        ("gpus", "--format", "json"),
        ("plugins", "--all"),
    ],
)
def test_a_plugins_docs_and_catalog_are_escaped(evil_plugin, capsys, args) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, *args, "-p", "evil_plugin")
    assert code == 0, err
    _clean(out, err)


@pytest.mark.parametrize("fmt", ["markdown", "junit", "html", "sarif", "json", "github", "text"])
def test_a_plugins_findings_are_escaped_in_every_format(evil_plugin, capsys, fmt: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, "lint", "-p", "evil_plugin", "-f", fmt)
    assert code in (0, 1), err
    if fmt == "html":
        assert "\u202e" not in out and "\x1b" not in out
        return
    _clean(out, err)
    if fmt == "markdown":
        assert "https://" not in out and "www.evil" not in out  # GitHub links bare URLs
    if fmt == "junit":
        ElementTree.fromstring(out)
