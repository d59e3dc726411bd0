"""The HTML report (issue 19): one self-contained page for check, lint, estimate and plan. Rendered from
the shipped examples, parsed as strict HTML5, checked in its DOM (the memory bar's segments sum to the
breakdown, every failing finding is there, nothing fetchable from the network), and opened in headless
Chromium (skipped, with the reason, where the system has no Chromium; CI installs it)."""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import html5lib
import pytest

from .conftest import REPO

sys.path.insert(0, str(REPO))
from tools import browser

NS = "{http://www.w3.org/1999/xhtml}"
SVG = "{http://www.w3.org/2000/svg}"
FETCHING = {"src", "href", "srcset", "poster", "data", "action", "formaction", "background"}


def _at_repo(run_cli, *args: str) -> Any:  # type: ignore[no-untyped-def]
    old = os.getcwd()
    os.chdir(REPO)
    try:
        return run_cli(*args)
    finally:
        os.chdir(old)


def _page(run_cli, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = _at_repo(run_cli, *args, "-f", "html")
    assert result.exit_code in (0, 1), result.err
    return result.out


def _parse(text: str) -> Any:
    """Strict HTML5: any parse error raises."""
    return html5lib.HTMLParser(strict=True).parse(text)


def _elements(tree: Any, tag: str) -> list[Any]:
    return [e for e in tree.iter() if e.tag in (f"{NS}{tag}", f"{SVG}{tag}")]


def _nothing_fetchable(text: str, tree: Any) -> None:
    assert "<script" not in text.lower() and "@import" not in text and "url(" not in text
    for element in tree.iter():
        for name, value in element.attrib.items():
            if name in FETCHING and element.tag != f"{NS}a":
                assert not re.match(r"^\s*(https?:)?//", value), (element.tag, name, value)


@pytest.fixture(scope="module")
def check_json() -> dict[str, Any]:
    import contextlib
    import io

    from rigcheck.cli import main

    out = io.StringIO()
    old = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            main(["check", "home-2x3090", "qwen-1.8b-law-lora", "-f", "json"])
    finally:
        os.chdir(old)
    return json.loads(out.getvalue())


def test_check_page_is_strict_html5_and_self_contained(run_cli) -> None:  # type: ignore[no-untyped-def]
    text = _page(run_cli, "check", "home-2x3090", "qwen-1.8b-law-lora")
    tree = _parse(text)
    _nothing_fetchable(text, tree)
    assert (
        text.startswith("<!DOCTYPE html>") and "prefers-color-scheme: dark" in text and "@media print" in text
    )


def test_the_memory_bar_sums_to_the_breakdown(run_cli, check_json) -> None:  # type: ignore[no-untyped-def]
    [mem] = [f for f in check_json["findings"] if f["code"] == "MEM001"]
    evidence = mem["evidence"]
    alive = {k: v for k, v in evidence["components_gib"].items() if k not in evidence["not_at_peak"]}
    tree = _parse(_page(run_cli, "check", "home-2x3090", "qwen-1.8b-law-lora"))
    segments = [e for e in _elements(tree, "rect") if "segment" in e.attrib.get("class", "")]
    drawn = {e.attrib["data-name"]: float(e.attrib["data-gib"]) for e in segments}
    assert drawn == alive
    assert sum(drawn.values()) == pytest.approx(evidence["device_gib"], abs=0.01)  # 14.161 GiB at the peak
    widths = sum(float(e.attrib["width"]) for e in segments)
    [figure] = [e for e in _elements(tree, "figure") if "memory" in e.attrib.get("class", "")]
    assert float(figure.attrib["data-total-gib"]) == pytest.approx(evidence["device_gib"], abs=0.01)
    assert widths == pytest.approx(evidence["device_gib"] / (max(24.0, 17.27, 14.161) * 1.05) * 600, abs=0.05)


def test_every_failing_and_warning_finding_is_on_the_page(run_cli, check_json) -> None:  # type: ignore[no-untyped-def]
    tree = _parse(_page(run_cli, "check", "home-2x3090", "qwen-1.8b-law-lora"))
    items = [
        (e.attrib["data-code"], e.attrib["data-severity"])
        for e in _elements(tree, "li")
        if "data-code" in e.attrib
    ]
    for finding in check_json["findings"]:
        if finding["severity"] in ("fail", "warn"):
            assert (finding["code"], finding["severity"]) in items
    assert sum(1 for _, severity in items if severity == "pass") == check_json["summary"]["passed"]


def test_spec_strings_are_escaped(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\ndescription: '<script>alert(1)</script>'\nnodes:\n"
        "  - name: '<img src=x onerror=alert(1)>'\n    gpus: {model: RTX 4090}\n",
        "rig.yaml",
    )
    text = run_cli("check", rig, "-f", "html").out
    tree = _parse(text)
    assert "<img src=x" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert not _elements(tree, "img") and not _elements(tree, "script")


def test_lint_page_has_a_summary_matrix_and_a_section_per_run(run_cli) -> None:  # type: ignore[no-untyped-def]
    text = _page(run_cli, "lint", "specs/")
    tree = _parse(text)
    _nothing_fetchable(text, tree)
    report = json.loads(_at_repo(run_cli, "lint", "specs/", "-f", "json").out)
    [matrix] = [e for e in _elements(tree, "table") if e.attrib.get("class") == "matrix"]
    rows = [e for e in matrix.iter() if e.tag == f"{NS}tr" and "data-verdict" in e.attrib]
    assert [r.attrib["data-verdict"] for r in rows] == [run["verdict"] for run in report["runs"]]
    sections = [e for e in _elements(tree, "section") if e.attrib.get("class") == "run"]
    assert len(sections) == len(report["runs"]) == 25


def test_estimate_page_draws_the_breakdown_with_its_range(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = json.loads(
        _at_repo(run_cli, "estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090", "-f", "json").out
    )
    text = _page(run_cli, "estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090")
    tree = _parse(text)
    _nothing_fetchable(text, tree)
    segments = [e for e in _elements(tree, "rect") if "segment" in e.attrib.get("class", "")]
    total = sum(float(e.attrib["data-gib"]) for e in segments)
    assert total == pytest.approx(result["memory"]["per_gpu"]["device_gib"], abs=0.01)
    low, high = result["fit"]["range_gib"]
    assert f"range {low:,.2f}\u2013{high:,.2f}" in text


def test_plan_page_has_the_scatter_with_its_pareto_front(run_cli) -> None:  # type: ignore[no-untyped-def]
    plan = json.loads(
        _at_repo(run_cli, "plan", "llama-2-7b-sft-lora", "--rent", "--no-references", "-f", "json").out
    )
    text = _page(run_cli, "plan", "llama-2-7b-sft-lora", "--rent", "--no-references")
    tree = _parse(text)
    _nothing_fetchable(text, tree)
    dots = [e for e in _elements(tree, "circle") if "dot" in e.attrib.get("class", "")]
    front = {e.attrib["data-name"] for e in dots if "pareto" in e.attrib["class"]}
    assert front == {row["candidate"] for row in plan["rows"] if row["pareto"]}
    drawn = len([r for r in plan["rows"] if r["passes"] and r["cost"]["total"] and r["hours"]])
    assert len(dots) == drawn
    assert plan["answer"] in text


NO_BROWSER = pytest.mark.skipif(
    browser.chromium() is None, reason="no Chromium on this machine (Debian: apt-get install chromium)"
)


@NO_BROWSER
def test_the_browser_check_sees_a_page_that_fetches(tmp_path: Path) -> None:
    """The control: a page with an image from elsewhere is caught, so an empty list means something."""
    page = tmp_path / "fetches.html"
    page.write_text('<!DOCTYPE html><title>x</title><img src="http://example.invalid/x.png" alt="">')
    _, requests = browser.run(page)
    assert requests == ["GET http://example.invalid/x.png"]


@NO_BROWSER
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("check", ("check", "home-2x3090", "qwen-1.8b-law-lora")),
        ("lint", ("lint", "specs/")),
        ("estimate", ("estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090")),
        ("plan", ("plan", "llama-2-7b-sft-lora", "--no-references")),
        ("serving-plan", ("plan", "llama-3-70b-serving", "--rent", "--no-references")),
        ("vllm-estimate", ("estimate", "llama-3-70b-serving", "--rig", "dgx-h100")),
    ],
)
def test_a_real_browser_renders_the_page_and_fetches_nothing(
    run_cli, tmp_path: Path, name: str, args: tuple[str, ...]
) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / f"{name}.html"
    page.write_text(_page(run_cli, *args), encoding="utf-8")
    shot = tmp_path / f"{name}.png"
    dom, requests = browser.run(page, screenshot=shot)
    assert requests == []  # every request would have gone through the recording proxy
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    tree = _parse(dom)
    assert _elements(tree, "main") and _elements(tree, "h1")
    if name == "check":
        codes = {e.attrib.get("data-code") for e in _elements(tree, "li")}
        assert "BW003" in codes  # the pair's one failure, as the browser built the DOM


def test_a_traced_peak_is_drawn_beside_the_estimate(run_cli) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.report.render.html import render_estimate

    result = json.loads(
        _at_repo(run_cli, "estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090", "-f", "json").out
    )
    result["trace"] = {"peak_gib": 11.5}  # what `estimate --trace` adds (rigcheck.trace.result.TraceResult)
    tree = _parse(render_estimate(result))
    [traced] = [e for e in _elements(tree, "line") if e.attrib.get("class") == "traced"]
    scale = max(24.0, result["fit"]["range_gib"][1], result["memory"]["per_gpu"]["device_gib"]) * 1.05
    assert float(traced.attrib["x1"]) == pytest.approx(11.5 / scale * 600, abs=0.01)


# -- issue 48, point 7: the chart's ticks and labels, a serving plan's chart, labels inside the memory bar --


def _svg_texts(tree: Any, cls: str) -> list[Any]:
    return [e for e in _elements(tree, "text") if e.attrib.get("class") == cls]


def _box(element: Any) -> tuple[float, float, float, float]:
    """The label's box as views.py reckons it: CHAR_WIDTH per character, 10 units tall, by its anchor."""
    from rigcheck.core.report.render.html.views import text_width

    x, y = float(element.attrib["x"]), float(element.attrib["y"])
    width = text_width(element.text or "")
    x0 = {"start": x, "end": x - width, "middle": x - width / 2}[element.attrib.get("text-anchor", "start")]
    return x0, y - 10, x0 + width, y + 2


def _overlaps(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "llama-2-7b-sft-lora", "--rent", "--no-references"),
        ("plan", "llama-2-7b-sft-lora", "--buy", "--no-references"),
        ("plan", "llama-3-70b-serving", "--rent", "--no-references"),
    ],
)
def test_plan_chart_ticks_every_decade_and_between_and_labels_avoid_dots(run_cli, args) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.report.render.html.views import Scatter

    tree = _parse(_page(run_cli, *args))
    ticks = _svg_texts(tree, "tick")
    frame = Scatter(points=(), front="", x_ticks=(), y_ticks=())
    left, top = frame.margin, frame.margin / 2
    right, bottom = frame.width - frame.margin / 2, frame.height - frame.margin
    xs = [_number(t.text) for t in ticks if t.attrib["text-anchor"] == "middle"]
    ys = [_number(t.text) for t in ticks if t.attrib["text-anchor"] == "end"]
    assert len(xs) >= 2 and len(ys) >= 2  # both axes are labelled, however narrow their span
    for values in (xs, ys):
        assert values == sorted(values)
        for low, high in itertools.pairwise(values):  # no decade inside the span is skipped
            assert not [10**k for k in range(-3, 7) if low < 10**k < high]
    dots = [
        (float(e.attrib["cx"]), float(e.attrib["cy"]))
        for e in _elements(tree, "circle")
        if "dot" in e.attrib.get("class", "")
    ]
    labels = [_box(e) for e in _svg_texts(tree, "point-label")]
    assert labels  # every section with a front names its points
    for index, box in enumerate(labels):
        assert left <= box[0] and box[2] <= right and top <= box[1] and box[3] <= bottom
        assert not any(_overlaps(box, (x - 5, y - 5, x + 5, y + 5)) for x, y in dots)
        assert not any(_overlaps(box, other) for other in labels[index + 1 :])


def test_a_serving_plan_has_its_chart_and_speeds(run_cli) -> None:  # type: ignore[no-untyped-def]
    args = ("plan", "llama-3-70b-serving", "--rent", "--no-references")
    plan = json.loads(_at_repo(run_cli, *args, "-f", "json").out)
    text = _page(run_cli, *args)
    tree = _parse(text)
    served = [r for r in plan["rows"] if r["passes"] and r["cost"]["hourly"] and r["tokens_per_second"]]
    dots = [e for e in _elements(tree, "circle") if "dot" in e.attrib.get("class", "")]
    assert len(dots) == len(served) >= 2
    assert {e.attrib["data-name"] for e in dots if "pareto" in e.attrib["class"]} == {
        r["candidate"] for r in plan["rows"] if r["pareto"]
    }
    assert "price per hour (USD)" in text and "tokens/s, all sequences" in text
    cells = [e.text for e in _elements(tree, "td") if e.text and e.text.endswith("tok/s")]
    assert len(cells) >= len(served)  # the time column says how fast it serves, not "-"


def test_memory_bar_labels_stay_inside_the_drawing() -> None:
    """A capacity far left of the scale (12 GiB against 800) and a range at its right end: each label is
    turned to the side where it fits (before this, the capacity label stood left of 0 and showed as "B")."""
    from rigcheck.core.report.render.html import environment
    from rigcheck.core.report.render.html.views import BAR_WIDTH, memory_bar

    bar = memory_bar(
        "one GPU",
        {"weights": 700.0, "activations": 100.0},
        capacity_gib=12.0,
        capacity_label="12 GiB usable",
        low_gib=790.0,
        high_gib=800.0,
        verdict="fail",
    )
    html = environment().get_template("macros.html.j2").module.memory_bar(bar, BAR_WIDTH)  # type: ignore[attr-defined]
    tree = _parse(f"<!DOCTYPE html><title>t</title>{html}")
    texts = [e for e in _elements(tree, "text") if (e.text or "").startswith(("range", "capacity"))]
    assert len(texts) == 2
    for element in texts:
        x0, _, x1, _ = _box(element)
        assert x0 >= 0 and x1 <= BAR_WIDTH + 20, (element.text, x0, x1)


def test_a_vllm_estimate_states_a_peak_inside_its_range(run_cli) -> None:  # type: ignore[no-untyped-def]
    """vLLM's context and CUDA graphs live beside its share: listed, not drawn, so the bar ends at the need
    the range brackets (before: "32.90 GiB at the peak (30.38-30.77 GiB)")."""
    args = ("estimate", "llama-3-70b-serving", "--rig", "dgx-h100")
    result = json.loads(_at_repo(run_cli, *args, "-f", "json").out)
    tree = _parse(_page(run_cli, *args))
    [figure] = [e for e in _elements(tree, "figure") if "memory" in e.attrib.get("class", "")]
    peak = float(figure.attrib["data-total-gib"])
    low, high = result["fit"]["range_gib"]
    assert low <= peak <= high
    assert peak == pytest.approx(result["fit"]["device_gib"], abs=0.01)
    beside = result["fit"]["beside_budget"]
    assert beside and all(name in _page(run_cli, *args) for name in beside)
