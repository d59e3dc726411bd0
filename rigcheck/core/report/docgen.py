"""Rule documentation pages (``docs/rules/CODE.md``), generated from the rule registry.

``rigcheck explain CODE`` prints the same text. A test fails when ``docs/rules/`` differs from
what the registry generates; regenerate with ``python -m rigcheck.core.report.docgen``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rigcheck.core.engine.registry import Registry, RuleEntry


def rule_markdown(entry: RuleEntry) -> str:
    rule, docs = entry.rule, entry.rule.docs.resolved()
    lines = [
        f"# {rule.code}: {rule.name}",
        "",
        f"{rule.summary}.",
        "",
        f"- Default severity: **{rule.severity.value}**",
        f"- Checker: `{entry.checker}` (plugin `{entry.plugin.name}`)",
        f"- Since: {rule.since}; status: {rule.status}",
        "",
        "## What it does",
        "",
        docs.what,
        "",
        "## Why it matters",
        "",
        docs.why,
        "",
        "## Example",
        "",
        docs.example,
        "",
        "## How to fix",
        "",
        docs.fix,
        "",
    ]
    if docs.references:
        lines += ["## References", ""]
        lines += [f"- {reference}" for reference in docs.references]
        lines.append("")
    return "\n".join(lines)


def index_markdown(registry: Registry) -> str:
    lines = [
        "# Rules",
        "",
        "Generated from rigcheck's rule registry (`python -m rigcheck.core.report.docgen`); do not edit by hand.",
        "`rigcheck rules` lists the same table, `rigcheck explain CODE` prints one page.",
        "",
        "| Code | Name | Severity | Summary |",
        "|---|---|---|---|",
    ]
    for entry in registry.sorted_rules():
        if not entry.plugin.builtin:
            continue
        rule = entry.rule
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity.value} | {rule.summary} |"
        )
    return "\n".join(lines) + "\n"


def generate(registry: Registry) -> dict[str, str]:
    """``{file name: content}`` of the built-in rules' pages and the index."""
    pages = {
        f"{entry.rule.code}.md": rule_markdown(entry)
        for entry in registry.sorted_rules()
        if entry.plugin.builtin
    }
    pages["README.md"] = index_markdown(registry)
    return pages


def builtin_registry() -> Registry:
    from rigcheck.core.engine.plugin_manager import PluginHost

    return PluginHost(autoload=False).load()


if __name__ == "__main__":  # python -m rigcheck.core.report.docgen [FOLDER]
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/rules")
    folder.mkdir(parents=True, exist_ok=True)
    pages = generate(builtin_registry())
    for stale in folder.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages to {folder}")
