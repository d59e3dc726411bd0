"""Issue 44, first class: outputs a pull request cannot redirect, forge or leave half written.

Each case is built from scratch in a temporary repository, run under ``GITHUB_ACTIONS=true`` as the
documented workflow runs rigcheck (docs/ci.md), with a fake secret outside the repository that no
case may change. Each failed on the code before the change: the report was written through a
committed link, a forged report survived an exit-2 run, two outputs overwrote each other, and an
impossible output was an internal error after all the work.
"""

from __future__ import annotations

import json
import os
import stat
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from rigcheck.cli import main
from tests.conftest import HOSTILE_SECRET as SECRET
from tests.test_hostile import RIG

FORMATS = ("json", "sarif", "junit", "markdown", "html", "github", "text")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_clean_line(err: str) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err


@pytest.mark.parametrize("name", ["rigcheck.sarif", "report.json", "junit.xml", "summary.md"])
def test_a_committed_link_is_replaced_not_written_through(actions, capsys, name: str) -> None:  # type: ignore[no-untyped-def]
    root, secret = actions
    (root / name).symlink_to(secret)
    fmt = {"rigcheck.sarif": "sarif", "report.json": "json", "junit.xml": "junit", "summary.md": "markdown"}[
        name
    ]
    code, _, err = run(capsys, "lint", "-f", fmt, "-o", name, "-f", "github")
    assert code in (0, 1), err
    assert secret.read_text(encoding="utf-8") == SECRET
    assert not (root / name).is_symlink() and (root / name).is_file()
    assert SECRET.strip() not in (root / name).read_text(encoding="utf-8")


def test_a_baseline_written_to_a_committed_link_leaves_its_target(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, secret = actions
    (root / ".rigcheck-baseline.json").symlink_to(secret)
    code, _, err = run(capsys, "lint", "--create-baseline", ".rigcheck-baseline.json")
    assert code == 0, err
    assert secret.read_text(encoding="utf-8") == SECRET
    assert json.loads((root / ".rigcheck-baseline.json").read_text(encoding="utf-8"))["rigcheck_baseline"]


def test_a_folder_linked_out_of_the_repository_is_refused_before_any_work(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, secret = actions
    (root / "reports").symlink_to(secret.parent, target_is_directory=True)
    code, out, err = run(capsys, "lint", "-f", "sarif", "-o", "reports/rigcheck.sarif")
    assert code == 2 and out == ""
    _one_clean_line(err)
    assert "link out of the checked repository" in err
    assert sorted(p.name for p in secret.parent.iterdir()) == [".bashrc"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_exit_2_run_replaces_a_forged_report(actions, capsys, fmt: str) -> None:  # type: ignore[no-untyped-def]
    """A pull request commits a forged green report and a config error: the report an ``if: always()``
    upload step then reads says that nothing was checked."""
    root, _ = actions
    forged = root / f"report.{fmt}"
    forged.write_text('{"runs": [{"results": []}], "verdict": "pass"}\n', encoding="utf-8")
    (root / ".rigcheck.yaml").write_text("select: 5\n", encoding="utf-8")
    code, _, err = run(capsys, "lint", "-f", fmt, "-o", str(forged.name))
    assert code == 2 and "CONFIG001" in err
    text = forged.read_text(encoding="utf-8")
    assert "nothing was checked" in text and '"verdict": "pass"' not in text
    if fmt in ("json", "sarif"):
        document = json.loads(text)
        if fmt == "sarif":
            [invocation] = document["runs"][0]["invocations"]
            assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
        else:
            assert document["exit_code"] == 2
    if fmt == "junit":
        assert ElementTree.fromstring(text).get("errors") == "1"
    if fmt == "github":
        assert text.startswith("::error ") and text.count("\n") == 1


def test_the_reason_in_a_failed_report_is_escaped(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    (root / ".rigcheck.yaml").write_text(
        'select: "\\n::error file=README.md::pwned\\u202e"\n', encoding="utf-8"
    )
    code, _, _ = run(capsys, "lint", "-f", "github", "-o", "annotations.txt", "-f", "markdown", "-o", "s.md")
    assert code == 2
    annotations = (root / "annotations.txt").read_text(encoding="utf-8")
    assert annotations.count("\n") == 1 and "\n::" not in annotations and "\u202e" not in annotations


def test_a_spec_that_does_not_load_in_check_replaces_the_report(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    (root / "bad.yaml").write_text(RIG.replace("L40S", "RTX 4090 Ti"), encoding="utf-8")
    (root / "out.sarif").write_text("forged\n", encoding="utf-8")
    code, _, err = run(capsys, "check", "bad.yaml", "-f", "sarif", "-o", "out.sarif")
    assert code == 2 and "SPEC013" in err
    assert json.loads((root / "out.sarif").read_text(encoding="utf-8"))["runs"][0]["invocations"]


@pytest.mark.parametrize(
    ("outputs", "said"),
    [
        (["-f", "json", "-o", "a.json", "-f", "sarif", "-o", "./a.json"], "name the same file"),
        (["-f", "json", "-o", "missing/a.json"], "does not exist"),
        (["-f", "json", "-o", "."], "a folder"),
        (["-f", "json", "-o", "rig.yaml/x.json"], "Not a directory"),
    ],
)
def test_an_impossible_output_is_a_usage_error_before_any_work(actions, capsys, outputs, said: str) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    before = sorted(p.name for p in root.iterdir())
    code, out, err = run(capsys, "lint", *outputs)
    assert code == 2 and out == ""
    _one_clean_line(err)
    assert said in err
    assert sorted(p.name for p in root.iterdir()) == before


def test_a_fifo_output_is_refused_without_blocking(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    os.mkfifo(root / "pipe.json")
    code, _, err = run(capsys, "lint", "-f", "json", "-o", "pipe.json")
    assert code == 2 and "not a regular file" in err
    _one_clean_line(err)


def test_a_full_device_is_one_line(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    code, _, err = run(capsys, "lint", "-f", "json", "-o", "/dev/full")
    assert code == 2 and "cannot write /dev/full" in err
    _one_clean_line(err)


def test_dev_null_is_still_an_output(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, "lint", "-f", "json", "-o", os.devnull)
    assert code in (0, 1) and out == "", err


def test_a_report_cut_short_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """What a run killed while writing leaves: the previous report whole, never half of the new one."""
    from rigcheck.commands._shared import emit
    from rigcheck.core.engine.errors import UsageError

    target = tmp_path / "report.json"
    target.write_text("previous\n", encoding="utf-8")

    def parts():  # type: ignore[no-untyped-def]
        yield '{"half": '
        raise OSError(28, "No space left on device")

    with pytest.raises(UsageError, match="No space left"):
        emit(parts(), str(target))
    assert target.read_text(encoding="utf-8") == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_replaced_report_is_readable_as_a_new_file_would_be(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    code, _, _ = run(capsys, "lint", "-f", "json", "-o", "r.json")
    assert code in (0, 1)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((root / "r.json").stat().st_mode) == 0o644 & ~mask
