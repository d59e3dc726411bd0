"""The ``json`` format: the Report model as JSON (schema: ``schemas/report.schema.json``).

Values are written exactly (JSON's own escaping is the escape), never as ``NaN`` or ``Infinity``:
a non-finite float (from a plugin's evidence, say) is written as ``null``, as pydantic-core writes
it. A report pydantic-core cannot write (a value JSON has no type for, a lone surrogate) is written
by ``json.dumps(allow_nan=False)`` instead, such values as their ``str``
(:func:`rigcheck.core.render.escape.json_safe`). DEL and C1 controls are written as ``\\u`` escapes.
"""

from __future__ import annotations

from pydantic_core import PydanticSerializationError

from rigcheck.core.render import RenderOptions
from rigcheck.core.render.escape import dump_json, json_safe, json_text
from rigcheck.core.report import Report


def render_json(report: Report, options: RenderOptions) -> str:
    try:
        text = report.model_dump_json(indent=2)  # pydantic-core: NaN and infinities become null
    except PydanticSerializationError:
        return dump_json(json_safe(report.model_dump(), nonfinite=lambda _: None)) + "\n"
    return json_text(text) + "\n"
