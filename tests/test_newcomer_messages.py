"""Issue 48 point 9: messages a newcomer meets first."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("llama-3-7b", "llama-3-8b"), ("llama-3-65b", "llama-3-70b"), ("lama-3-8b", "llama-3-8b")],
)
def test_a_size_the_family_lacks_gets_its_nearest_size(typed: str, meant: str) -> None:
    """``llama-3-7b`` is nearer ``llama-3-70b`` by spelling and ``llama-3-8b`` by size: the size wins
    within the family; a misspelt family still gets the nearest name."""
    from rigcheck.core.estimate.architecture import preset_suggestion

    assert preset_suggestion(typed) == f"; did you mean {meant!r}?"


@pytest.mark.parametrize(
    ("given", "written"),
    [("2x RTX 3090", "{model: RTX 3090, count: 2}"), ("RTX 4090", "{model: RTX 4090, count: 1}")],
)
def test_gpus_as_text_say_how_to_write_them(run_cli, tmp_path, given: str, written: str) -> None:  # type: ignore[no-untyped-def]
    rig = tmp_path / "rig.yaml"
    rig.write_text(f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n    gpus: {given}\n")
    result = run_cli("check", str(rig))
    assert result.exit_code == 2
    [line] = result.err.strip().splitlines()
    assert line.startswith(f"{rig}:6:") and f"write gpus: {written}" in line
