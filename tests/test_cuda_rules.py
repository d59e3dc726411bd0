"""CUDA001-CUDA005 and the table lookups behind them, worked by hand from NVIDIA's "CUDA Toolkit and
Corresponding Driver Versions" table, the compatibility guides and PyTorch's wheel build lists
(specs/hardware/cuda.yaml)."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog.cuda_compat import (
    CudaVersion,
    TorchBuild,
    cuda_tables,
    parse_version,
    ptx_runs_on,
    sass_runs_on,
)
from rigcheck.core.engine.findings import Severity


def rig(gpu: str, software: str) -> str:
    return (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n"
        f"    gpus: {{model: {gpu}}}\n    software: {software}\n"
    )


def findings(report, code):  # type: ignore[no-untyped-def]
    return [f for f in report.findings if f.code == code]


def one(report, code):  # type: ignore[no-untyped-def]
    found = findings(report, code)
    assert len(found) == 1, [f.message for f in found]
    return found[0]


class TestTables:
    def test_versions_compare_as_dotted_integers(self) -> None:
        assert parse_version("535.104.05") == (535, 104, 5) > parse_version("535.54.03")
        assert parse_version("n/a") is None

    @pytest.mark.parametrize(
        ("driver", "branch", "max_cuda"),
        [
            ("535.104.05", 535, (12, 2)),
            ("551.61", 550, (12, 4)),  # a Windows driver number maps to the branch below it
            ("546.12", 545, (12, 3)),
            ("470.82.01", 470, (11, 4)),
            ("580.95.05", 580, (13, 0)),
            ("610.43.02", 610, (13, 3)),
        ],
    )
    def test_branch_and_what_nvidia_smi_shows(self, driver: str, branch: int, max_cuda: tuple) -> None:  # type: ignore[type-arg]
        tables = cuda_tables()
        assert tables.branch(parse_version(driver)) == branch
        assert tables.branch_max_cuda(parse_version(driver)) == max_cuda

    def test_toolkit_rows_ga_and_updates(self) -> None:
        tables = cuda_tables()
        assert tables.toolkit_row(CudaVersion.parse("12.2"))["linux"] == "535.54.03"  # GA
        assert tables.toolkit_row(CudaVersion.parse("12.2.2"))["linux"] == "535.104.05"  # Update 2
        assert tables.toolkit_row(CudaVersion.parse("11.0"))["linux"] == "450.51.05"  # 11.0.2 is the GA
        assert tables.toolkit_row(CudaVersion.parse("12.4"))["windows"] == "551.61"
        assert tables.toolkit_row(CudaVersion.parse("12.7")) is None  # there is no CUDA 12.7

    def test_minor_version_floors(self) -> None:
        tables = cuda_tables()
        assert tables.mvc_floor(11, windows=False) == "450.80.02"
        assert tables.mvc_floor(12, windows=False) == "525.60.13"
        assert tables.mvc_floor(13, windows=False) == "580.65.06"
        assert tables.mvc_floor(12, windows=True) == "527.41"

    def test_torch_builds(self) -> None:
        build = TorchBuild.parse("2.7.0+cu128")
        assert build.cuda_tag == "cu128" and build.cuda.short == (12, 8)
        assert TorchBuild.parse("2.9.0+cu130").cuda.short == (13, 0)
        assert TorchBuild.parse("2.3.0a0+6ddf5cf85e").cuda is None
        assert TorchBuild.parse("2.4.0+cpu").cuda_tag is None
        row = cuda_tables().torch_wheel(TorchBuild.parse("2.5.1+cu121"))
        assert row["cuda"] == "12.1" and row["ptx"] == []

    def test_binary_compatibility(self) -> None:
        assert sass_runs_on((8, 6), (8, 9))  # sm_86 code runs on an RTX 4090
        assert not sass_runs_on((9, 0), (10, 0))  # Hopper code does not run on Blackwell
        assert not sass_runs_on((8, 9), (8, 6))
        assert ptx_runs_on((12, 0), (12, 1)) and not ptx_runs_on((12, 0), (7, 0))


class TestDriverGpu:
    @pytest.mark.parametrize(
        ("gpu", "driver", "severity"),
        [
            ("RTX 5090", "570.26", Severity.PASS),  # CUDA 12.8 GA driver
            ("RTX 5090", "565.57.01", Severity.FAIL),
            ("V100 SXM2 16GB", "580.95.05", Severity.PASS),  # R580 is the last Volta branch
            ("V100 SXM2 16GB", "590.44.01", Severity.FAIL),
            ("Tesla K80", "470.82.01", Severity.PASS),
            ("Tesla K80", "510.47.03", Severity.FAIL),  # past R470
            ("H100 SXM", "520.61.05", Severity.PASS),
            ("H100 SXM", "515.48.07", Severity.FAIL),
        ],
    )
    def test_range(self, check, gpu: str, driver: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(gpu, f"{{os: linux, driver: '{driver}'}}"), select=("CUDA001",)), "CUDA001")
        assert finding.severity is severity, finding.message

    def test_windows_column(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(
            check(rig("RTX 5090", "{os: windows, driver: '566.36'}"), select=("CUDA001",)), "CUDA001"
        )
        assert finding.severity is Severity.FAIL and finding.evidence["min_driver"] == "570.65"

    def test_no_driver_is_not_checked(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig("RTX 3090", "{os: linux}"), select=("CUDA001",)), "CUDA001")
        assert finding.severity is Severity.SKIP


class TestRuntimeDriver:
    @pytest.mark.parametrize(
        ("driver", "runtime", "severity"),
        [
            ("550.54.14", "12.4", Severity.PASS),  # exactly the 12.4 GA driver
            ("545.23.08", "12.4", Severity.WARN),  # R545 runs 12.3 natively, 12.4 through MVC
            ("525.60.13", "12.8", Severity.WARN),  # exactly the 12.x floor
            ("520.61.05", "12.0", Severity.FAIL),  # R520 is 11.8's driver
            ("450.80.02", "11.8", Severity.WARN),  # the 11.x floor
            ("450.51.06", "11.8", Severity.FAIL),
            ("440.33", "10.2", Severity.PASS),
            ("418.39", "10.2", Severity.FAIL),  # no MVC before CUDA 11
            # R535 runs 12.2 natively, every update of it: 535.104.05 is only the driver Update 2 was
            # bundled with, not a floor (NVIDIA's table, per-update rows)
            ("535.54.03", "12.2.2", Severity.PASS),
        ],
    )
    def test_linux(self, check, driver: str, runtime: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        software = f"{{os: linux, driver: '{driver}', cuda_runtime: '{runtime}'}}"
        finding = one(check(rig("A100 SXM 80GB", software), select=("CUDA002",)), "CUDA002")
        assert finding.severity is severity, finding.message

    def test_message_explains_nvidia_smi_cuda_version(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '535.104.05', cuda_runtime: '12.1'}"
        finding = one(check(rig("H100 SXM", software), select=("CUDA002",)), "CUDA002")
        assert "nvidia-smi's 'CUDA Version: 12.2' is the newest runtime driver 535.104.05 runs natively" in (
            finding.message
        )

    def test_mvc_warning_names_its_limits(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '525.60.13', torch: '2.4.0+cu124'}"
        finding = one(check(rig("RTX 4090", software), select=("CUDA002",)), "CUDA002")
        assert finding.severity is Severity.WARN
        assert "cudaErrorUnsupportedPtxVersion" in finding.message
        assert "cudaErrorCallRequiresNewerDriver" in finding.message
        assert (
            finding.evidence["mvc_floor"] == "525.60.13" and finding.evidence["toolkit_driver"] == "550.54.14"
        )

    def test_each_runtime_is_checked(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '535.104.05', torch: '2.3.0+cu121', cuda_toolkit: '12.4'}"
        found = findings(check(rig("H100 SXM", software), select=("CUDA002",)), "CUDA002")
        assert [(f.evidence["runtime"], f.severity) for f in found] == [
            ("12.1", Severity.PASS),
            ("12.4", Severity.WARN),
        ]

    def test_forward_compatibility(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '535.104.05', cuda_runtime: '13.0', cuda_compat: cuda-compat-13-0}"
        finding = one(check(rig("H100 SXM", software), select=("CUDA002",)), "CUDA002")
        # NVIDIA's supported path for data-center GPUs (NGC containers): an informational pass
        assert finding.severity is Severity.PASS and "forward-compatibility package" in finding.message
        assert "no CUDA-OpenGL/Vulkan interop" in finding.message
        # the same package on R580 is not needed; 13.1 through it on R590 is not in the matrix
        wrong_branch = "{os: linux, driver: '590.44.01', cuda_runtime: '13.2', cuda_compat: cuda-compat-13-1}"
        assert (
            one(check(rig("H100 SXM", wrong_branch), select=("CUDA002",)), "CUDA002").severity
            is Severity.WARN
        )
        too_old = "{os: linux, driver: '535.104.05', cuda_runtime: '13.2', cuda_compat: cuda-compat-13-0}"
        finding = one(check(rig("H100 SXM", too_old), select=("CUDA002",)), "CUDA002")
        assert finding.severity is Severity.FAIL and "provides CUDA up to 13.0" in finding.message

    def test_forward_compatibility_on_geforce_fails_even_when_not_needed(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '550.54.15', cuda_runtime: '12.4', cuda_compat: cuda-compat-12-4}"
        finding = one(check(rig("RTX 4090", software), select=("CUDA002",)), "CUDA002")
        assert finding.severity is Severity.FAIL and "804" in finding.message

    def test_stale_compat_package_after_driver_upgrade(self, check) -> None:  # type: ignore[no-untyped-def]
        software = "{os: linux, driver: '570.124.06', cuda_runtime: '12.4', cuda_compat: cuda-compat-12-4}"
        finding = one(check(rig("H100 SXM", software), select=("CUDA002",)), "CUDA002")
        assert finding.severity is Severity.WARN and "803" in finding.message


class TestArchitecture:
    @pytest.mark.parametrize(
        ("gpu", "runtime", "severity"),
        [
            ("H100 SXM", "11.7", Severity.FAIL),
            ("H100 SXM", "11.8", Severity.PASS),
            ("RTX 5090", "12.6", Severity.FAIL),
            ("RTX 5090", "12.8", Severity.PASS),
            (
                "B300",
                "12.8",
                Severity.WARN,
            ),  # Blackwell Ultra arrived in 12.9; 12.8's sm_100 cubins run on sm_103
            ("RTX 4090", "11.7", Severity.WARN),  # Ada arrived in 11.8; 11.7's sm_86 cubins run on sm_89
            ("V100 SXM2 16GB", "12.9", Severity.PASS),
            ("V100 SXM2 16GB", "13.0", Severity.FAIL),
            ("Tesla K80", "11.8", Severity.PASS),
            ("Tesla K80", "12.0", Severity.FAIL),
        ],
    )
    def test_first_and_last(self, check, gpu: str, runtime: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        software = f"{{os: linux, driver: '580.95.05', cuda_runtime: '{runtime}'}}"
        finding = one(check(rig(gpu, software), select=("CUDA003",)), "CUDA003")
        assert finding.severity is severity, finding.message


class TestTorchWheel:
    @pytest.mark.parametrize(
        ("gpu", "torch", "severity"),
        [
            ("RTX 5090", "2.5.1+cu121", Severity.FAIL),  # sm_50..sm_90, no PTX
            ("RTX 5090", "2.7.0+cu128", Severity.PASS),  # sm_120
            ("RTX 4090", "2.0.1+cu117", Severity.PASS),  # sm_86 code runs on sm_89
            ("H100 SXM", "2.0.1+cu117", Severity.FAIL),  # sm_86 code does not run on sm_90
            ("V100 SXM2 16GB", "2.7.0+cu128", Severity.FAIL),  # no sm_70; compute_120 PTX is newer than 7.0
            ("V100 SXM2 16GB", "2.8.0+cu128", Severity.PASS),  # sm_70 kept from 2.8
            ("V100 SXM2 16GB", "2.7.0+cu126", Severity.PASS),
            ("B300", "2.7.0+cu128", Severity.PASS),  # sm_100 code runs on sm_103
        ],
    )
    def test_sass_and_ptx(self, check, gpu: str, torch: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(gpu, f"{{os: linux, torch: '{torch}'}}"), select=("CUDA004",)), "CUDA004")
        assert finding.severity is severity, finding.message

    def test_ptx_only_is_a_warning(self, check, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        """No shipped wheel is PTX-only for a catalog GPU, so give cu121 a compute_90 PTX target (as a
        9.0+PTX build would have): sm_120 can JIT it."""
        import copy

        from rigcheck.core.catalog.cuda_compat import CudaTables
        from rigcheck.plugins.cuda import torch_wheel_kernels

        data = copy.deepcopy(cuda_tables().data)
        for row in data["torch_wheels"]["rows"]:
            if row["wheel"] == "cu121":
                row["ptx"] = ["9.0"]
        monkeypatch.setattr(torch_wheel_kernels, "cuda_tables", lambda: CudaTables(data))
        finding = one(check(rig("RTX 5090", "{torch: '2.5.1+cu121'}"), select=("CUDA004",)), "CUDA004")
        assert finding.severity is Severity.WARN and "compute_90 PTX is JIT-compiled" in finding.message

    def test_cpu_build_fails_and_unknown_build_is_not_checked(self, check) -> None:  # type: ignore[no-untyped-def]
        assert one(
            check(rig("RTX 4090", "{torch: '2.4.0+cpu'}"), select=("CUDA004",)), "CUDA004"
        ).severity is (Severity.FAIL)
        assert one(check(rig("RTX 4090", "{torch: '2.4.0'}"), select=("CUDA004",)), "CUDA004").severity is (
            Severity.SKIP
        )

    def test_fix_names_wheels_that_work(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig("RTX 5090", "{torch: '2.5.1+cu121'}"), select=("CUDA004",)), "CUDA004")
        assert "cu128 (torch 2.7-2.11), cu129 (torch 2.8)" in finding.fix
        assert "no kernel image is available" in finding.message


class TestNvccTorch:
    @pytest.mark.parametrize(
        ("toolkit", "torch", "severity"),
        [
            ("11.8", "2.3.0+cu121", Severity.WARN),
            ("12.4", "2.3.0+cu121", Severity.PASS),
            ("12.1", "2.3.0+cu121", Severity.PASS),
        ],
    )
    def test_major(self, check, toolkit: str, torch: str, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        software = f"{{cuda_toolkit: '{toolkit}', torch: '{torch}'}}"
        finding = one(check(rig("RTX 4090", software), select=("CUDA005",)), "CUDA005")
        assert finding.severity is severity


DECIDING_RULE = {
    "below-12x-floor": "CUDA002",
    "below-11x-mvc-floor": "CUDA002",
    "windows-below-12x-floor": "CUDA002",
    "mvc-12.4-on-525-geforce": "CUDA002",
    "mvc-13.4-on-r610": "CUDA002",
    "windows-mvc-12.4": "CUDA002",
    "fwd-compat-geforce-rejected": "CUDA002",
    "fwd-compat-12.8-on-535-datacenter": "CUDA002",
    "rtx5090-cu121-wheel": "CUDA004",
    "rtx5090-driver-too-old": "CUDA001",
    "rtx5090-windows-r565": "CUDA001",
    "h100-cu117-wheel": "CUDA004",
    "v100-cu130-wheel": "CUDA004",  # a prebuilt wheel: its kernels decide (no sm_70), not the toolkit rule
    "v100-cu128-torch27": "CUDA004",
    "p100-cuda13": "CUDA003",
}


@pytest.mark.parametrize(("case_id", "code"), sorted(DECIDING_RULE.items()))
def test_the_rule_the_case_names_is_the_one_that_fires(check, case_id: str, code: str) -> None:  # type: ignore[no-untyped-def]
    """The cases' ``why`` names a reason; the finding with the case's severity must come from that rule."""
    from tests.test_cuda_cases import CASES, rig_for

    case = next(case for case in CASES if case["id"] == case_id)
    report = check(rig_for(case), select=("CUDA",))
    assert any(f.code == code and f.severity.value == case["expect"] for f in report.findings), [
        (f.code, f.severity.value) for f in report.findings
    ]
