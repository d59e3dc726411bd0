"""Issue 44, second class: reads that stay in the repository.

Each case is built from scratch in a temporary repository under ``GITHUB_ACTIONS=true``, with a fake
secret outside it. Evidence files (``check --evidence``, ``evidence``, ``probe --from``) and project
configs (``.rigcheck.yaml``, ``pyproject.toml``) go through the one read boundary
(:func:`rigcheck.core.spec.boundary.read_named`): a committed link out of the repository is not followed,
only regular files are opened (a FIFO does not block), and each read is capped. A path typed on the
command line outside the repository is the user's own choice and is read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rigcheck.cli import main
from tests.test_hostile import RIG

SECRET = "FAKE-SECRET-TOKEN-1234"
NVIDIA_SMI = Path(__file__).parent / "data" / "tool-outputs"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _refused(code: int, out: str, err: str, said: str) -> None:
    assert code == 2, (out, err)
    assert SECRET not in out and SECRET not in err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    assert said in err, err


@pytest.fixture
def secret(actions):  # type: ignore[no-untyped-def]
    root, bashrc = actions
    bashrc.write_text(f"nvidia-smi\n{SECRET}\n", encoding="utf-8")
    return root, bashrc


@pytest.mark.parametrize(
    "command",
    [
        ("check", "rig.yaml", "--evidence", "ev/nvidia-smi.txt"),
        ("evidence", "ev/nvidia-smi.txt"),
        ("probe", "--from", "ev/nvidia-smi.txt"),
    ],
)
def test_evidence_through_a_committed_link_is_not_read(secret, capsys, command) -> None:  # type: ignore[no-untyped-def]
    root, bashrc = secret
    (root / "ev").mkdir()
    (root / "ev" / "nvidia-smi.txt").symlink_to(bashrc)
    _refused(*run(capsys, *command), "outside the checked root")


def test_a_link_does_not_make_its_target_folder_the_root(secret, capsys) -> None:  # type: ignore[no-untyped-def]
    """`rigcheck evidence LINK` once took the link's target folder (/etc for /etc/passwd) as the root."""
    root, bashrc = secret
    (root / "smi.txt").symlink_to(bashrc)
    _refused(*run(capsys, "evidence", "smi.txt"), "outside the checked root")


@pytest.mark.parametrize("command", [("evidence", "ev.txt"), ("check", "rig.yaml", "--evidence", "ev.txt")])
def test_a_fifo_as_evidence_is_refused_without_blocking(actions, capsys, command) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    os.mkfifo(root / "ev.txt")
    _refused(*run(capsys, *command), "not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_evidence_is_refused(actions, capsys, device: str) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    (root / "ev.txt").symlink_to(device)
    _refused(*run(capsys, "evidence", "ev.txt"), "outside the checked root")
    _refused(*run(capsys, "evidence", device), "not a regular file")


def test_evidence_over_the_cap_is_not_read(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.evidence.loader import MAX_BYTES

    root, _ = actions
    with open(root / "big.txt", "wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: no 20 MiB written
    code, out, err = run(capsys, "evidence", "big.txt")
    assert code in (0, 1) and "limit for evidence files" in out + err


def test_evidence_typed_outside_the_repository_is_read(actions, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "elsewhere" / "nvidia-smi.txt"
    outside.parent.mkdir()
    source = sorted((NVIDIA_SMI / "nvidia-smi-text").iterdir())[0]
    outside.write_bytes(source.read_bytes())
    code, out, err = run(capsys, "evidence", str(outside))
    assert code in (0, 1), err
    assert "outside the checked root" not in err and "nvidia-smi" in out


@pytest.mark.parametrize("name", [".rigcheck.yaml", "pyproject.toml"])
def test_a_config_linked_out_of_the_repository_is_not_read(secret, capsys, name: str) -> None:  # type: ignore[no-untyped-def]
    root, bashrc = secret
    text = f"select: [{SECRET}]\n" if name.endswith(".yaml") else f"[tool.rigcheck]\nselect = ['{SECRET}']\n"
    bashrc.write_text(text, encoding="utf-8")
    (root / name).symlink_to(bashrc)
    _refused(*run(capsys, "lint", "-f", "json", "-o", os.devnull), "outside the checked root")


def test_a_config_linked_to_proc_is_one_line(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    if not os.path.exists("/proc/self/pagemap"):
        pytest.skip("no /proc here")
    (root / "pyproject.toml").symlink_to("/proc/self/pagemap")
    _refused(*run(capsys, "lint"), "CONFIG001")


def test_a_config_over_the_cap_is_one_line(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.engine.config import MAX_CONFIG_BYTES

    root, _ = actions
    (root / ".rigcheck.yaml").write_text("# " + "x" * MAX_CONFIG_BYTES + "\n", encoding="utf-8")
    _refused(*run(capsys, "lint"), "over")


def test_a_fifo_named_pyproject_does_not_block(actions, capsys) -> None:  # type: ignore[no-untyped-def]
    root, _ = actions
    os.mkfifo(root / "pyproject.toml")
    code, _, err = run(capsys, "lint", "-f", "json", "-o", os.devnull)
    assert code in (0, 1), err


def test_a_config_typed_outside_the_repository_is_read(actions, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "team.rigcheck.yaml"
    config.write_text("select: [PWR]\n", encoding="utf-8")
    code, out, err = run(capsys, "lint", "--config", str(config), "--show-config")
    assert code == 0 and "PWR" in out, err


def test_a_spec_linked_out_of_the_repository_is_said_not_read(secret, capsys) -> None:  # type: ignore[no-untyped-def]
    """The first round's case, kept beside the new ones: a spec is read only inside the root."""
    root, bashrc = secret
    bashrc.write_text(RIG.replace("name: r", f"name: {SECRET}"), encoding="utf-8")
    (root / "linked.yaml").symlink_to(bashrc)
    code, out, err = run(capsys, "lint", "-f", "json")
    assert code == 1 and SECRET not in out + err and "SPEC014" in out


def test_a_baseline_linked_out_of_the_repository_is_not_read(secret, capsys) -> None:  # type: ignore[no-untyped-def]
    root, bashrc = secret
    (root / "baseline.json").symlink_to(bashrc)
    code, out, err = run(capsys, "lint", "--baseline", "baseline.json")
    assert code == 2 and SECRET not in out + err and "outside the checked root" in err
