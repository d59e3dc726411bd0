"""What the check path imports (python -X importtime): never torch, NVML or numpy, no live side,
no evidence parser without --evidence, and only the renderer asked for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
PAIR = ["specs/rigs/home-2x3090.yaml", "specs/workloads/qwen-1.8b-lora.yaml"]
NEVER = ("torch", "pynvml", "numpy", "rigcheck.live")
RENDERERS = {"text", "json", "sarif", "junit", "github", "markdown"}


SCRIPT = """
import json, sys
from rigcheck.cli import main
code = main(sys.argv[1:])
print(json.dumps({"exit_code": code, "modules": sorted(sys.modules)}))
"""


@pytest.fixture(autouse=True, scope="module")
def _filled_cache() -> None:
    """A run has filled the cache of built-in checkers (rigcheck.core.engine.lazy_checkers), as any run after
    the first has: the runs timed here see the checkers without importing their modules."""
    from rigcheck.core.engine.plugin_manager import PluginHost

    PluginHost(autoload=False).load()


def imported(*args: str) -> set[str]:
    """The modules loaded by ``rigcheck ARGS`` (sys.modules at exit), run under -X importtime, whose
    timing lines show where the time went when this test fails."""
    # the checkout first, then whatever the environment already had (where the dependencies may be)
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "RIGCHECK_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("GITHUB_ACTIONS", None)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", SCRIPT, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "import time:" in result.stderr, result.stderr[-2000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["exit_code"] in (0, 1), result.stderr[-2000:]  # the command ran; 2 would be a usage error
    modules = set(outcome["modules"])
    assert "rigcheck.cli" in modules
    return modules


def renderers(modules: set[str]) -> set[str]:
    return {
        name.rsplit(".", 1)[1] for name in modules if name.startswith("rigcheck.core.report.render.")
    } & RENDERERS


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_check_imports_only_what_it_needs(fmt: str) -> None:
    modules = imported("check", *PAIR, "--format", fmt, "-o", os.devnull)
    assert not {m for m in modules if m.split(".")[0] in NEVER or m.startswith("rigcheck.live")}
    assert renderers(modules) == {fmt}
    assert not {m for m in modules if m.startswith("rigcheck.evidence.parsers.")}


def test_lint_text_imports_no_other_renderer(tmp_path: Path) -> None:
    modules = imported("lint", "specs", "--format", "text", "-o", str(tmp_path / "out.txt"))
    assert renderers(modules) == {"text"}
    assert not {m for m in modules if m.split(".")[0] in NEVER}


def test_evidence_parsers_load_only_with_evidence() -> None:
    modules = imported(
        "check",
        PAIR[0],
        "--evidence",
        "tests/data/tool-outputs/nvcc/cuda-11.1.105.txt",
        "--format",
        "json",
        "-o",
        os.devnull,
    )
    parsers = {m for m in modules if m.startswith("rigcheck.evidence.parsers.")}
    assert parsers and not {m for m in modules if m.split(".")[0] in NEVER}


def test_version_loads_no_checker() -> None:
    modules = imported("--version")
    assert not {m for m in modules if m.startswith("rigcheck.plugins.")}
    assert not {m for m in modules if m.split(".")[0] in NEVER}


def test_evidence_and_probe_from_import_no_torch_nor_nvml(tmp_path: Path) -> None:
    """Reading saved outputs needs neither: ``rigcheck evidence`` stays off the live side, ``probe --from``
    uses its spec builder but never NVML or torch."""
    files = [str(path) for path in sorted((REPO / "tests/data/tool-outputs/node8").iterdir())]
    modules = imported("evidence", *files, "-f", "json", "-o", os.devnull)
    assert not {m for m in modules if m.split(".")[0] in NEVER}
    modules = imported("probe", "--from", *files, "-o", str(tmp_path / "rig.yaml"))
    assert not {m for m in modules if m.split(".")[0] in ("torch", "pynvml", "numpy")}
    assert "rigcheck.live.probe_from" in modules and "rigcheck.live.nvml" in modules  # imported, never called
