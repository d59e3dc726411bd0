"""The plan as data: what ``rigcheck plan -f json`` writes (``schemas/plan.schema.json``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Span(_Strict):
    """A figure with its range (the estimate's low and high ends)."""

    default: float
    low: float
    high: float


class PriceRecord(_Strict):
    """A price the plan used, with where and when it was read."""

    item: str
    what: str
    amount: float | None = Field(description="In `currency`; null: no sourced price (never guessed).")
    currency: str
    source: str | None
    as_of: str | None


class Cost(_Strict):
    """The cost of the candidate, in the plan's currency."""

    total: Span | None = Field(
        description="Rent: hours x price; buy: purchase + energy (over the run's time range). Null when a part "
        "has no sourced price or the run length is unknown."
    )
    hourly: float | None = Field(None, description="Rent: the price per hour of all its nodes.")
    purchase: float | None = Field(None, description="Buy: the parts, when every part has a sourced price.")
    energy: Span | None = Field(None, description="Buy: electricity for the run at the plan's price per kWh.")
    per_million_tokens: float | None = Field(
        None,
        description="Training: total / tokens x 1e6; rented serving: hourly / output tokens per hour x 1e6.",
    )


class PlanRow(_Strict):
    rank: int | None = Field(description="1 = the cheapest that passes; null for a candidate that fails.")
    candidate: str
    kind: Literal["rent", "buy", "reference", "given"]
    gpus: str
    gpu_count: int
    nodes: int
    data_parallel: int = Field(description="The data-parallel degree the job was checked with on it.")
    verdict: Literal["pass", "warn", "fail"]
    passes: bool = Field(description="Passes the rules, within --budget and --deadline.")
    hours: Span | None
    tokens_per_second: float | None
    cost: Cost
    pareto: bool = Field(
        description="On the cost-versus-time front: nothing passing is both cheaper and faster."
    )
    over_budget: bool
    why_not: str | None = Field(description="The deciding failure: code and message (or the budget).")
    fix: str | None = None
    failures: list[str] = Field(description="The rules that failed on it (codes).")
    warnings: list[str] = Field(description="The rules that warned on it (codes).")
    notes: list[str]
    prices: list[PriceRecord]


class Electricity(_Strict):
    price_per_kwh: float
    currency: str
    source: str
    as_of: str | None


class PriceAge(_Strict):
    oldest: str | None
    newest: str | None
    oldest_age_days: int | None


class PlanReport(_Strict):
    schema_version: Literal[1] = 1
    tool: str
    workload: str
    workload_path: str
    task: str
    mode: Literal["rent", "buy", "both"]
    currency: str
    budget: float | None
    deadline_hours: float | None
    electricity: Electricity | None
    answer: str = Field(
        description="The one-line answer: the cheapest that passes, the fastest under budget."
    )
    rows: list[PlanRow]
    prices_as_of: PriceAge
    fx: list[dict[str, str | float | bool]]
    candidates: int
    checks_run: int
    seconds: float
