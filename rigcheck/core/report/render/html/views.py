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
    beside: tuple[str, ...] = ()  # not counted against the capacity (vLLM: beside its pool): listed
    traced_gib: float | None = None
    allocated_gib: float | None = None

    def x(self, gib: float) -> float:
        return round(gib / self.scale_gib * BAR_WIDTH, 2)

    @property
    def range_label(self) -> Label:
        """The range's label under its line ("range LOW to HIGH", an en dash between), kept inside the
        drawing: it ends at the line's right end where it would run past it."""
        text = f"range {gib_text(self.low_gib)}{EN_DASH}{gib_text(self.high_gib)}"
        return _label_in(text, self.x(self.low_gib), self.x(self.high_gib))

    @property
    def capacity_text(self) -> Label:
        """ "capacity N GiB" beside the capacity line: to its left, or to its right where it would be cut."""
        text = f"capacity {gib_text(self.capacity_gib)} GiB"
        at = self.x(self.capacity_gib)
        if at - 4 - text_width(text) >= 0:
            return Label(text, at - 4, "end")
        return Label(text, at + 4, "start")


@dataclass(frozen=True)
class Label:
    """A text of the SVG: where it stands and which end (start, middle, end) stands there (``y``: where
    the template does not place it itself)."""

    text: str
    x: float
    anchor: str
    y: float = 0.0


EN_DASH = "\u2013"

#: Width of one character of the SVG's 10 px sans-serif text (base.html.j2: ``svg text``), in user units:
#: 0.6 em, an upper bound for digits and lower-case letters of the page's fonts, used to keep labels inside
#: the drawing and off each other.
CHAR_WIDTH = 6.0


def text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH


def gib_text(value: float) -> str:
    """GiB as the pages write them (the templates' ``gib`` filter too): 32.83, 1,024.00."""
    return f"{value:,.2f}"


def _label_in(text: str, start: float, end: float, right: float = BAR_WIDTH + 20) -> Label:
    """``text`` starting at ``start``, or ending at ``end`` where it would run past ``right``."""
    if start + text_width(text) <= right:
        return Label(text, start, "start")
    return Label(text, max(end, text_width(text)), "end")


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
    beside: Iterable[str] = (),
    formulas: Mapping[str, str] | None = None,
    traced_gib: float | None = None,
    allocated_gib: float | None = None,
    verdict: str = "",
) -> MemoryBar:
    """The bar of the components alive at the peak and counted against the capacity; those in
    ``not_at_peak`` (freed before it) and ``beside`` (vLLM's context and CUDA graphs, beside its pool) are
    listed, not drawn, so that the bar ends at the need its range brackets."""
    freed = tuple(not_at_peak)
    apart = tuple(name for name in beside if name not in freed and components.get(name, 0) > 0)
    alive = [(name, gib) for name, gib in components.items() if name not in freed + apart and gib > 0]
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
        beside=tuple(f"{escape_text(name)} {components[name]:,.2f} GiB" for name in apart),
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
                beside=evidence.get("beside_pool", ()),
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
    value: float  # hours of the run, or tokens/s of a serve
    pareto: bool
    kind: str
    rank: int | None = None


@dataclass(frozen=True)
class Scatter:
    """The plan's passing candidates, both axes logarithmic: the run's cost against its time, or for a
    serve (no run length) the price per hour against the tokens per second."""

    points: tuple[Point, ...]
    front: str  # SVG path of the Pareto front
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    labels: tuple[Label, ...] = ()
    x_title: str = ""
    y_title: str = ""
    caption: str = ""
    value_unit: str = "h"
    width: float = 640.0
    height: float = 360.0
    margin: float = 64.0


#: The longest candidate name a label shows (the dot's tooltip has it whole).
LABEL_CHARS = 30


def scatter(rows: Sequence[Any], currency: str) -> Scatter | None:
    """Cost against time of the passing rows that have both; for a serve, price per hour against tokens
    per second. None when fewer than two rows have them."""
    timed = [
        r
        for r in rows
        if r.passes and r.cost.total is not None and r.hours is not None and r.hours.default > 0
    ]
    if len(timed) >= 2:
        return _scatter(
            timed,
            [r.cost.total.default for r in timed],
            [r.hours.default for r in timed],
            x_title=f"cost of the run ({currency})",
            y_title="time of the run (h)",
            caption="Cost against time of the candidates that pass (both axes logarithmic); the line joins the "
            "Pareto front: nothing that passes is both cheaper and faster.",
            currency=currency,
            unit="h",
        )
    served = [
        r
        for r in rows
        if r.passes and r.cost.hourly is not None and (r.tokens_per_second or 0) > 0 and r.hours is None
    ]
    if len(served) >= 2:
        return _scatter(
            served,
            [r.cost.hourly for r in served],
            [r.tokens_per_second for r in served],
            x_title=f"price per hour ({currency})",
            y_title="tokens/s, all sequences",
            caption="Price per hour against the tokens served per second of the candidates that pass (both axes "
            "logarithmic); the line joins the Pareto front: nothing that passes is both cheaper and faster.",
            currency=currency,
            unit="tokens/s",
        )
    return None


def _scatter(
    rows: Sequence[Any],
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    x_title: str,
    y_title: str,
    caption: str,
    currency: str,
    unit: str,
) -> Scatter:
    geometry = Scatter(points=(), front="", x_ticks=(), y_ticks=())
    w, h, m = geometry.width, geometry.height, geometry.margin
    x_lo, x_hi = _log_span(xs)
    y_lo, y_hi = _log_span(ys)

    def px(value: float) -> float:
        return round(m + (math.log10(value) - x_lo) / (x_hi - x_lo) * (w - 1.5 * m), 1)

    def py(value: float) -> float:
        return round(h - m - (math.log10(value) - y_lo) / (y_hi - y_lo) * (h - 1.5 * m), 1)

    points = tuple(
        Point(escape_text(r.candidate), px(x), py(y), x, y, r.pareto, r.kind, r.rank)
        for r, x, y in zip(rows, xs, ys, strict=True)
    )
    front = sorted((p for p in points if p.pareto), key=lambda p: p.x)
    path = " ".join(("M" if i == 0 else "L") + f"{p.x},{p.y}" for i, p in enumerate(front))
    frame = (m, m / 2, w - m / 2, h - m)  # left, top, right, bottom of the plotting area
    return Scatter(
        points=points,
        front=path,
        x_ticks=tuple((px(v), _tick(v)) for v in ticks(x_lo, x_hi)),
        y_ticks=tuple((py(v), _tick(v)) for v in ticks(y_lo, y_hi)),
        labels=place_labels(points, frame),
        x_title=x_title,
        y_title=y_title,
        caption=caption,
        value_unit=unit,
    )


def _tick(value: float) -> str:
    """A tick's number as people write it: 2,000 and 0.05, never 2e+03."""
    if value >= 10:
        return f"{value:,.0f}"
    return f"{value:.3f}".rstrip("0").rstrip(".")


def ticks(lo: float, hi: float) -> list[float]:
    """Tick values between 10**lo and 10**hi: every decade and 2 and 5 times it (the 1-2-5 series of log
    axes), thinned to at most 7; at least two, however narrow the span (1, 1.5, 2, 3, 5, 7, else its ends)."""
    low, high = 10.0**lo, 10.0**hi
    for steps in ((1, 2, 5), (1, 5), (1,)):
        values = _series(lo, hi, steps)
        if len(values) <= 7:
            break
    if len(values) < 2:
        values = _series(lo, hi, (1, 1.5, 2, 3, 5, 7))
    if len(values) < 2:  # a span too narrow for the series: its two ends, to three digits
        values = [float(f"{low:.3g}"), float(f"{high:.3g}")]
    return values


def _series(lo: float, hi: float, steps: Sequence[float]) -> list[float]:
    low, high = 10.0**lo, 10.0**hi
    return [
        step * 10.0**k
        for k in range(math.floor(lo) - 1, math.ceil(hi) + 1)
        for step in steps
        if low <= step * 10.0**k <= high
    ]


def place_labels(points: Sequence[Point], frame: tuple[float, float, float, float]) -> tuple[Label, ...]:
    """A label for each Pareto point: its name (cut at :data:`LABEL_CHARS`) at the first of twelve places
    around its dot (right, then left; just above, just below, then further out) where the label's box
    stays inside ``frame`` and covers no dot and no label placed before. Where no place is clear the label
    is the row's rank (``#2``, as in the table), at its first clear place, else where it covers least."""
    dots = [(p.x - 7, p.y - 7, p.x + 7, p.y + 7) for p in points]
    placed: list[tuple[float, float, float, float]] = []
    labels = []
    for point in sorted((p for p in points if p.pareto), key=lambda p: p.x):
        name = point.name if len(point.name) <= LABEL_CHARS else point.name[: LABEL_CHARS - 1] + "\u2026"
        texts = [name, f"#{point.rank}"] if point.rank else [name]
        places = [_places(point, text, frame, [*dots, *placed]) for text in texts]
        clear = [option for options in places for option in options if option[0] == (False, 0)]
        # none clear: the shortest text where it is inside the frame and covers the fewest
        chosen = clear[0] if clear else min(places[-1], key=lambda option: option[0])
        placed.append(chosen[1])
        labels.append(chosen[2])
    return tuple(labels)


def _places(
    point: Point, text: str, frame: tuple[float, float, float, float], taken: Sequence[tuple[float, ...]]
) -> list[tuple[tuple[bool, int], tuple[float, float, float, float], Label]]:
    """Each place for ``text`` around ``point``: ((outside the frame, boxes it covers), its box, the label)."""
    left, top, right, bottom = frame
    width = text_width(text)
    found = []
    for dy in (-8, 16, -22, 30, -36, 44):
        for dx, anchor in ((8, "start"), (-8, "end")):
            x, y = point.x + dx, point.y + dy
            x0 = x if anchor == "start" else x - width
            box = (x0, y - 10, x0 + width, y + 2)
            outside = not (left <= box[0] and box[2] <= right and top <= box[1] and box[3] <= bottom)
            covered = sum(_overlap(box, other) for other in taken)
            found.append(((outside, covered), box, Label(text, round(x, 1), anchor, round(y, 1))))
    return found


def _overlap(a: Sequence[float], b: Sequence[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _log_span(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.08
    return lo - pad, hi + pad
