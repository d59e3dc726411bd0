"""The checked root keeps the paths it resolves (rigcheck.core.spec.boundary.resolved): each must be what
``os.path.realpath`` gives for it, symlinks, ``..``, missing files and loops included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rigcheck.core.spec import boundary


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository with a linked folder, linked and dangling files, a loop and a link out of it."""
    root = tmp_path / "repo"
    (root / "rigs" / "deep").mkdir(parents=True)
    (root / "rigs" / "a.yaml").write_text("a", encoding="utf-8")
    (root / "rigs" / "deep" / "b.yaml").write_text("b", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.yaml").write_text("c", encoding="utf-8")
    (root / "linked").symlink_to(root / "rigs")  # a folder link
    (root / "relative").symlink_to("rigs/deep")  # a relative folder link
    (root / "rigs" / "to-a.yaml").symlink_to("a.yaml")
    (root / "rigs" / "dangling.yaml").symlink_to("missing.yaml")
    (root / "rigs" / "loop.yaml").symlink_to("loop.yaml")
    (root / "out").symlink_to(outside)
    (root / "rigs" / "up.yaml").symlink_to("../out/c.yaml")
    return root


PATHS = [
    "rigs/a.yaml",
    "rigs/deep/b.yaml",
    "linked/a.yaml",
    "linked/deep/b.yaml",
    "relative/b.yaml",
    "relative/../a.yaml",
    "rigs/to-a.yaml",
    "linked/to-a.yaml",
    "rigs/dangling.yaml",
    "rigs/loop.yaml",
    "out/c.yaml",
    "rigs/up.yaml",
    "rigs/missing.yaml",
    "rigs/a.yaml/inside",
    "rigs/./a.yaml",
    "rigs//a.yaml",
    "rigs/deep/../a.yaml",
    "linked/..",
    "linked/.",
    "rigs/",
    ".",
    "",
]


@pytest.mark.parametrize("relative", [True, False], ids=["relative", "absolute"])
def test_resolved_is_realpath(tree: Path, monkeypatch: pytest.MonkeyPatch, relative: bool) -> None:
    monkeypatch.chdir(tree)
    token = boundary.set_root(tree)
    try:
        for _ in range(2):  # made, then kept
            for path in PATHS:
                asked = path if relative else os.path.join(str(tree), path)
                assert boundary.resolved(asked) == os.path.realpath(asked), asked
                assert boundary.resolved(Path(asked) if asked else asked) == os.path.realpath(asked)
    finally:
        boundary.reset_root(token)


def test_the_root_still_refuses_what_leaves_it(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    token = boundary.set_root(tree)
    try:
        for path in ("rigs/a.yaml", "linked/a.yaml", "relative/b.yaml", "rigs/missing.yaml"):
            assert boundary.outside_reason(path) is None, path
        for path in ("out/c.yaml", "rigs/up.yaml", "linked/up.yaml", "../outside/c.yaml"):
            reason = boundary.outside_reason(path)
            assert reason is not None and "outside the checked root" in reason, path
        assert boundary.outside_reason("rigs/up.yaml").startswith("a symlink to ")  # type: ignore[union-attr]
    finally:
        boundary.reset_root(token)


def test_what_is_kept_lasts_one_run_and_stays_bounded(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path resolved in one run is resolved again in the next (a link changed between runs is
    followed), and what a run keeps stays bounded."""
    monkeypatch.chdir(tree)
    link = tree / "moving.yaml"
    link.symlink_to("rigs/a.yaml")
    token = boundary.set_root(tree)
    try:
        assert boundary.resolved("moving.yaml") == str(tree / "rigs" / "a.yaml")
    finally:
        boundary.reset_root(token)
    link.unlink()
    link.symlink_to("rigs/deep/b.yaml")
    token = boundary.set_root(tree)
    try:
        assert boundary.resolved("moving.yaml") == str(tree / "rigs" / "deep" / "b.yaml")
        monkeypatch.setattr(boundary, "_MOST_RESOLVED", 4)
        for index in range(10):
            assert boundary.resolved(f"rigs/new-{index}.yaml") == str(tree / "rigs" / f"new-{index}.yaml")
        confined = boundary._ROOT.get()
        # at most the bound, and the folders of the path being resolved when it was reached
        assert confined is not None and len(confined.resolved) <= 4 + len((tree / "rigs").parts)
    finally:
        boundary.reset_root(token)
    assert boundary.checked_root() is None
    assert boundary.resolved("moving.yaml") == os.path.realpath("moving.yaml")  # no root: nothing kept


def test_a_nul_in_a_path_raises_as_realpath_does(tree: Path) -> None:
    token = boundary.set_root(tree)
    try:
        with pytest.raises(ValueError, match="null byte"):
            os.path.realpath(str(tree / "a\x00b.yaml"))
        with pytest.raises(ValueError, match="null byte"):
            boundary.resolved(str(tree / "a\x00b.yaml"))
        assert boundary.outside_reason(str(tree / "a\x00b.yaml")) == boundary._NUL
    finally:
        boundary.reset_root(token)
