"""Shared fixtures: spec files written to a temporary folder, and in-process CLI runs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rigcheck.cli import main
from rigcheck.testing import rigcheck_plugins, rigcheck_run  # noqa: F401  (the test kit, also without installing)

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"

MINIMAL_RIG = """\
apiVersion: rigcheck/v1
kind: Rig
name: test-rig
nodes:
  - name: box
    gpus: {model: RTX 3090, count: 2}
    cpu: {cores: 16}
    memory_gib: 64
"""

MINIMAL_WORKLOAD = """\
apiVersion: rigcheck/v1
kind: Workload
name: test-workload
model: {preset: gpt2-124m}
task: pretrain
batch: {micro: 8, seq_len: 1024}
"""


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[[str, str], str]:
    """Write YAML text (dedented) to a file under tmp_path and return its path."""

    def write(text: str, name: str = "spec.yaml") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return str(path)

    return write


@dataclass
class CliResult:
    exit_code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)


@pytest.fixture(autouse=True)
def _no_real_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches the real Hugging Face hub: a model id not in the cache is fetched (estimate and
    plan do so by default) from a port nothing listens on, unless the test sets up a stand-in hub."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run ``rigcheck ARGS...`` in this process; returns exit code, stdout and stderr."""
    monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)

    def run(*args: str) -> CliResult:
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def builtin_registry():  # type: ignore[no-untyped-def]
    from rigcheck.core.engine.plugin_manager import PluginHost

    return PluginHost(autoload=False).load()


@pytest.fixture(scope="session")
def catalog(builtin_registry):  # type: ignore[no-untyped-def]
    from rigcheck.core.engine.engine import build_catalog

    return build_catalog(builtin_registry)


@pytest.fixture
def check(builtin_registry, catalog):  # type: ignore[no-untyped-def]
    """``check(rig_yaml, workload_yaml=None, select=("PLT001",))`` -> Report, with the built-in plugins."""
    from rigcheck.core.engine.engine import RunOptions, run_checks
    from rigcheck.core.spec.documents import parse_spec

    def run(rig: str, workload: str | None = None, select: tuple[str, ...] = (), **options):  # type: ignore[no-untyped-def]
        rig_doc = parse_spec(textwrap.dedent(rig), "rig.yaml")
        workload_doc = parse_spec(textwrap.dedent(workload), "workload.yaml") if workload else None
        return run_checks(
            rig_doc, workload_doc, builtin_registry, catalog, RunOptions(select=select, **options)
        )

    return run


#: A fake secret beside the repository of the hostile suites (tests/test_hostile_*.py): no case may show
#: or change it.
HOSTILE_SECRET = "FAKE-SECRET-DO-NOT-UPLOAD\n"


@pytest.fixture
def actions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A repository under ``tmp_path/repo`` as the working folder, GitHub Actions' variables set, and a
    secret outside it; returns (repo, secret file)."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
    secret = tmp_path / "home" / ".bashrc"
    secret.parent.mkdir()
    secret.write_text(HOSTILE_SECRET, encoding="utf-8")
    from tests.test_hostile import RIG, repo

    root = repo(tmp_path / "repo", {"rig.yaml": RIG})
    monkeypatch.chdir(root)
    return root, secret
