"""REL001-REL004 with numbers worked by hand from docs/research/rules_facts.md REL-1..REL-6.

Failure prior: Llama 3's 419 unexpected interruptions on 16,384 H100s in 54 days (1,296 h) give
lambda = 419 / (16,384 x 1,296) = 1.97e-5 per GPU-hour. Job MTBF = 1 / (lambda x GPUs):
8 GPUs 6,345.2 h; 1,024 GPUs 49.57 h; 16,384 GPUs 3.0982 h = 11,153.7 s.
"""

from __future__ import annotations

import math

import pytest

from rigcheck.core.engine.findings import Severity
from rigcheck.core.estimate.reliability import job_mtbf_hours, lost_fraction, young_daly_tau, young_tau

LLAMA3_MTBF_S = 3600 / (1.97e-5 * 16384)  # 11,153.7 s


def one(report, code):  # type: ignore[no-untyped-def]
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


class TestFormulas:
    def test_prior_is_llama3(self) -> None:
        assert pytest.approx(1.97e-5, rel=0.005) == 419 / (16384 * 54 * 24)

    @pytest.mark.parametrize(("gpus", "hours"), [(8, 6345.2), (1024, 49.57), (16384, 3.0982)])
    def test_job_mtbf(self, gpus: int, hours: float) -> None:
        assert job_mtbf_hours(1.97e-5, gpus) == pytest.approx(hours, rel=1e-4)

    def test_young_tau_at_llama3_scale(self) -> None:
        tau = young_tau(60, LLAMA3_MTBF_S)  # sqrt(2 x 60 x 11,153.7) = 1,156.9 s
        assert tau == pytest.approx(1156.9, abs=0.1)
        assert tau / 60 == pytest.approx(19.3, abs=0.05)  # "about 19 min"

    def test_daly(self) -> None:
        # 1,156.9 x (1 + sqrt(60 / 22,307.4) / 3 + 60 / (18 x 11,153.7)) - 60 = 1,117.2 s
        assert young_daly_tau(60, LLAMA3_MTBF_S) == pytest.approx(1117.2, abs=0.2)
        assert young_daly_tau(10_000, 4_000) == 4_000  # delta >= 2M: tau = M

    def test_young_five_minute_write(self) -> None:
        assert young_tau(300, LLAMA3_MTBF_S) / 60 == pytest.approx(43.1, abs=0.1)  # REL-4: "about 43 min"

    def test_lost_fraction(self) -> None:
        # every 60 min: 60/3,600 + (1,800 + 600)/11,153.7 = 0.01667 + 0.21518
        assert lost_fraction(3600, 60, LLAMA3_MTBF_S, 600) == pytest.approx(0.23184, abs=1e-5)
        # at tau: 60/1,156.9 + (578.5 + 600)/11,153.7 = 0.05186 + 0.10566
        assert lost_fraction(1156.9, 60, LLAMA3_MTBF_S, 600) == pytest.approx(0.15752, abs=1e-5)


def llama3_scale(interval: str) -> tuple[str, str]:
    """2,048 DGX-class nodes and a shared file system that writes Llama-3-8B's 112.42 GB in 60 s."""
    write_mb_s = 8_030_261_248 * 14 / 60 / 1e6  # 1,873.73 MB/s
    rig = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: big\nnodes:\n  - name: n\n    count: 2048\n"
        "    gpus: {model: H100 SXM, count: 8}\n"
        f"    storage: [{{name: shared, kind: network-fs, write_mb_s: {write_mb_s:.6f}}}]\n"
    )
    workload = (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: llama-3-8b}\ntask: pretrain\n"
        "batch: {micro: 1, seq_len: 8192}\nparallelism: {dp: 16384, zero: 1}\n"
        f"run: {{hours: 1000{interval}}}\n"
    )
    return rig, workload


class TestCheckpointInterval:
    @pytest.mark.parametrize(
        ("minutes", "severity"),
        [
            (60, Severity.WARN),  # 23.2% lost against 15.8% at tau
            (19, Severity.PASS),
            (38, Severity.PASS),  # 2 tau = 38.56 min
            (39, Severity.WARN),  # 60/2,340 + (1,170 + 600)/11,153.7 = 18.4%
            (10, Severity.PASS),  # tau / 2 = 9.64 min
            (9, Severity.WARN),
        ],
    )
    def test_window_at_llama3_scale(self, check, minutes: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        rig, workload = llama3_scale(f", checkpoint_interval_min: {minutes}")
        finding = one(check(rig, workload, select=("REL003",)), "REL003")
        assert finding.evidence["write_seconds"] == pytest.approx(60, abs=0.01)
        assert finding.evidence["tau_young_seconds"] == pytest.approx(1156.9, abs=0.2)
        assert finding.severity is severity, finding.message

    def test_message_gives_the_formula_inputs(self, check) -> None:  # type: ignore[no-untyped-def]
        rig, workload = llama3_scale(", checkpoint_interval_min: 60")
        finding = one(check(rig, workload, select=("REL003",)), "REL003")
        assert "tau = sqrt(2 x 60 s x 11,154 s) = 19.3 min (Daly 18.6 min)" in finding.message
        assert "expected loss 23.18% of the run (at tau: 15.75%)" in finding.message
        assert finding.fix == "checkpoint about every 19.3 min"

    def test_no_interval_on_a_long_run(self, check) -> None:  # type: ignore[no-untyped-def]
        rig, workload = llama3_scale("")
        assert one(check(rig, workload, select=("REL003",)), "REL003").severity is Severity.WARN

    def test_small_extra_cost_passes(self, check) -> None:  # type: ignore[no-untyped-def]
        """8 GPUs, 60 s writes: tau = sqrt(2 x 60 x 22,842,640 s) = 14.5 h. Every 12 h loses
        60/43,200 + (21,600 + 600)/22,842,640 = 0.236% against 0.232% at tau: within 0.5%."""
        rig, workload = llama3_scale(", checkpoint_interval_min: 720")
        rig = rig.replace("count: 2048", "count: 1")
        workload = workload.replace("dp: 16384", "dp: 8")
        finding = one(check(rig, workload, select=("REL003",)), "REL003")
        assert finding.evidence["tau_young_seconds"] == pytest.approx(
            math.sqrt(2 * 60 * 3600 / (1.97e-5 * 8)), rel=1e-4
        )
        assert finding.severity is Severity.PASS

    def test_every_hour_on_one_node_costs_more_than_it_saves(self, check) -> None:  # type: ignore[no-untyped-def]
        """tau = 14.5 h: every 60 min loses 60/3,600 + (1,800 + 600)/22,842,640 = 1.68%, 1.44% more than tau."""
        rig, workload = llama3_scale(", checkpoint_interval_min: 60")
        rig = rig.replace("count: 2048", "count: 1")
        workload = workload.replace("dp: 16384", "dp: 8")
        finding = one(check(rig, workload, select=("REL003",)), "REL003")
        assert finding.evidence["excess_lost_fraction"] == pytest.approx(0.0144, abs=0.0002)
        assert finding.severity is Severity.WARN and "preemption" in finding.fix


class TestJobMtbf:
    def workload(self, dp: int, hours: float, extra: str = "") -> str:
        return (
            "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: gpt2-124m}\ntask: pretrain\n"
            f"batch: {{micro: 8, seq_len: 1024}}\nparallelism: {{dp: {dp}}}\nrun: {{hours: {hours}{extra}}}\n"
        )

    RIG = "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - {count: 128, gpus: {model: H100 SXM, count: 8}}\n"

    @pytest.mark.parametrize(
        ("hours", "severity"),
        # 1,024 GPUs: M = 49.57 h; warn at 0.1 expected interruptions (4.96 h), fail at 1 (49.57 h)
        [(4.9, Severity.PASS), (5.0, Severity.WARN), (49.5, Severity.WARN), (49.6, Severity.FAIL)],
    )
    def test_without_checkpoints(self, check, hours: float, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(self.RIG, self.workload(1024, hours), select=("REL002",)), "REL002")
        assert finding.evidence["job_mtbf_hours"] == pytest.approx(49.57, abs=0.01)
        assert finding.severity is severity

    def test_with_checkpoints_it_reports(self, check) -> None:  # type: ignore[no-untyped-def]
        report = check(
            self.RIG, self.workload(1024, 240, ", checkpoint_interval_min: 30"), select=("REL002",)
        )
        finding = one(report, "REL002")
        assert finding.severity is Severity.PASS and "expects 4.8 interruptions" in finding.message

    def test_pessimistic_prior_and_own_rate(self, check) -> None:  # type: ignore[no-untyped-def]
        pessimistic = self.workload(1024, 10, ", failure_prior: pessimistic")
        finding = one(check(self.RIG, pessimistic, select=("REL002",)), "REL002")
        assert finding.evidence["job_mtbf_hours"] == pytest.approx(1 / (8.1e-5 * 1024), abs=0.01)  # 12.06 h
        own = self.workload(1024, 10, ", failure_rate_per_gpu_hour: 1.0e-6")
        assert one(check(self.RIG, own, select=("REL002",)), "REL002").evidence[
            "job_mtbf_hours"
        ] == pytest.approx(976.56, abs=0.01)


class TestEcc:
    def rig(self, gpus: str) -> str:
        return f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - gpus: {gpus}\n"

    def workload(self, hours: float) -> str:
        return (
            "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: gpt2-124m}\ntask: pretrain\n"
            f"batch: {{micro: 8, seq_len: 1024}}\nrun: {{hours: {hours}}}\n"
        )

    @pytest.mark.parametrize(
        ("gpus", "hours", "severity"),
        [
            ("{model: RTX 4090}", 24, Severity.PASS),
            ("{model: RTX 4090}", 25, Severity.WARN),  # optional soft-ECC, off by default
            ("{model: RTX 4090, ecc: true}", 72, Severity.PASS),
            ("{model: RTX 3090}", 72, Severity.WARN),  # no ECC at all
            ("{model: RTX 3090, ecc: true}", 1, Severity.WARN),  # cannot be enabled
            ("{model: RTX A6000}", 72, Severity.WARN),  # workstation GDDR: off by default
            ("{model: L40S}", 72, Severity.PASS),  # data-center GDDR: on by default
            ("{model: H100 SXM}", 720, Severity.PASS),
            ("{model: H100 SXM, ecc: false}", 72, Severity.WARN),
        ],
    )
    def test_by_class_and_setting(self, check, gpus: str, hours: float, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(self.rig(gpus), self.workload(hours), select=("REL001",)), "REL001")
        assert finding.severity is severity, finding.message

    def test_rig_alone_does_not_warn(self, check) -> None:  # type: ignore[no-untyped-def]
        assert (
            one(check(self.rig("{model: RTX 3090}"), select=("REL001",)), "REL001").severity is Severity.PASS
        )


class TestSpares:
    RIG = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n"
        "  - {{count: {count}, spares: {spares}, gpus: {{model: H100 SXM, count: 8}}}}\n"
    )

    def workload(self, dp: int, hours: float) -> str:
        return (
            "apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {preset: gpt2-124m}\ntask: pretrain\n"
            f"batch: {{micro: 8, seq_len: 1024}}\nparallelism: {{dp: {dp}}}\n"
            f"run: {{hours: {hours}, checkpoint_interval_min: 60}}\n"
        )

    @pytest.mark.parametrize(
        ("count", "spares", "dp", "hours", "severity"),
        [
            (32, 0, 256, 336, Severity.WARN),  # 32 nodes used, 0 spare < ceil(1.6) = 2
            (32, 2, 256, 336, Severity.PASS),
            (34, 0, 256, 336, Severity.PASS),  # 2 nodes of the group left over
            (33, 0, 256, 336, Severity.WARN),
            (32, 0, 256, 168, Severity.PASS),  # not longer than a week
            (15, 0, 120, 336, Severity.PASS),  # fewer than 16 nodes
        ],
    )
    def test_thresholds(
        self, check, count: int, spares: int, dp: int, hours: float, severity: Severity
    ) -> None:  # type: ignore[no-untyped-def]
        rig = self.RIG.format(count=count, spares=spares)
        finding = one(check(rig, self.workload(dp, hours), select=("REL004",)), "REL004")
        assert finding.severity is severity, finding.message
