"""The ``html`` format: one self-contained page (inline CSS and SVG, no script, no font or image from
anywhere) for ``check``, ``lint``, ``estimate`` and ``plan``. Built with Jinja2 templates
(``templates/``), autoescaped; what they draw is computed in :mod:`.views`. Light and dark
(``prefers-color-scheme``), readable printed, a word and an icon beside every colour, folds that are
``<details>`` (keyboard-operable without a script)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

    from rigcheck.core.plan.model import PlanReport
    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.report.report import Report


@cache
def environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rigcheck.core.report.render.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from rigcheck.core.report.render.html import views

    env.filters["gib"] = views.gib_text
    env.filters["num"] = _number
    return env


def _number(value: float, unit: str = "") -> str:
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"
    return f"{text} {unit}".strip()


def render_html(report: Report, options: RenderOptions) -> str:
    """``rigcheck check`` and ``rigcheck lint`` (a report with runs) as a page."""
    from rigcheck.core.report.render import materialized, shown_path
    from rigcheck.core.report.render.escape import escape_text
    from rigcheck.core.report.render.html import views

    if report.runs:
        return _render_lint(report)
    report = materialized(report)  # the views walk the findings several times
    counted = [finding for finding in report.findings if finding.counts]
    problems, passed = views.families(counted)
    context: dict[str, Any] = {
        **_page(report),
        "inputs": [(item.kind, escape_text(shown_path(item.path))) for item in report.inputs],
        "bars": views.bars_of(counted),
        "speeds": views.speeds_of(counted),
        "problems": problems,
        "passed": passed,
        "suppressed": [views.finding_view(f) for f in report.findings if not f.counts],
    }
    return environment().get_template("check.html.j2").render(**context)


def _page(report: Report) -> dict[str, Any]:
    """What every report page shows: its title, the tool, the verdict and its totals."""
    from rigcheck.core.report.render.escape import escape_text
    from rigcheck.core.report.render.html import views

    return {
        "title": escape_text(str(report.subject)),
        "tool": f"rigcheck {report.tool.version}",
        "verdict": report.verdict,
        "summary": report.summary,
        "fail_on": report.fail_on,
        "exit_code": report.exit_code,
        "bar_width": views.BAR_WIDTH,
    }


def _render_lint(report: Report) -> str:
    """A lint's page: the matrix of runs, then each run's memory bars, speeds and problems. Of the
    report's findings (a store, maybe on disk, mostly passes) only those it draws are taken, in one
    walk: the counting warnings and failures, those of the drawn rules, the problems outside runs."""
    from rigcheck.core.engine.finding_store import findings_matching
    from rigcheck.core.engine.findings import Severity
    from rigcheck.core.report.render.escape import escape_text
    from rigcheck.core.report.render.html import views

    def drawn(severity: Severity, code: str, suppressed: bool, run: int | None) -> bool:
        if suppressed:
            return False
        return (
            severity in (Severity.FAIL, Severity.WARN)
            or code in views.DRAWN_CODES
            or (run is None and severity is not Severity.PASS)
        )

    counted = findings_matching(report.findings, drawn)
    runs = []
    by_run: dict[int, list[Any]] = {}  # grouped once: filtering every finding per run was quadratic
    for finding in counted:
        if finding.run is not None:
            by_run.setdefault(finding.run, []).append(finding)
    for index, run in enumerate(report.runs):
        own = by_run.get(index, [])
        run_problems, _ = views.families([f for f in own if f.severity in (Severity.FAIL, Severity.WARN)])
        runs.append(
            {
                "subject": escape_text(run.subject),
                "rig": escape_text(run.rig),
                "workload": escape_text(run.workload) if run.workload else None,
                "verdict": run.verdict,
                "summary": run.summary,
                "problems": run_problems,
                "bars": views.bars_of(own),
                "speeds": views.speeds_of(own),
            }
        )
    outside, _ = views.families([f for f in counted if f.run is None and f.severity is not Severity.PASS])
    template = environment().get_template("lint.html.j2")
    return template.render(runs=runs, outside=outside, **_page(report))


def render_estimate(result: dict[str, Any]) -> str:
    """``rigcheck estimate`` as a page: the breakdown, its bar against the rig's GPU, the speed."""
    from rigcheck.core.report.render.escape import escape_text
    from rigcheck.core.report.render.html import views

    memory = result["memory"]["per_gpu"]
    components = {name: item["gib"] for name, item in memory["components"].items()}
    formulas = {name: item["formula"] for name, item in memory["components"].items()}
    freed = [name for name, item in memory["components"].items() if item.get("at_peak") is False]
    fit, rig = result.get("fit"), result.get("rig")
    trace = result.get("trace")
    traced = float(trace["peak_gib"]) if trace and "peak_gib" in trace else None
    bar = views.memory_bar(
        rig["gpu"] if rig else "per GPU",
        components,
        capacity_gib=float(fit["budget_gib"]) if fit else 0.0,
        capacity_label=f"{fit['budget_gib']:g} GiB budget on the {rig['gpu']}"
        if fit and rig
        else "no rig given",
        low_gib=float(fit["range_gib"][0]) if fit else float(memory["device_gib"]),
        high_gib=float(fit["range_gib"][1]) if fit else float(memory["device_gib"]),
        not_at_peak=freed,
        beside=fit["beside_budget"] if fit else (),
        formulas=formulas,
        traced_gib=traced,
        allocated_gib=float(memory["allocated_gib"]),
        verdict=fit["verdict"] if fit else "",
    )
    speeds = []
    speed = result.get("speed") or {}
    if "training" in speed:
        train = speed["training"]
        speeds.append(views.speed("training speed", train["tokens_per_second"], "tokens/s", train["binds"]))
        if train.get("run_hours"):
            speeds.append(views.speed("run time", train["run_hours"], "h", train["binds"]))
    if "decode" in speed:
        decode = speed["decode"]
        speeds.append(
            views.speed(
                "decode, per sequence", decode["tokens_per_second_per_seq"], "tokens/s", decode["binds"]
            )
        )
    return (
        environment()
        .get_template("estimate.html.j2")
        .render(
            title=escape_text(
                f"{result['workload']['name']}: {result['inputs']['task']} of {result['model']['name']}"
            ),
            tool="rigcheck estimate",
            result=result,
            components=[
                (escape_text(n), item["gib"], escape_text(item["formula"]), item.get("at_peak", True))
                for n, item in memory["components"].items()
            ],
            notes=[escape_text(note) for note in memory["notes"]],
            bar=bar,
            speeds=speeds,
            fit=fit,
            rig=rig,
            bar_width=views.BAR_WIDTH,
        )
    )


def render_plan(report: PlanReport) -> str:
    """``rigcheck plan`` as a page: the answer, the cost-versus-time scatter with its Pareto front, the
    ranked tables."""
    from rigcheck.core.plan import render as plan_text
    from rigcheck.core.report.render.escape import escape_text
    from rigcheck.core.report.render.html import views

    sections = []
    for kind, title in plan_text.SECTIONS:
        rows = [row for row in report.rows if row.kind == kind]
        if rows:
            sections.append(
                {
                    "title": title,
                    "passing": sum(row.passes for row in rows),
                    "rows": [
                        [escape_text(cell) for cell in plan_text.cells(row, limit=None)] + [row.verdict]
                        for row in rows
                    ],
                    "scatter": views.scatter(rows, report.currency),
                }
            )
    return (
        environment()
        .get_template("plan.html.j2")
        .render(
            title=escape_text(f"plan: {report.workload} ({report.task})"),
            tool=report.tool,
            report=report,
            answer=escape_text(report.answer),
            sections=sections,
            columns=plan_text.COLUMNS,
            footer=[escape_text(line) for line in plan_text.footer_lines(report)],
        )
    )
