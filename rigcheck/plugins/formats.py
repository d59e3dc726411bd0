"""The built-in report formats, registered lazily (a renderer is imported only when used)."""

from __future__ import annotations

from rigcheck.core.engine.hookspecs import RegisterFormat, hookimpl


@hookimpl
def rigcheck_formats(register: RegisterFormat) -> None:
    register(
        "text",
        "rigcheck.core.report.render.text:render_text",
        description="a checklist grouped by checker, for people",
        extension=".txt",
    )
    register(
        "json",
        "rigcheck.core.report.render.json:render_json",
        description="the full report (schemas/report.schema.json)",
        extension=".json",
    )
    register(
        "sarif",
        "rigcheck.core.report.render.sarif:render_sarif",
        description="SARIF 2.1.0 for GitHub code scanning",
        extension=".sarif",
    )
    register(
        "junit",
        "rigcheck.core.report.render.junit:render_junit",
        description="JUnit XML, one testcase per rule and subject, for CI test reports",
        extension=".xml",
    )
    register(
        "github",
        "rigcheck.core.report.render.github:render_github",
        description="GitHub Actions annotations (::error/::warning workflow commands)",
        extension=".txt",
    )
    register(
        "markdown",
        "rigcheck.core.report.render.markdown:render_markdown",
        description="a summary for a pull-request comment or the job summary",
        extension=".md",
    )
    register(
        "html",
        "rigcheck.core.report.render.html:render_html",
        description="one self-contained page (inline CSS and SVG, no script): memory bars, speeds, findings",
        extension=".html",
    )
