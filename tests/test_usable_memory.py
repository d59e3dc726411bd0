"""Issue 46: ECC is not counted twice. A GDDR data-center card with optional ECC gives 1/16 of its
memory to check bits while ECC is on. nvidia-smi's total for the A10G (23,028 MiB, NVIDIA/DCGM#232),
A10, L4, L40S and T4 (modal-labs/modal-client#2797) is already the ECC-on figure; ``ecc: true`` once
took 1/16 off it again (the A10G's vLLM budget 1.3 GiB short, the L40S's 2.5 GiB). An HBM card's total is
what nvidia-smi shows: 81,920 MiB for the A100 80GB in both forms (the PCIe card had 97% of 80 GiB)."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.estimate.estimate import usable_bytes
from rigcheck.core.estimate.memory import GIB

from .conftest import REPO

TOOL_OUTPUTS = REPO / "tests" / "data" / "tool-outputs"

SHARE = float(load_rule_facts("memory")["fit"]["usable_fallback_fraction"])


@pytest.mark.parametrize(
    ("gpu", "measured_gib"), [("a10g", 22.5), ("a10", 22.5), ("l4", 22.5), ("l40s", 45.0), ("t4", 15.0)]
)
def test_a_total_measured_with_ecc_on_is_not_cut_again(catalog, gpu: str, measured_gib: float) -> None:  # type: ignore[no-untyped-def]
    facts = catalog.lookup(gpu)
    assert facts.ecc == "optional" and facts.usable_with_ecc_on is True
    assert usable_bytes(facts, ecc_enabled=True)[0] == measured_gib * GIB  # as nvidia-smi shows it
    assert usable_bytes(facts, ecc_enabled=None)[0] == measured_gib * GIB  # the default state: on
    off, why = usable_bytes(facts, ecc_enabled=False)
    assert off == pytest.approx(measured_gib * 16 / 15 * GIB) and "16/15" in why  # A10G: 24.0 GiB


def test_a_figure_from_capacity_still_loses_a_sixteenth_with_ecc_on(catalog) -> None:  # type: ignore[no-untyped-def]
    """The rig's own memory_gib is a capacity: ECC on takes 1/16 of the fallback share (24 x share x 15/16)."""
    facts = catalog.lookup("a10g")
    usable, why = usable_bytes(facts, memory_gib=24, ecc_enabled=True)
    assert usable == pytest.approx(24 * SHARE * 15 / 16 * GIB) and "15/16" in why
    assert usable_bytes(facts, memory_gib=24, ecc_enabled=False)[0] == pytest.approx(24 * SHARE * GIB)


@pytest.mark.parametrize(
    ("gpu", "output"),
    [
        ("a100-pcie-80gb", "nvidia-smi-text/1x-a100-80gb-pcie-drv535-default-table.txt"),
        ("a100-pcie-40gb", "nvidia-smi-text/2x-a100-pcie-40gb-drv555-default-table.txt"),
    ],
)
def test_an_hbm_card_can_use_what_nvidia_smi_shows(catalog, gpu: str, output: str) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.evidence.loader import load_evidence

    shown = {card.memory_total_mib for card in load_evidence([TOOL_OUTPUTS / output])[0].gpus}
    (mib,) = shown
    assert usable_bytes(catalog.lookup(gpu), ecc_enabled=True)[0] == mib * 2**20
