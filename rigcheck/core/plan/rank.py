"""Cost, rank and the Pareto front.

Rent: the run's hours (with their range) x the price per hour of all the nodes (a rental without a run
length, such as serving, ranks by its price per hour). Buy: the parts' prices
plus energy: the sustained DC power PWR001 computes / the PSU's efficiency at half load
(``power.efficiency_80plus``) x hours x the price per kWh. Cost per million tokens: the total over the
run's tokens (rent), the energy over them (buy: the marginal cost of a run on a machine one owns), or,
for rented serving, the hourly price over the output tokens of an hour. A candidate
passes when the rules pass it (warnings allowed), its cost is within ``--budget`` and BW003 (with
``--deadline`` as ``run.hours``) does not fail it. Passing rows rank by cost, then time; those
without a cost follow them; failing ones are listed last, unranked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.plan.evaluate import Outcome
from rigcheck.core.plan.model import Cost, PlanRow, PriceRecord, Span
from rigcheck.core.plan.prices import Price, PriceBook
from rigcheck.core.spec.numbers import fmt


@dataclass(frozen=True)
class Money:
    """How the plan prices: its currency, the price book (exchange rates) and the electricity price."""

    book: PriceBook
    currency: str
    kwh_price: float | None  # in `currency`

    def of(self, price: Price) -> float:
        return self.book.convert(price.amount, price.currency, self.currency)


def row_for(outcome: Outcome, money: Money, budget: float | None) -> PlanRow:
    candidate = outcome.candidate
    hours = Span(**outcome.hours) if outcome.hours else None
    cost = _cost(outcome, money, hours)
    total = cost.total.default if cost.total else (cost.purchase if candidate.kind == "buy" else None)
    over = budget is not None and total is not None and total > budget
    deciding = outcome.deciding
    why = f"{deciding.code}: {deciding.message}" if deciding else None
    if why is None and not outcome.passes and outcome.notes:  # a rig rigcheck could not read
        why = outcome.notes[-1]
    if over and why is None:
        why = f"over the budget: {fmt(total or 0, 0)} {money.currency} > {fmt(budget or 0, 0)}"
    prices = [
        PriceRecord(
            item=item, what=p.what, amount=p.amount, currency=p.currency, source=p.source, as_of=p.as_of
        )
        if p is not None
        else PriceRecord(
            item=item, what="no sourced price", amount=None, currency="", source=None, as_of=None
        )
        for item, p in ([(candidate.name, candidate.hourly)] if candidate.hourly else candidate.parts)
    ]
    return PlanRow(
        rank=None,
        candidate=candidate.name,
        kind=candidate.kind,
        gpus=candidate.gpu_label,
        gpu_count=candidate.gpus,
        nodes=candidate.nodes,
        data_parallel=outcome.dp,
        verdict=outcome.verdict,  # type: ignore[arg-type]
        passes=outcome.passes and not over,
        hours=hours,
        tokens_per_second=outcome.tokens_per_second,
        cost=cost,
        pareto=False,
        over_budget=over,
        why_not=why,
        fix=deciding.fix if deciding else None,
        failures=sorted({finding.code for finding in outcome.failures}),
        warnings=outcome.warnings,
        notes=[*candidate.notes, *outcome.notes],
        prices=prices,
    )


def _cost(outcome: Outcome, money: Money, hours: Span | None) -> Cost:
    candidate = outcome.candidate
    tokens = outcome.run_tokens
    if candidate.hourly is not None:
        hourly = money.of(candidate.hourly)
        total = (
            Span(default=hourly * hours.default, low=hourly * hours.low, high=hourly * hours.high)
            if hours
            else None
        )
        per_million = None
        if total is not None and tokens:
            per_million = total.default / tokens * 1e6
        elif total is None and outcome.tokens_per_second:
            per_million = hourly / (outcome.tokens_per_second * 3600) * 1e6
        return Cost(total=total, hourly=hourly, per_million_tokens=per_million)
    if not candidate.purchase_known:
        return Cost(total=None)
    purchase = sum(money.of(price) for _, price in candidate.parts if price is not None)
    energy = _energy(outcome, money, hours)
    total = None
    if energy is not None:
        total = Span(
            default=purchase + energy.default, low=purchase + energy.low, high=purchase + energy.high
        )
    elif hours is None:
        total = Span(default=purchase, low=purchase, high=purchase)
    # a machine one owns: the marginal cost of a run is its energy
    per_million = energy.default / tokens * 1e6 if energy is not None and tokens else None
    return Cost(total=total, purchase=purchase, energy=energy, per_million_tokens=per_million)


def _scaled(hours: Span, rate: float) -> Span:
    return Span(default=rate * hours.default, low=rate * hours.low, high=rate * hours.high)


def _energy(outcome: Outcome, money: Money, hours: Span | None) -> Span | None:
    if hours is None or outcome.sustained_w is None or money.kwh_price is None:
        return None
    efficiency = _half_load_efficiency(outcome)
    kw = outcome.sustained_w / efficiency / 1000
    return Span(
        default=kw * hours.default * money.kwh_price,
        low=kw * hours.low * money.kwh_price,
        high=kw * hours.high * money.kwh_price,
    )


def _half_load_efficiency(outcome: Outcome) -> float:
    table = load_rule_facts("power")["efficiency_80plus"]
    psu = outcome.candidate.rig["nodes"][0].get("psu") or {}
    rating = str(psu.get("efficiency", "unknown"))
    values = table[rating] if rating in table else table["unknown"]
    return float(values[1] if isinstance(values, list | tuple) else values)


def rank(rows: Sequence[PlanRow]) -> list[PlanRow]:
    """Within each kind (rent, buy, reference, given): passing rows by cost then time (those without a
    cost after those with one), then the failing ones; the Pareto front is marked within the kind too
    (a purchase and a rental are not the same kind of cost)."""

    def key(row: PlanRow) -> tuple[int, float, float]:
        time = row.hours.default if row.hours else float("inf")
        return (0 if row.passes else 1, ranking_cost(row), time)

    ranked = []
    for kind in ("rent", "buy", "reference", "given"):
        ordered = sorted((row for row in rows if row.kind == kind), key=key)
        front = _pareto(ordered)
        for index, row in enumerate(ordered, start=1):
            update = {"rank": index if row.passes else None, "pareto": row.candidate in front}
            ranked.append(row.model_copy(update=update))
    return ranked


def ranking_cost(row: PlanRow) -> float:
    """What a row is ranked by: the run's cost; for a rental without a run length (serving), its
    price per hour; infinity without a sourced price."""
    if row.cost.total is not None:
        return row.cost.total.default
    if row.cost.hourly is not None:
        return row.cost.hourly
    return float("inf")


def _pareto(rows: Sequence[PlanRow]) -> set[str]:
    """Passing rows with a cost and a time that no other passing row beats on both; for serves (no run
    length), their price per hour and the time a token takes (1 / tokens per second)."""
    points = [
        (row.candidate, row.cost.total.default, row.hours.default)
        for row in rows
        if row.passes and row.cost.total is not None and row.hours is not None
    ]
    if not points:
        points = [
            (row.candidate, row.cost.hourly, 1 / speed)
            for row in rows
            if row.passes
            and row.cost.hourly is not None
            and row.hours is None
            and (speed := row.tokens_per_second or 0.0) > 0
        ]
    return {
        name
        for name, cost, time in points
        if not any(c <= cost and t <= time and (c < cost or t < time) for _, c, t in points)
    }
