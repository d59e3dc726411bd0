"""What the HTML templates draw, computed here so that the templates only lay it out: memory bars
(segments in GiB and in SVG units), speeds with their ranges, findings grouped by family, the plan's
cost-versus-time scatter. Every string from a spec, a path or a plugin goes through
:func:`~rigcheck.core.report.render.escape.escape_text` here; Jinja2's autoescape then makes it HTML."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.taxonomy import rule_family
from rigcheck.core.report.render import shown_path
from rigcheck.core.report.render.escape import escape_text

#: Width of a memory bar's drawing area, in SVG user units.
BAR_WIDTH = 600.0
SEVERITY_WORD = {
    Severity.FAIL: "fail",
    Severity.WARN: "warn",
    Severity.PASS: "pass",
    Severity.SKIP: "not checked",
}
SEVERITY_ICON = {Severity.FAIL: "✗", Severity.WARN: "!", Severity.PASS: "✓", Severity.SKIP: "?"}
ORDER = (Severity.FAIL, Severity.WARN, Severity.SKIP, Severity.PASS)


@dataclass(frozen=True)
class Segment:
    name: str
    gib: float
    x: float
    width: float
    tone: int  # colour class seg0..seg11; the legend names each segment too
    formula: str


@dataclass(frozen=True)
class MemoryBar:
    """One GPU's memory at the estimate's peak, against what the GPU can hold."""

    title: str
    segments: tuple[Segment, ...]
    total_gib: float
    capacity_gib: float
    capacity_label: str
    low_gib: float
    high_gib: float
    scale_gib: float
    verdict: str  # MEM001's: pass | warn | fail (rigcheck.core.estimate.estimate.fit_verdict)
    freed: tuple[str, ...] = ()
    traced_gib: float | None = None
    allocated_gib: float | None = None

    def x(self, gib: float) -> float:
        return round(gib / self.scale_gib * BAR_WIDTH, 2)


@dataclass(frozen=True)
class Speed:
    label: str
    default: float
    low: float
    high: float
    unit: str
    binds: str


@dataclass(frozen=True)
class FindingView:
    code: str
    name: str
    severity: str
    icon: str
    message: str
    fix: str | None
    where: str | None
    subject: str | None
    suppressed: str | None


@dataclass
class Family:
    name: str
    findings: list[FindingView] = field(default_factory=list)

    @property
    def worst(self) -> str:
        for severity in ORDER:
            if any(view.severity == SEVERITY_WORD[severity] for view in self.findings):
                return SEVERITY_WORD[severity]
        return "pass"


def memory_bar(
    title: str,
    components: Mapping[str, float],
    *,
    capacity_gib: float,
    capacity_label: str,
    low_gib: float,
    high_gib: float,
    not_at_peak: Iterable[str] = (),
    formulas: Mapping[str, str] | None = None,
    traced_gib: float | None = None,
    allocated_gib: float | None = None,
    verdict: str = "",
) -> MemoryBar:
    """The bar of the components alive at the peak (those in ``not_at_peak`` are listed, not drawn)."""
    freed = tuple(not_at_peak)
    alive = [(name, gib) for name, gib in components.items() if name not in freed and gib > 0]
    total = sum(gib for _, gib in alive)
    scale = max(capacity_gib, high_gib, total, traced_gib or 0.0) * 1.05 or 1.0
    segments, x = [], 0.0
    for index, (name, gib) in enumerate(alive):
        width = gib / scale * BAR_WIDTH
        segments.append(
            Segment(
                escape_text(name),
                gib,
                round(x, 2),
                round(width, 2),
                index % 12,
                escape_text((formulas or {}).get(name, "")),
            )
        )
        x += width
    return MemoryBar(
        title=escape_text(title),
        segments=tuple(segments),
        total_gib=round(total, 3),
        capacity_gib=capacity_gib,
        capacity_label=capacity_label,
        low_gib=low_gib,
        high_gib=high_gib,
        scale_gib=scale,
        verdict=verdict,
        freed=tuple(escape_text(name) for name in freed),
        traced_gib=traced_gib,
        allocated_gib=allocated_gib,
    )


#: The rules whose findings :func:`bars_of` and :func:`speeds_of` draw, whatever their severity.
DRAWN_CODES = frozenset({"MEM001", "BW001", "BW003"})


def bars_of(findings: Sequence[Finding]) -> list[MemoryBar]:
    """A bar per MEM001 finding that carries a breakdown."""
    bars = []
    for finding in findings:
        evidence = finding.evidence
        if finding.code != "MEM001" or "components_gib" not in evidence:
            continue
        low, high = evidence.get("range_gib") or (evidence["need_gib"], evidence["need_gib"])
        budget = float(evidence.get("budget_gib") or evidence.get("usable_gib") or 0.0)
        label = "budget" if budget < float(evidence.get("usable_gib") or budget) else "usable"
        bars.append(
            memory_bar(
                f"{finding.subject or evidence.get('gpu', '')}",
                evidence["components_gib"],
                capacity_gib=budget,
                capacity_label=f"{budget:g} GiB {label} on the {evidence.get('gpu', 'GPU')}",
                low_gib=float(low),
                high_gib=float(high),
                not_at_peak=evidence.get("not_at_peak", ()),
                formulas=evidence.get("formulas"),
                verdict=SEVERITY_WORD.get(finding.severity, ""),
            )
        )
    return bars


def speeds_of(findings: Sequence[Finding]) -> list[Speed]:
    """Run time (BW003) and decode speed (BW001) with their ranges and what binds them."""
    speeds = []
    for finding in findings:
        evidence = finding.evidence
        if finding.code == "BW003" and isinstance(evidence.get("run_hours"), dict):
            hours = evidence["run_hours"]
            speeds.append(speed("run time", hours, "h", evidence.get("binds", "")))
        if finding.code in ("BW001", "BW003") and isinstance(evidence.get("tokens_per_second"), dict):
            speeds.append(
                speed("training speed", evidence["tokens_per_second"], "tokens/s", evidence.get("binds", ""))
            )
        if finding.code == "BW001" and isinstance(evidence.get("tokens_per_second_per_seq"), dict):
            binds = evidence.get("binds", "")
            speeds.append(
                speed("decode, per sequence", evidence["tokens_per_second_per_seq"], "tokens/s", binds)
            )
            if isinstance(evidence.get("aggregate_tokens_per_second"), dict):
                speeds.append(
                    speed("decode, all sequences", evidence["aggregate_tokens_per_second"], "tokens/s", binds)
                )
    return speeds


def speed(label: str, span: Mapping[str, float], unit: str, binds: str) -> Speed:
    return Speed(
        label, float(span["default"]), float(span["low"]), float(span["high"]), unit, escape_text(str(binds))
    )


def finding_view(finding: Finding) -> FindingView:
    location = finding.location
    where = None
    if location is not None and location.file:
        where = f"{shown_path(location.file)}:{location.line}:{location.column}"
        if location.pointer:
            where += f"  {location.pointer}"
    suppressed = None
    if finding.suppressions:
        first = finding.suppressions[0]
        suppressed = f"suppressed ({first.kind}): {first.reason}"
    return FindingView(
        code=escape_text(finding.code),
        name=escape_text(finding.name),
        severity=SEVERITY_WORD[finding.severity],
        icon=SEVERITY_ICON[finding.severity],
        message=escape_text(finding.message),
        fix=escape_text(finding.fix) if finding.fix and finding.severity is not Severity.PASS else None,
        where=escape_text(where) if where else None,
        subject=escape_text(finding.subject) if finding.subject else None,
        suppressed=escape_text(suppressed) if suppressed else None,
    )


def families(findings: Sequence[Finding]) -> tuple[list[Family], list[Family]]:
    """(needs attention, passed): families of the failures, warnings and not-checked findings, worst first,
    and the families of the passes (folded by the template)."""
    problems: dict[str, Family] = {}
    passed: dict[str, Family] = {}
    for severity in ORDER:
        for finding in findings:
            if finding.severity is not severity:
                continue
            family = rule_family(finding.code)
            target = passed if severity is Severity.PASS else problems
            target.setdefault(family, Family(family)).findings.append(finding_view(finding))
    return list(problems.values()), list(passed.values())


@dataclass(frozen=True)
class Point:
    name: str
    x: float
    y: float
    cost: float
    hours: float
    pareto: bool
    kind: str


@dataclass(frozen=True)
class Scatter:
    """The plan's passing candidates: cost (x, log scale) against time (y, log scale)."""

    points: tuple[Point, ...]
    front: str  # SVG path of the Pareto front
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    width: float = 640.0
    height: float = 360.0
    margin: float = 56.0


def scatter(rows: Sequence[Any], currency: str) -> Scatter | None:
    """Cost versus time of the passing rows that have both; None when fewer than two have."""
    usable = [
        r
        for r in rows
        if r.passes and r.cost.total is not None and r.hours is not None and r.hours.default > 0
    ]
    if len(usable) < 2:
        return None
    costs = [r.cost.total.default for r in usable]
    hours = [r.hours.default for r in usable]
    geometry = Scatter(points=(), front="", x_ticks=(), y_ticks=())
    w, h, m = geometry.width, geometry.height, geometry.margin
    x_lo, x_hi = _log_span(costs)
    y_lo, y_hi = _log_span(hours)

    def px(value: float) -> float:
        return round(m + (math.log10(value) - x_lo) / (x_hi - x_lo) * (w - 2 * m), 1)

    def py(value: float) -> float:
        return round(h - m - (math.log10(value) - y_lo) / (y_hi - y_lo) * (h - 2 * m), 1)

    points = tuple(
        Point(escape_text(r.candidate), px(c), py(t), c, t, r.pareto, r.kind)
        for r, c, t in zip(usable, costs, hours, strict=True)
    )
    front = sorted((p for p in points if p.pareto), key=lambda p: p.x)
    path = " ".join(("M" if i == 0 else "L") + f"{p.x},{p.y}" for i, p in enumerate(front))
    return Scatter(
        points=points,
        front=path,
        x_ticks=tuple(
            (px(v), f"{v:,.0f} {currency}" if v >= 10 else f"{v:,.2f}") for v in _decades(x_lo, x_hi)
        ),
        y_ticks=tuple((py(v), f"{v:g} h") for v in _decades(y_lo, y_hi)),
    )


def _log_span(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.08
    return lo - pad, hi + pad


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0**k for k in range(math.ceil(lo), math.floor(hi) + 1)]
