"""The ``json`` format: the Report model as JSON (schema: ``schemas/report.schema.json``)."""

from __future__ import annotations

import json

from rigcheck.core.render import RenderOptions
from rigcheck.core.report import Report


def render_json(report: Report, options: RenderOptions) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
