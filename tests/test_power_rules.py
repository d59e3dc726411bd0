"""PWR001-PWR005 with numbers worked by hand from docs/research/rules_facts.md PSU-1..PSU-12, at and around each
threshold. Sustained DC load here: 2 x 350 W (RTX 3090) + 100 W CPU + 100 W platform = 900 W."""

from __future__ import annotations

import math

import pytest

from rigcheck.core.engine.findings import Severity


def rig(psu: str, gpus: str = "{model: RTX 3090, count: 2}", site: str = "", extra: str = "") -> str:
    return (
        f"apiVersion: rigcheck/v1\nkind: Rig\nname: r\n{site}nodes:\n  - name: box\n    gpus: {gpus}\n"
        f"    cpu: {{cores: 16, tdp_w: 100}}\n    memory_gib: 128\n    psu: {psu}\n{extra}"
    )


def one(report, code):  # type: ignore[no-untyped-def]
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


class TestSustained:
    @pytest.mark.parametrize(
        ("watts", "severity"),
        [(1125, Severity.PASS), (1124, Severity.WARN), (900, Severity.WARN), (899, Severity.FAIL)],
    )
    def test_thresholds(self, check, watts: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(f"{{watts: {watts}}}"), select=("PWR001",)), "PWR001")
        assert finding.severity is severity
        assert finding.evidence["sustained_w"] == 900  # 700 + 100 + 100
        assert finding.location.pointer == "/nodes/0/psu/watts"

    def test_fix_names_the_power_limit_and_its_cost(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig("{watts: 1000}"), select=("PWR001",)), "PWR001")  # 90% of 1,000 W
        # target 80% = 800 W: (800 - 200) / 700 = 0.857 of 350 W = 300 W
        assert "a PSU of at least 1,125 W" in finding.fix
        assert "nvidia-smi -pl 300 on the NVIDIA GeForce RTX 3090" in finding.fix
        assert "86% of the current limit; about 5% slower or less" in finding.fix

    def test_redundant_units_count_n_only(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig('{watts: 600, count: 3, redundancy: "2+1"}'), select=("PWR001",)), "PWR001")
        assert (
            finding.evidence["capacity_w"] == 1200 and finding.severity is Severity.PASS
        )  # 900 / 1200 = 75%

    def test_power_limit_and_vendor_maximum(self, check) -> None:  # type: ignore[no-untyped-def]
        limited = rig("{watts: 1000}", gpus="{model: RTX 3090, count: 2, power_limit_w: 280}")
        assert one(check(limited, select=("PWR001",)), "PWR001").evidence["sustained_w"] == 760
        vendor = rig('{watts: 3300, count: 6, redundancy: "4+2"}', extra="    max_power_w: 10200\n")
        # max_power_w is input power: DC = 10,200 W x 0.94 (the default PSU efficiency at half load)
        assert one(check(vendor, select=("PWR001",)), "PWR001").evidence["sustained_w"] == pytest.approx(9588)


class TestTransients:
    @pytest.mark.parametrize(("watts", "severity"), [(1349, Severity.FAIL), (1350, Severity.PASS)])
    def test_legacy_psu_needs_one_and_a_half_times(self, check, watts: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig(f"{{watts: {watts}, atx_version: '2.52'}}"), select=("PWR002",)), "PWR002")
        assert finding.severity is severity and finding.evidence["needed_w"] == 1350  # 1.5 x 900

    @pytest.mark.parametrize(("watts", "severity"), [(819, Severity.FAIL), (820, Severity.PASS)])
    def test_atx3_native_rides_out_twice_its_rating(self, check, watts: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        psu = f"{{watts: {watts}, atx_version: '3.0', connectors: [12vhpwr]}}"
        finding = one(check(rig(psu), select=("PWR002",)), "PWR002")
        # 2 x 350 W x 2.2 + 100 W = 1,640 W <= 2 x PSU
        assert finding.severity is severity and finding.evidence["peak_w"] == pytest.approx(1640)

    def test_atx3_without_native_connector_is_treated_as_legacy(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig("{watts: 1000, atx_version: '3.0'}"), select=("PWR002",)), "PWR002")
        assert finding.evidence["formula"].startswith("PSU >= 1.5")


class TestConnectors:
    @pytest.mark.parametrize(
        ("limit", "severity"),
        # 375 W budget; 8-pin plugs have a wide physical margin, so no margin warning below it
        [(375, Severity.PASS), (376, Severity.FAIL)],
    )
    def test_card_limit_against_plugs_and_slot(self, check, limit: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        gpus = f"{{model: RTX 3090, count: 1, power_limit_w: {limit}}}"  # 2 x 8-pin + slot = 375 W
        finding = one(check(rig("{watts: 1600}", gpus=gpus), select=("PWR003",)), "PWR003")
        assert finding.severity is severity and finding.evidence["budget_w"] == 375

    def test_12vhpwr_card_on_a_psu_without_the_cable(self, check) -> None:  # type: ignore[no-untyped-def]
        gpus = "{model: RTX 4090, count: 1}"
        finding = one(
            check(rig("{watts: 1200, connectors: [8pin-pcie]}", gpus=gpus), select=("PWR003",)), "PWR003"
        )
        assert (
            finding.severity is Severity.WARN and "3 separate 8-pin PCIe cables" in finding.message
        )  # 450 / 150


class TestRedundancy:
    # vendors budget N of N+M against the maximum input power itself (DGX H100: 4 x 3.3 kW for 10.2 kW)
    @pytest.mark.parametrize(("maximum", "severity"), [(13200, Severity.PASS), (13201, Severity.FAIL)])
    def test_capacity_with_spares_failed(self, check, maximum: int, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        text = rig('{watts: 3300, count: 6, redundancy: "4+2"}', extra=f"    max_power_w: {maximum}\n")
        finding = one(check(text, select=("PWR004",)), "PWR004")
        assert finding.severity is severity and finding.evidence["capacity_with_spares_failed_w"] == 13200

    def test_count_must_match(self, check) -> None:  # type: ignore[no-untyped-def]
        finding = one(check(rig('{watts: 3300, count: 5, redundancy: "4+2"}'), select=("PWR004",)), "PWR004")
        assert finding.severity is Severity.WARN and "count: 6" in finding.fix


class TestWallCircuit:
    SITE = "site:\n  circuit: {volts: 120, amps: 15}\n"  # 1,800 W nominal, 1,440 W continuous, warn above 1,296 W

    @pytest.mark.parametrize(
        ("wall", "severity"),
        [(1296, Severity.PASS), (1297, Severity.WARN), (1440, Severity.WARN), (1441, Severity.FAIL)],
    )
    def test_nec_80_percent(self, check, wall: float, severity: Severity) -> None:  # type: ignore[no-untyped-def]
        """max_power_w is the vendor's input power: it is the wall power as it is (not divided by the PSU's
        efficiency a second time)."""
        text = rig("{watts: 2000, efficiency_pct: 90}", site=self.SITE, extra=f"    max_power_w: {wall}\n")
        finding = one(check(text, select=("PWR005",)), "PWR005")
        assert finding.severity is severity
        assert finding.evidence["continuous_limit_w"] == 1440
        assert finding.evidence["wall_w"] == wall

    @pytest.mark.parametrize(("limit", "severity"), [(483, Severity.PASS), (484, Severity.WARN)])
    def test_wall_power_divides_the_dc_load_by_efficiency(
        self, check, limit: int, severity: Severity
    ) -> None:  # type: ignore[no-untyped-def]
        # 2 x limit + 100 W CPU + 100 W platform at 90%: 1,166 / 0.9 = 1,295.6 W <= 1,296 W < 1,168 / 0.9
        gpus = f"{{model: RTX 3090, count: 2, power_limit_w: {limit}}}"
        text = rig("{watts: 2000, efficiency_pct: 90}", gpus=gpus, site=self.SITE)
        finding = one(check(text, select=("PWR005",)), "PWR005")
        assert finding.severity is severity
        assert finding.evidence["wall_w"] == round((2 * limit + 200) / 0.9)

    def test_efficiency_follows_the_80plus_curve(self) -> None:
        from rigcheck.core.catalog.facts import load_rule_facts
        from rigcheck.core.estimate.power import PsuGroup, efficiency

        facts = load_rule_facts("power")
        psu = PsuGroup(0, "", 1000, 1, 1, 0, "80plus-gold", None, None, (), None)
        assert efficiency(psu, 0.5, facts)[0] == pytest.approx(0.90)
        assert efficiency(psu, 0.35, facts)[0] == pytest.approx(0.885)  # halfway between 87% and 90%
        assert efficiency(psu, 1.0, facts)[0] == pytest.approx(0.87)

    def test_three_phase_and_several_circuits(self, check) -> None:  # type: ignore[no-untyped-def]
        three = "site:\n  circuit: {volts: 415, amps: 32, phases: 3}\n"
        finding = one(check(rig("{watts: 2000}", site=three), select=("PWR005",)), "PWR005")
        assert finding.evidence["continuous_limit_w"] == round(415 * 32 * math.sqrt(3) * 0.8)  # 18,401 W
        two = "site:\n  circuits: [{name: a, volts: 120, amps: 15}, {name: b, volts: 120, amps: 15}]\n"
        text = rig("[{watts: 1000, circuit: a}, {watts: 1000, circuit: b}]", site=two)
        findings = [f for f in check(text, select=("PWR005",)).findings if f.code == "PWR005"]
        assert {f.evidence["circuit"] for f in findings} == {"a", "b"}
        assert all(f.severity is Severity.PASS for f in findings)  # 900 W split over two circuits

    def test_puget_quad_3090_on_a_15_amp_circuit(self, check) -> None:  # type: ignore[no-untyped-def]
        """docs/research/rules_facts.md section 7.6: 4 x 350 W + 165 W (W-2255) + 100 W = 1,665 W DC on one 1,600 W
        Platinum PSU fails PSU-1; at full load Platinum is 89% efficient, so 1,665 / 0.89 = 1,871 W at the
        wall fails the 1,440 W circuit. (Puget measured 1,717 W at the wall with the cards limited to 300 W:
        rigcheck gives (1,200 + 265) / 0.895 = 1,637 W for that case, 5% under.)"""
        text = (
            f"apiVersion: rigcheck/v1\nkind: Rig\nname: puget\n{self.SITE}nodes:\n  - name: ws\n"
            "    gpus: {model: RTX 3090, count: 4, cooler: blower}\n    cpu: {cores: 10, tdp_w: 165}\n"
            "    psu: {watts: 1600, efficiency: 80plus-platinum}\n"
        )
        report = check(text, select=("PWR001", "PWR005"))
        assert one(report, "PWR001").severity is Severity.FAIL
        wall = one(report, "PWR005")
        assert wall.severity is Severity.FAIL and wall.evidence["wall_w"] == 1871
