"""The wheel carries the catalog, reference specs and schemas: build it, install it into a fresh
virtualenv and run ``rigcheck check`` from there (outside the source tree)."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .conftest import REPO


@pytest.mark.slow
def test_wheel_installs_and_checks_shipped_specs(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    [wheel] = dist.glob("rigcheck-*.whl")
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    for packaged in (
        "rigcheck/_data/specs/hardware/gpus.yaml",
        "rigcheck/_data/specs/rigs/home-2x3090.yaml",
        "rigcheck/_data/schemas/report.schema.json",
        "rigcheck/_data/specs/rules/platform.yaml",
    ):
        assert packaged in names
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    rigcheck = python.parent / "rigcheck"
    result = subprocess.run(
        [str(rigcheck), "check", "home-2x3090", "qwen-1.8b-law-lora", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stderr  # 1: the shipped plan misses its run hours (BW003)
    report = json.loads(result.stdout)
    statuses = {check["name"]: check["status"] for check in report["checkers"]}
    reasons = {check["name"]: check.get("reason") or "" for check in report["checkers"]}
    elsewhere = {name for name, reason in reasons.items() if reason.startswith("not applicable")}
    assert elsewhere and all(name.startswith("rocm.") for name in elsewhere)  # an NVIDIA rig: no AMD GPU
    assert {
        status
        for name, status in statuses.items()
        if not name.startswith("evidence.") and name not in elsewhere
    } == {"ran"}
    assert {status for name, status in statuses.items() if name.startswith("evidence.")} == {
        "skipped"
    }  # no --evidence
    assert "site-packages" in report["inputs"][0]["path"]  # read from the wheel, not the checkout
    assert {f["code"] for f in report["findings"]} >= {"PLT001", "PLT002", "PLT003", "MEM001", "BW003"}


@pytest.mark.slow
def test_sdist_and_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    """``python -m build`` makes both, and ``twine check`` (PyPI's own rendering of the README as the
    long description, and the metadata) accepts them: what publishing needs."""
    pytest.importorskip("twine")
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    built = sorted(path.name for path in dist.iterdir())
    assert [name.endswith(".tar.gz") for name in built].count(True) == 1
    assert [name.endswith(".whl") for name in built].count(True) == 1
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2
