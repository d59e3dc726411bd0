"""Issue 48, point 8: ``plan --buy`` for a home builder. A ``--rig`` file may carry its own ``price:`` (a quote,
a receipt), ranked with its energy like a built rig; the electricity rate is the user's pick (a number, the
data's residential / industrial / commercial rate, or REGION:SECTOR), and a plan in CNY prices a home's
energy at China's residential rate, not the industrial one."""

from __future__ import annotations

import json

import pytest

from rigcheck.core.plan.prices import price_book

from .test_plan import LORA_7B, _plan, _row

RIG = """apiVersion: rigcheck/v1
kind: Rig
name: quoted
{price}nodes:
  - name: ws
    gpus: {{model: RTX 4090, count: 1}}
    memory_gib: 64
    cpu: {{cores: 16}}
    psu: {{watts: 1000, efficiency: 80plus-gold}}
"""


def _rates() -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
    return {(row["region"], row["sector"]): row for row in price_book().electricity}


def test_a_rig_files_own_price_is_its_purchase(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(
        RIG.format(price="price: {amount: 2999, currency: EUR, source: a shop's quote}\n"), "rig.yaml"
    )
    plan = _plan(
        run_cli, write_spec, LORA_7B, "--buy", "--gpus", "RTX 4090", "--rig", rig, "--electricity", "0.25"
    )
    row = _row(plan, rig)
    eur_usd = price_book().convert(1.0, "EUR", "USD")
    assert row["cost"]["purchase"] == pytest.approx(2999 * eur_usd)  # converted at the recorded rate
    assert row["cost"]["total"]["default"] == pytest.approx(
        row["cost"]["purchase"] + row["cost"]["energy"]["default"]
    )
    assert row["prices"][0]["source"] == "a shop's quote" and row["prices"][0]["currency"] == "EUR"
    unpriced = write_spec(RIG.format(price=""), "plain.yaml")
    plain = _row(
        _plan(run_cli, write_spec, LORA_7B, "--buy", "--gpus", "RTX 4090", "--rig", unpriced), unpriced
    )
    assert plain["cost"]["total"] is None  # no price is invented for it


def test_a_bad_price_is_a_spec_error(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(RIG.format(price="price: {amount: -5}\n"), "rig.yaml")
    result = run_cli("validate", rig)
    assert result.exit_code == 2 and "/price/amount" in result.out


@pytest.mark.parametrize(
    ("currency", "choice", "row"),
    [
        ("USD", None, ("US", "residential")),
        ("USD", "industrial", ("US", "industrial")),
        ("USD", "commercial", ("US", "commercial")),
        ("EUR", None, ("EU", "household")),
        ("EUR", "industrial", ("EU", "non-household")),
        ("CNY", None, ("CN", "residential")),  # a home in China, not a factory
        ("CNY", "industrial", ("CN", "industrial")),
        ("USD", "CN:residential", ("CN", "residential")),
    ],
)
def test_the_electricity_rate_is_the_users_pick(run_cli, write_spec, currency, choice, row) -> None:  # type: ignore[no-untyped-def]
    args = ["--buy", "--gpus", "RTX 4090", "--max-gpus", "1", "--currency", currency]
    plan = _plan(run_cli, write_spec, LORA_7B, *args, *(["--electricity", choice] if choice else []))
    source = _rates()[row]
    expected = price_book().convert(float(source["price_per_kwh"]), source["currency"], currency)
    assert plan["electricity"]["price_per_kwh"] == pytest.approx(expected, abs=1e-4)
    assert plan["electricity"]["source"].startswith(f"{row[0]} {row[1]}: ")


def test_a_number_and_a_name_that_is_not_there(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B, "--buy", "--gpus", "RTX 4090", "--electricity", "0.42")
    assert plan["electricity"] == {
        "price_per_kwh": 0.42,
        "currency": "USD",
        "source": "--electricity",
        "as_of": None,
    }
    path = write_spec(LORA_7B, "workload.yaml")
    bad = run_cli("plan", path, "--electricity", "moon:residential")
    assert bad.exit_code == 2 and len(bad.err.strip().splitlines()) == 1 and "US:residential" in bad.err
    assert run_cli("plan", path, "--electricity", "-1").exit_code == 2
    assert json.loads(run_cli("plan", path, "-f", "json", "--buy", "--gpus", "RTX 4090").out)["electricity"]


# -- a 4-GPU workstation, priced ---------------------------------------------------------------------


def test_a_four_gpu_workstation_build_has_a_sourced_total(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    """Four RTX 6000 Ada on the WRX90 workstation: the purchase is the sum of its dated, sourced parts
    (board, CPU and RDIMM kit from one build list of 2026-06-23; as many kits as the board's slots
    hold), and its PSU is the 2,200 W unit:
    4 x 300 W + 350 W CPU + 100 W platform = 1,650 W is 103% of a 1,600 W unit (PWR001 fails) and 75%
    of 2,200 W (PWR001 passes; PWR002 warns about the wall circuit)."""
    plan = _plan(run_cli, write_spec, LORA_7B, "--buy", "--gpus", "RTX 6000 Ada")
    row = _row(plan, "build 4x NVIDIA RTX 6000 Ada Generation (workstation)")
    assert all(price["amount"] is not None for price in row["prices"])
    assert row["cost"]["purchase"] == pytest.approx(sum(price["amount"] for price in row["prices"]))
    book = price_book()
    template = book.template("workstation")
    by_kind = {price["what"]: price for price in row["prices"]}
    for kind in ("motherboard", "cpu", "ram"):
        [part] = template.parts[kind]
        assert by_kind[kind]["amount"] == part.price.amount and by_kind[kind]["as_of"] == "2026-06-23"
        assert part.attributes["observed_in"] == "build-list-2026-06-23"
    assert by_kind["psu"]["item"] == "Super Flower Leadex 2200 W ATX 3.1"
    # 192 GB of VRAM asks for more RAM than one 8 x 32 GB kit, and the board's 8 slots hold one kit
    [kit] = template.parts["ram"]
    assert template.memory_slots == kit.attributes["modules"] == 8
    assert (
        by_kind["ram"]["item"].startswith("1 x ") and "RAM capped at the workstation's 256 GB" in row["notes"]
    )
    assert "PWR001" not in row["failures"] + row["warnings"] and row["verdict"] == "warn"


def test_sizing_takes_a_part_that_only_warns_over_one_that_fails() -> None:
    """The PSU is the cheapest with which PWR001/PWR002 pass; where none passes, the cheapest with which
    they only warn, never a failing one beside it (judged here by a stand-in that fails every 1600 W
    unit and warns on the 2,200 W one)."""
    from rigcheck.core.catalog.catalog import builtin_catalog
    from rigcheck.core.engine.severity import Severity
    from rigcheck.core.plan.sizing import build

    book = price_book()
    template = book.template("workstation")
    asked: list[float] = []

    def judge(rig: dict, codes: tuple[str, ...]) -> Severity:  # type: ignore[type-arg]
        if codes != ("PWR001", "PWR002"):
            return Severity.PASS
        watts = rig["nodes"][0]["psu"]["watts"]
        asked.append(watts)
        return Severity.FAIL if watts < 2000 else Severity.WARN

    gpu = builtin_catalog().get("rtx-6000-ada")
    candidate = build(book, template, gpu, 4, judge)
    psu = [name for name, _ in candidate.parts if "W" in name and ("PRIME" in name or "Leadex" in name)]
    assert psu == ["Super Flower Leadex 2200 W ATX 3.1"]
    assert sorted(asked) == sorted(part.attributes["watts"] for part in template.parts["psu"])
    assert candidate.rig["nodes"][0]["psu"]["watts"] == 2200
