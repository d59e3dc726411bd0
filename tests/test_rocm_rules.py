"""Issue 48, point 6: AMD nodes get a software check. ROCM001 (the ROCm release lists the GPU's gfx target),
ROCM002 (the torch +rocm wheel was compiled for it), ROCM003 (the amdgpu driver is listed for the ROCm user
space); and the CUDA rules say they do not apply instead of saying nothing.

Expected verdicts are read off specs/hardware/rocm.yaml's rows by hand: ROCm 5.7 lists gfx1030, gfx1100,
gfx906, gfx908, gfx90a (no gfx942, MI300X's target); 6.2 adds gfx942 (with OS limits) and deprecates gfx906;
torch 2.0+rocm5.4.2 was built for gfx900, gfx906, gfx908, gfx90a, gfx1030; gfx942 enters with 2.3+rocm6.0;
ROCm 6.2 lists amdgpu 6.4.x, 6.3.x, 6.2.x, 6.1.x, 6.0.x and 7.2 lists 30.30.x, 30.20.x, 30.10.x, 6.4.x."""

from __future__ import annotations

import pytest

RIG = "apiVersion: rigcheck/v1\nkind: Rig\nname: amd\nnodes:\n  - name: n\n    gpus: {{model: {gpu}, count: 8}}\n"


def _run(run_cli, write_spec, gpu: str, software: str, codes: str = "ROCM") -> dict:  # type: ignore[no-untyped-def,type-arg]
    path = write_spec(RIG.format(gpu=gpu) + f"    software: {{os: linux, {software}}}\n", "rig.yaml")
    return run_cli("check", path, "--select", codes, "-f", "json").json()


def _verdicts(report: dict, code: str) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(f["severity"], f["message"]) for f in report["findings"] if f["code"] == code]


@pytest.mark.parametrize(
    ("gpu", "rocm", "verdict", "says"),
    [
        ("MI300X", "5.7.1", "fail", "ROCm 5.7 does not support gfx942"),
        ("MI300X", "6.2.4", "pass", "ROCm 6.2 lists gfx942 (on some operating systems only)"),
        ("MI250X", "6.2.4", "pass", "ROCm 6.2 lists gfx90a"),
        ("RX 7900 XTX", "5.6.1", "fail", "ROCm 5.6 does not support gfx1100"),
        ("RX 7900 XTX", "5.7.1", "pass", "ROCm 5.7 lists gfx1100 (on some operating systems only)"),
        ("MI300X", "4.5.2", "skip", "not in the compatibility tables (ROCm 5.4-7.2)"),
    ],
)
def test_rocm_release_against_the_gfx_target(run_cli, write_spec, gpu, rocm, verdict, says) -> None:  # type: ignore[no-untyped-def]
    [(severity, message)] = _verdicts(_run(run_cli, write_spec, gpu, f"rocm: {rocm}", "ROCM001"), "ROCM001")
    assert severity == verdict and says in message, message


def test_the_fix_names_the_releases_that_list_the_target(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    report = _run(run_cli, write_spec, "MI300X", "rocm: 5.7.1", "ROCM001")
    [finding] = [f for f in report["findings"] if f["code"] == "ROCM001"]
    assert finding["fix"] == "a ROCm release that lists gfx942: 6.0-7.2"
    fixed = _run(run_cli, write_spec, "MI300X", "rocm: '6.0'", "ROCM001")  # the fix, re-checked
    assert [s for s, _ in _verdicts(fixed, "ROCM001")] == ["pass"]


def test_deprecated_and_dropped_targets_from_the_table() -> None:
    from rigcheck.core.catalog.rocm_compat import rocm_tables

    supported, deprecated = rocm_tables().supporting("gfx906")  # MI50 / Radeon VII
    assert supported == ["5.4", "5.5", "5.6", "5.7"] and deprecated == ["6.0", "6.1", "6.2"]


@pytest.mark.parametrize(
    ("gpu", "torch", "verdict", "says"),
    [
        ("MI300X", "2.0.1+rocm5.4.2", "fail", "'HIP error: invalid device function'"),
        ("MI300X", "2.3.1+rocm6.0", "pass", "compiled for gfx942"),
        ("RX 7900 XTX", "2.0.1+rocm5.4.2", "fail", "(gfx900 gfx906 gfx908 gfx90a gfx1030)"),
        ("RX 7900 XTX", "2.1.2+rocm5.6", "pass", "compiled for gfx1100"),
        ("MI300X", "2.5.1+rocm6.2", "pass", "compiled for gfx942"),
        ("RX 7900 XTX", "2.7.1+rocm6.3", "pass", "compiled for gfx1100"),
        ("MI250X", "2.12.0+rocm7.2", "pass", "compiled for gfx90a"),
        # 2.10's lists disagree between sources and 2.13's is unconfirmed: not in the tables
        (
            "MI300X",
            "2.10.0+rocm7.0",
            "skip",
            "not in PyTorch's ROCm build lists as sourced (torch 2.0-2.9, 2.11-2.12)",
        ),
        ("MI300X", "2.4.0+cu121", "fail", "is a cu121 build: it cannot use AMD GPUs"),
        ("MI300X", "2.4.0", "skip", "no +rocmX.Y suffix"),
    ],
)
def test_torch_wheel_against_the_gfx_target(run_cli, write_spec, gpu, torch, verdict, says) -> None:  # type: ignore[no-untyped-def]
    [(severity, message)] = _verdicts(
        _run(run_cli, write_spec, gpu, f"rocm: 6.2.4, torch: '{torch}'", "ROCM002"), "ROCM002"
    )
    assert severity == verdict and says in message, message


def test_the_torch_fix_is_a_wheel_that_passes(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    report = _run(run_cli, write_spec, "MI300X", "torch: 2.0.1+rocm5.4.2", "ROCM002")
    [finding] = [f for f in report["findings"] if f["code"] == "ROCM002"]
    # the newest three listed wheels with gfx942; each passes
    assert "torch 2.11+rocm7.2, torch 2.12+rocm7.1, torch 2.12+rocm7.2" in finding["fix"]
    for wheel in ("2.11.0+rocm7.2", "2.12.0+rocm7.1", "2.12.1+rocm7.2"):
        fixed = _run(run_cli, write_spec, "MI300X", f"torch: {wheel}", "ROCM002")
        assert [s for s, _ in _verdicts(fixed, "ROCM002")] == ["pass"], wheel


@pytest.mark.parametrize(
    ("software", "verdicts"),
    [
        ("rocm: 6.2.4, amdgpu_driver: 6.2.4", ["pass"]),
        ("rocm: 7.2.0, amdgpu_driver: 6.2.4", ["warn"]),  # 7.2 lists 30.30.x, 30.20.x, 30.10.x, 6.4.x
        ("rocm: 7.2.0, amdgpu_driver: 6.4.3", ["pass"]),
        ("rocm: 7.0.2, amdgpu_driver: 30.10.1", ["pass"]),
        ("rocm: 6.2.4, torch: 2.0.1+rocm5.4.2, amdgpu_driver: 6.2.4", ["pass", "warn"]),  # the wheel's 5.4
        ("rocm: 6.2.4, amdgpu_driver: 6.12.12", ["skip"]),  # a DKMS module version, not a release
        ("rocm: 6.2.4", ["skip"]),
    ],
)
def test_driver_against_each_user_space(run_cli, write_spec, software, verdicts) -> None:  # type: ignore[no-untyped-def]
    found = _verdicts(_run(run_cli, write_spec, "MI300X", software, "ROCM003"), "ROCM003")
    assert [severity for severity, _ in found] == verdicts, found


def test_cuda_rules_say_they_do_not_apply_on_amd_and_rocm_rules_on_nvidia(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    amd = _run(run_cli, write_spec, "MI300X", "rocm: 6.2.4, torch: 2.3.1+rocm6.0", "CUDA,ROCM")
    reasons = {run["name"]: (run["status"], run["reason"]) for run in amd["checkers"]}
    cuda = {
        name: value
        for name, value in reasons.items()
        if name.startswith("cuda.") and name != "cuda.runtime-driver"
    }
    assert cuda and set(cuda.values()) == {("skipped", "not applicable: the rig has no NVIDIA GPU")}
    assert all(reasons[name][0] == "ran" for name in reasons if name.startswith("rocm."))
    nvidia = run_cli("check", "dgx-h100", "--select", "CUDA,ROCM", "-f", "json").json()
    statuses = {run["name"]: run["status"] for run in nvidia["checkers"]}
    assert {statuses[name] for name in statuses if name.startswith("rocm.")} == {"skipped"}
    assert not [f for f in nvidia["findings"] if f["code"].startswith("ROCM")]


def test_a_mixed_rig_walks_each_vendors_nodes(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: mixed\nnodes:\n"
        "  - name: green\n    gpus: {model: H100 SXM5 80GB, count: 8}\n"
        "    software: {os: linux, driver: 550.54.15, torch: 2.3.1+cu121}\n"
        "  - name: red\n    gpus: {model: MI300X, count: 8}\n"
        "    software: {os: linux, rocm: 6.2.4, torch: 2.3.1+rocm6.0}\n",
        "rig.yaml",
    )
    report = run_cli("check", path, "--select", "CUDA004,ROCM001,ROCM002", "-f", "json").json()
    by_code: dict[str, set[str]] = {}
    for finding in report["findings"]:
        by_code.setdefault(finding["code"], set()).add(finding["location"]["pointer"].split("/")[2])
    assert by_code == {"CUDA004": {"0"}, "ROCM001": {"1"}, "ROCM002": {"1"}}
    assert {f["severity"] for f in report["findings"]} == {"pass"}
