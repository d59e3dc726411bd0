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
