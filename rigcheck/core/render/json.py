"""The ``json`` format: the Report model as JSON (schema: ``schemas/report.schema.json``)."""

from __future__ import annotations

from rigcheck.core.render import RenderOptions
from rigcheck.core.report import Report


def render_json(report: Report, options: RenderOptions) -> str:
    return report.model_dump_json(indent=2) + "\n"
