"""One plan: the candidates the request asks for, the rules on each, the costs, the ranking and the
one-line answer."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from rigcheck._version import __version__
from rigcheck.core.plan.candidates import (
    MULTI_NODE_COUNTS,
    Candidate,
    cloud_candidate,
    cloud_candidates,
    given_candidates,
    reference_candidates,
)
from rigcheck.core.plan.evaluate import Evaluator, Outcome, judge_for
from rigcheck.core.plan.model import Electricity, PlanReport, PlanRow, PriceAge
from rigcheck.core.plan.prices import PriceBook, price_book
from rigcheck.core.plan.rank import Money, rank, ranking_cost, row_for
from rigcheck.core.plan.sizing import built_candidates
from rigcheck.core.spec.documents import SpecDocument

Mode = Literal["rent", "buy", "both"]


@dataclass(frozen=True)
class PlanRequest:
    """What ``rigcheck plan`` asks for, read from the command line once."""

    workload: SpecDocument
    mode: Mode = "both"
    budget: float | None = None
    deadline_hours: float | None = None
    gpus: tuple[str, ...] | None = None  # catalog ids; None: every GPU the price data lists
    max_gpus: int = 64
    rigs: tuple[SpecDocument, ...] = ()
    currency: str = "USD"
    #: per kWh in `currency`, or the data's row to use (``industrial``, ``CN:residential``); None: residential
    electricity: float | str | None = None
    references: bool = True
    all_gpus: bool = False  # build rigs from every catalog GPU, priced or not
    scale_data_parallel: bool = True
    today: date | None = None


def make_plan(request: PlanRequest, registry: Any, catalog: Any, book: PriceBook | None = None) -> PlanReport:
    started = time.perf_counter()
    book = book or price_book()
    evaluator = Evaluator(
        request.workload,
        registry,
        catalog,
        deadline_hours=request.deadline_hours,
        scale_data_parallel=request.scale_data_parallel,
    )
    wanted = set(request.gpus) if request.gpus else None
    candidates = _candidates(request, book, catalog, evaluator, wanted)
    outcomes = []
    for candidate in candidates:
        outcome = evaluator.evaluate(candidate)
        outcomes.append(outcome)
        # more nodes shrink what each GPU holds only where data parallelism shards it (training)
        if candidate.kind == "rent" and candidate.nodes == 1 and outcome.fails_on_memory and evaluator.scale:
            outcomes.extend(_more_nodes(candidate, evaluator, request.max_gpus))
    electricity, kwh = _electricity(request, book)
    money = Money(book, request.currency, kwh)
    rows = rank([row_for(outcome, money, request.budget) for outcome in outcomes])
    today = request.today or date.today()
    return PlanReport(
        tool=f"rigcheck {__version__}",
        workload=request.workload.name,
        workload_path=request.workload.path,
        task=request.workload.model.task,
        mode=request.mode,
        currency=request.currency,
        budget=request.budget,
        deadline_hours=request.deadline_hours,
        electricity=electricity,
        answer=answer(rows, request),
        rows=rows,
        prices_as_of=_age(rows, today),
        fx=[dict(row) for row in book.fx_used(_currencies(rows), request.currency)],
        candidates=len(outcomes),
        checks_run=evaluator.checks,
        seconds=round(time.perf_counter() - started, 3),
    )


def _candidates(
    request: PlanRequest, book: PriceBook, catalog: Any, evaluator: Evaluator, wanted: set[str] | None
) -> list[Candidate]:
    found: list[Candidate] = []
    if request.mode in ("rent", "both"):
        found += [c for c in cloud_candidates(book, wanted) if c.gpus <= request.max_gpus]
    if request.mode in ("buy", "both"):
        if wanted is not None:
            gpu_ids = sorted(wanted)
        elif request.all_gpus:
            gpu_ids = sorted(
                gpu.id for gpu in catalog if gpu.vendor == "nvidia" and gpu.form_factor in ("PCIe", "SXM")
            )
        else:
            gpu_ids = sorted(book.gpu_price_sources)
        found += built_candidates(book, catalog, judge_for(evaluator), gpu_ids, request.max_gpus)
    if request.references:
        for candidate in reference_candidates(book):
            rented = candidate.kind == "rent"
            if (rented and request.mode == "buy") or (not rented and request.mode == "rent"):
                continue
            if wanted is None or _gpu_id(catalog, candidate.gpu_name) in wanted:
                found.append(candidate)
    found += given_candidates(list(request.rigs), book)
    return found


def _gpu_id(catalog: Any, name: str) -> str | None:
    from rigcheck.core.catalog.catalog import CatalogLookupError

    try:
        return str(catalog.lookup(name).id)
    except CatalogLookupError:  # a name the catalog does not know: the rules will say so
        return None


def _more_nodes(candidate: Candidate, evaluator: Evaluator, max_gpus: int) -> list[Outcome]:
    """Several nodes of an 8-GPU size whose one node fails on memory, up to the first count that passes."""
    offer = candidate.offer
    if offer is None or offer.gpus < 8:
        return []
    tried = []
    for nodes in MULTI_NODE_COUNTS:
        if nodes * offer.gpus > max_gpus:
            break
        outcome = evaluator.evaluate(cloud_candidate(offer, nodes))
        tried.append(outcome)
        if not outcome.fails_on_memory:
            break
    return tried


def _electricity(request: PlanRequest, book: PriceBook) -> tuple[Electricity | None, float | None]:
    """The price of a kWh: ``--electricity`` as a number (in the plan's currency), else the data's row it
    names (``industrial``, ``CN:residential``), else the currency's region's residential price."""
    chosen = request.electricity
    if isinstance(chosen, int | float):
        return (
            Electricity(price_per_kwh=chosen, currency=request.currency, source="--electricity", as_of=None),
            float(chosen),
        )
    row = book.electricity_for(request.currency, chosen)
    if row is None:
        if chosen:
            from rigcheck.core.engine.errors import UsageError

            raise UsageError(
                f"rigcheck plan --electricity {chosen}: no such price in the data; give a number, residential, "
                f"industrial, commercial, or one of {', '.join(book.electricity_choices())}"
            )
        return None, None
    price = book.convert(float(row["price_per_kwh"]), row["currency"], request.currency)
    where = f"{row['region']} {row.get('sector', '')}".strip()
    return (
        Electricity(
            price_per_kwh=round(price, 4),
            currency=request.currency,
            source=f"{where}: {row['source']}",
            as_of=str(row.get("as_of")),
        ),
        price,
    )


def answer(rows: Sequence[PlanRow], request: PlanRequest) -> str:
    """'cheapest to rent that passes: ...; cheapest to buy ...; fastest under budget: ...'."""
    passing = [row for row in rows if row.passes]
    if not passing:
        closest = rows[0] if rows else None
        if closest is None:
            return "no candidates"
        return f"nothing passes; the closest, {closest.candidate}, fails: {closest.why_not}"
    parts = []
    for kind, label in (("rent", "to rent"), ("buy", "to buy")):
        priced = [r for r in passing if r.kind == kind and ranking_cost(r) < float("inf")]
        if priced:
            best = min(priced, key=ranking_cost)
            parts.append(f"cheapest {label} that passes: {best.candidate} ({_said(best, request.currency)})")
    timed = [r for r in passing if r.hours is not None and r.cost.total is not None]
    if timed:
        fastest = min(timed, key=lambda r: r.hours.default if r.hours else 0.0)
        under = " under budget" if request.budget is not None else ""
        parts.append(f"fastest{under}: {fastest.candidate} ({_said(fastest, request.currency)})")
    if not parts:
        parts.append(f"passes: {passing[0].candidate} (no sourced price)")
    return "; ".join(parts)


def _said(row: PlanRow, currency: str) -> str:
    from rigcheck.core.plan.render import hours_text, money_text

    bits = []
    if row.hours is not None:
        bits.append(hours_text(row).split(" (")[0])
    if row.cost.total is not None:
        bits.append(f"{money_text(row.cost.total.default)} {currency}")
    elif row.cost.hourly is not None:
        bits.append(f"{money_text(row.cost.hourly)} {currency}/h")
    return ", ".join(bits) or "no run length"


def _age(rows: Sequence[PlanRow], today: date) -> PriceAge:
    dates = sorted({p.as_of for row in rows for p in row.prices if p.as_of})
    if not dates:
        return PriceAge(oldest=None, newest=None, oldest_age_days=None)
    return PriceAge(
        oldest=dates[0], newest=dates[-1], oldest_age_days=(today - date.fromisoformat(dates[0])).days
    )


def _currencies(rows: Sequence[PlanRow]) -> set[str]:
    return {p.currency for row in rows for p in row.prices if p.currency}
