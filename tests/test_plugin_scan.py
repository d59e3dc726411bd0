"""Issue 20: ``rigcheck rules`` and ``explain`` without importing ``importlib.metadata`` when no
installed distribution declares a ``rigcheck`` entry point (the walk is conservative: anything it
cannot read itself sends it back to ``importlib.metadata``)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from rigcheck.core.engine import plugin_env


@pytest.fixture
def only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """sys.path of just one folder, and only the standard finders."""
    from importlib.machinery import PathFinder

    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder)])
    monkeypatch.setattr(sys, "meta_path", [PathFinder])
    return folder


def _dist(folder: Path, name: str, entry_points: str | None, suffix: str = ".dist-info") -> None:
    info = folder / f"{name}-1.0{suffix}"
    info.mkdir()
    (info / "METADATA").write_text(f"Name: {name}\nVersion: 1.0\n", encoding="utf-8")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def test_no_rigcheck_section_means_no_plugins(only: Path) -> None:
    _dist(only, "tool", "[console_scripts]\ntool = tool:main\n")
    _dist(only, "plain", None)
    _dist(only, "other", "[pytest11]\nrigcheck = other.plugin\n")  # the name elsewhere is not the group
    assert plugin_env.may_have_plugins() is False
    assert plugin_env.installed_plugin_names() == []


@pytest.mark.parametrize("header", ["[rigcheck]", "  [ rigcheck ]  "])
@pytest.mark.parametrize("suffix", [".dist-info", ".egg-info"])
def test_a_rigcheck_section_is_seen(only: Path, header: str, suffix: str) -> None:
    _dist(only, "site-policy", f"[console_scripts]\nx = y:z\n\n{header}\nsite_policy = site_policy\n", suffix)
    assert plugin_env.may_have_plugins() is True  # a header importlib.metadata may read: it decides
    if header == "[rigcheck]":
        assert "site_policy" in plugin_env.installed_plugin_names()


def test_a_zip_on_the_path_or_another_finder_is_left_to_importlib_metadata(
    only: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = only.parent / "eggs.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("x.py", "")
    monkeypatch.setattr(sys, "path", [str(only), str(archive)])
    assert plugin_env.may_have_plugins() is True
    monkeypatch.setattr(sys, "path", [str(only)])

    class Finder:
        @staticmethod
        def find_distributions(context: object = None) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert plugin_env.may_have_plugins() is True


def test_an_entry_points_file_that_is_not_a_regular_file_is_not_opened(only: Path) -> None:
    """The working directory can be on sys.path: a FIFO there must not hang the walk."""
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    info = only / "trap-1.0.dist-info"
    info.mkdir()
    os.mkfifo(info / "entry_points.txt")
    assert plugin_env.may_have_plugins() is True  # left to importlib.metadata, unread here
