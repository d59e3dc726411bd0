"""The table of a catalog entry's fields in docs/plugins.md, generated from the ``GpuSpec`` model.

``python -m rigcheck.core.catalog.catalog_docs docs/plugins.md`` rewrites the block between the markers; a test
fails when the page and the model differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

START = (
    "<!-- catalog-fields: generated from GpuSpec by "
    "`python -m rigcheck.core.catalog.catalog_docs docs/plugins.md` -->"
)
END = "<!-- /catalog-fields -->"


def fields_table() -> str:
    """A Markdown table: every field of a catalog entry, whether it is required, its type and limits (and
    what it means, where the model says)."""
    from rigcheck.core.catalog.catalog import GpuSpec

    schema = GpuSpec.model_json_schema()
    definitions = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    lines = ["| field | required | type and limits |", "|---|---|---|"]
    for name, prop in schema["properties"].items():
        kind = _kind(prop, definitions)
        if "default" in prop and prop["default"] not in (None, []):
            kind += f"; default {json.dumps(prop['default'])}"
        if prop.get("description"):
            kind += f". {prop['description']}"
        lines.append(f"| `{name}` | {'**yes**' if name in required else 'no'} | {_cell(kind)} |")
    return "\n".join(lines)


def _kind(prop: dict[str, Any], definitions: dict[str, Any]) -> str:
    """``number > 0``, ``"nvidia" or "amd"``, ``list of strings``, ``{gen: integer 1..7 (required), ...}``."""
    if "anyOf" in prop:
        options = [option for option in prop["anyOf"] if option.get("type") != "null"]
        return " or ".join(_kind(option, definitions) for option in options)
    if "$ref" in prop:
        target = definitions[prop["$ref"].rsplit("/", 1)[-1]]
        needed = set(target.get("required", ()))
        inner = [
            f"{key}: {_kind(value, definitions)}{' (required)' if key in needed else ''}"
            for key, value in target["properties"].items()
        ]
        return "{" + ", ".join(inner) + "}"
    if "enum" in prop:
        return " or ".join(json.dumps(value) for value in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type", "any")
    if kind == "array":
        if "prefixItems" in prop:
            return "[" + ", ".join(_kind(item, definitions) for item in prop["prefixItems"]) + "]"
        return f"list of {_kind(prop.get('items', {}), definitions)}s"
    if kind == "object":
        return "mapping"
    limits = []
    if "exclusiveMinimum" in prop:
        limits.append(f"> {prop['exclusiveMinimum']:g}")
    if "minimum" in prop and "maximum" in prop:
        limits.append(f"{prop['minimum']:g}..{prop['maximum']:g}")
    elif "minimum" in prop:
        limits.append(f">= {prop['minimum']:g}")
    if "minLength" in prop:
        limits.append(f"of at least {prop['minLength']} characters")
    if "pattern" in prop:
        limits.append(f"matching `{prop['pattern']}`")
    return " ".join([kind, *limits])


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def block() -> str:
    return f"{START}\n\n{fields_table()}\n\n{END}"


def current_block(page: str) -> str | None:
    """The generated block of ``page`` (markers included), or ``None`` when it has none."""
    start = page.find(START)
    end = page.find(END, start)
    return None if start < 0 or end < 0 else page[start : end + len(END)]


def update(path: Path) -> bool:
    """Rewrite the block in ``path``; whether anything changed."""
    page = path.read_text(encoding="utf-8")
    old = current_block(page)
    if old is None:
        raise SystemExit(f"{path}: no {START!r} ... {END!r} block")
    new_page = page.replace(old, block())
    if new_page != page:
        path.write_text(new_page, encoding="utf-8")
    return new_page != page


if __name__ == "__main__":  # python -m rigcheck.core.catalog.catalog_docs [docs/plugins.md]
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/plugins.md")
    print(f"{'updated' if update(target) else 'unchanged'} {target}")
