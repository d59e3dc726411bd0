"""The built-in report formats, registered lazily (a renderer is imported only when used)."""

from __future__ import annotations

from rigcheck.core.hookspecs import hookimpl


@hookimpl
def rigcheck_formats(register):  # type: ignore[no-untyped-def]
    register(
        "text",
        "rigcheck.core.render.text:render_text",
        description="a checklist grouped by checker, for people",
        extension=".txt",
    )
    register(
        "json",
        "rigcheck.core.render.json:render_json",
        description="the full report (schemas/report.schema.json)",
        extension=".json",
    )
