"""``rigcheck plan`` as text (a ranked table per kind, the answer on top) and Markdown."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rigcheck.core.plan.model import PlanReport, PlanRow
from rigcheck.core.report.render.escape import escape_markdown, escape_text
from rigcheck.core.spec.numbers import fmt

SECTIONS = (("rent", "to rent"), ("buy", "to buy"), ("reference", "reference rigs"), ("given", "your rigs"))
COLUMNS = ("#", "candidate", "GPUs", "verdict", "time", "cost", "per M tok", "why not")


def hours_text(row: PlanRow) -> str:
    """The run's time and its range; for a serve (no run length) the tokens it serves per second."""
    if row.hours is None:
        return f"{fmt(row.tokens_per_second, 0)} tok/s" if row.tokens_per_second else "-"
    span = row.hours

    def one(value: float) -> str:
        return f"{value * 60:.0f} min" if value < 1 else f"{fmt(value, 1)} h"

    return f"{one(span.default)} ({one(span.low)}-{one(span.high)})"


def money_text(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def cost_text(row: PlanRow) -> str:
    cost = row.cost
    if cost.total is not None:
        text = money_text(cost.total.default)
        if cost.hourly is not None:
            text += f" ({money_text(cost.hourly)}/h)"
        return text
    if cost.hourly is not None:
        return f"{money_text(cost.hourly)}/h"
    return "no price"


def cells(row: PlanRow, limit: int | None = 90) -> list[str]:
    why = row.why_not or ("warn: " + ", ".join(row.warnings) if row.warnings else "")
    if limit is not None and len(why) > limit:
        why = why[: limit - 3] + "..."
    return [
        (str(row.rank) if row.rank else "-") + ("*" if row.pareto else ""),
        row.candidate,
        row.gpus,
        row.verdict if row.passes or not row.over_budget else "budget",
        hours_text(row),
        cost_text(row),
        money_text(row.cost.per_million_tokens),
        why,
    ]


def render_text(report: PlanReport, *, limit: int = 15, show_failing: int = 5) -> str:
    lines = [
        f"rigcheck plan: {escape_text(report.workload)} ({report.task}), {report.mode}, prices in {report.currency}",
        f"answer: {escape_text(report.answer)}",
        "",
    ]
    for kind, title in SECTIONS:
        rows = [row for row in report.rows if row.kind == kind]
        if not rows:
            continue
        passing = [row for row in rows if row.passes][:limit]
        failing = [row for row in rows if not row.passes][:show_failing]
        lines.append(f"{title}: {sum(r.passes for r in rows)} of {len(rows)} pass")
        lines.extend(_table([[escape_text(cell) for cell in cells(row)] for row in passing + failing]))
        hidden = len(rows) - len(passing) - len(failing)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more (-f json lists all)")
        lines.append("")
    lines += _footer(report, escape_text)
    return "\n".join(lines) + "\n"


def render_markdown(report: PlanReport, *, limit: int = 15) -> str:
    md = escape_markdown
    lines = [f"### rigcheck plan: {md(report.workload)} ({report.task})", "", f"**{md(report.answer)}**", ""]
    for kind, title in SECTIONS:
        rows = [row for row in report.rows if row.kind == kind]
        if not rows:
            continue
        shown = [row for row in rows if row.passes][:limit] + [row for row in rows if not row.passes][:5]
        lines += [f"#### {title} ({sum(r.passes for r in rows)} of {len(rows)} pass)", ""]
        lines.append("| " + " | ".join(COLUMNS) + " |")
        lines.append("|" + "|".join("---" for _ in COLUMNS) + "|")
        lines += ["| " + " | ".join(md(cell) for cell in cells(row, limit=None)) + " |" for row in shown]
        lines.append("")
    lines += [f"- {line}" for line in _footer(report, lambda text: md(text, table=False))]
    return "\n".join(lines) + "\n"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    table = [list(COLUMNS), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS) - 1)]
    return [
        "  "
        + "  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True))
        + "  "
        + row[-1]
        for row in table
    ]


def footer_lines(report: PlanReport) -> list[str]:
    """What the plan's prices and counts rest on (plain text; each format escapes it)."""
    age = report.prices_as_of
    lines = ["* on the cost-versus-time front: nothing that passes is both cheaper and faster"]
    if age.oldest:
        lines.append(
            f"prices dated {age.oldest} to {age.newest} (the oldest {age.oldest_age_days} days old); on-demand "
            "prices change: check before you buy or rent"
        )
    if report.electricity is not None and any(row.kind == "buy" for row in report.rows):
        e = report.electricity
        lines.append(f"energy at {e.price_per_kwh:g} {e.currency}/kWh ({e.source})")
    for rate in report.fx:
        lines.append(f"exchange rate {rate['base']}/{rate['quote']} {rate['rate']} ({rate['as_of']})")
    lines.append(
        f"{report.candidates} candidates, {report.checks_run} rule runs in {report.seconds:.2f} s; "
        "a candidate without a sourced price is listed without a cost"
    )
    return lines


def _footer(report: PlanReport, escape: Callable[[str], str]) -> list[str]:
    return [escape(line) for line in footer_lines(report)]
