"""The five mistakes a newcomer made writing specs from the docs (issue 17), and the one line each gets."""

from __future__ import annotations

import pytest

RIG = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n"

CASES = {
    "misspelt field": (
        "  - gpus: {model: RTX 4090}\n    memroy_gib: 64\n",
        2,
        "6:5: error: /nodes/0/memroy_gib: unknown field 'memroy_gib'; did you mean 'memory_gib'? [SPEC011]",
    ),
    "missing required field": (
        "  - gpus: {model: RTX 4090}\n    psu: {efficiency: gold}\n",
        2,
        "6:5: error: /nodes/0/psu/watts: missing required field 'watts' [SPEC010]",
    ),
    "wrong indentation": (
        "  - gpus:\n      model: RTX 4090\n      cpu:\n        cores: 16\n",
        2,
        "7:7: error: /nodes/0/gpus/cpu: unknown field 'cpu' under /nodes/0/gpus (line 5), but 'cpu' is a field "
        "of /nodes/0 (line 5): this looks like an indentation problem (indented too far); indent 'cpu:' to "
        "column 5, like the other keys there [SPEC011]",
    ),
    "64GB in a GiB field": (
        "  - gpus: {model: RTX 4090}\n    memory_gib: 64GB\n",
        0,
        "6:17: warn: '64GB' is read as 64 x 10^9 bytes = 59.6 GiB, but memory sold as 64 GB is 64 GiB [SPEC006]",
    ),
}


@pytest.mark.parametrize("mistake", list(CASES))
def test_each_mistake_gets_one_line_naming_file_line_and_field(run_cli, write_spec, mistake: str) -> None:  # type: ignore[no-untyped-def]
    body, exit_code, said = CASES[mistake]
    path = write_spec(RIG + body, "rig.yaml")
    result = run_cli("validate", path)
    assert result.exit_code == exit_code
    assert f"{path}:{said}" in (result.out + result.err).splitlines()


@pytest.mark.parametrize("written", ["H100 SXM 80GB", "h100 sxm5 80gb", "NVIDIA H100 80GB SXM"])
def test_a_gpu_name_as_people_write_it_resolves(run_cli, write_spec, written: str) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(RIG + f"  - gpus: {{model: {written}, count: 8}}\n    memory_gib: 2048\n", "rig.yaml")
    result = run_cli("check", path, "-f", "json", "--select", "PLT001")
    assert result.exit_code == 0, result.err
    [finding] = result.json()["findings"]
    assert "8x NVIDIA H100 SXM5 80GB" in finding["message"] or "H100 SXM5 80GB" in finding["message"]


@pytest.mark.parametrize("written", ["64", "'64 GiB'", "65536 MiB", "0.0625 TiB"])
def test_spec006_leaves_binary_and_plain_sizes_alone(run_cli, write_spec, written: str) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(RIG + f"  - gpus: {{model: RTX 4090}}\n    memory_gib: {written}\n", "rig.yaml")
    report = run_cli("check", path, "-f", "json", "--select", "SPEC").json()
    assert not [f for f in report["findings"] if f["code"] == "SPEC006"]


def test_spec006_reads_the_number_the_loader_reads(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    """512 GB = 512e9 B = 476.8 GiB, and PLT001 indeed compares 476.8 GiB of RAM."""
    path = write_spec(RIG + "  - gpus: {model: RTX 4090}\n    memory_gib: 512 GB\n", "rig.yaml")
    report = run_cli("check", path, "-f", "json", "--select", "SPEC006,PLT001").json()
    trap, ram = sorted(report["findings"], key=lambda f: f["code"], reverse=True)
    assert trap["code"] == "SPEC006" and trap["evidence"]["read_as_gib"] == pytest.approx(
        512e9 / 2**30, abs=1e-4
    )
    assert ram["message"].startswith("node nodes[0]: 476.84 GiB RAM is 19.87x the 24 GiB of VRAM")
