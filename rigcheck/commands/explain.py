"""``rigcheck explain CODE|NAME``: print the documentation of one rule as Markdown."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rigcheck.commands._options import add_plugin_options
from rigcheck.commands._shared import load_registry
from rigcheck.exit_codes import EXIT_OK

if TYPE_CHECKING:
    from rigcheck.core.engine.registry import Registry, RuleEntry


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("explain", help="print the documentation of one rule")
    parser.add_argument(
        "code", metavar="CODE|NAME", help="a rule's code (PWR002) or name (psu-transient-headroom-too-low)"
    )
    add_plugin_options(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from rigcheck.core.engine.errors import UsageError
    from rigcheck.core.report.docgen import rule_markdown
    from rigcheck.core.report.render.escape import escape_lines

    registry = load_registry(args.plugins)
    entry = find_rule(registry, args.code)
    if entry is None:
        raise UsageError(
            f"rigcheck explain: no rule {args.code!r}{_nearest(registry, args.code)} (rigcheck rules lists them)"
        )
    print(escape_lines(rule_markdown(entry)), end="")
    return EXIT_OK


def _name_key(text: str) -> str:
    return text.strip().lower().replace("_", "-").replace(" ", "-")


def find_rule(registry: Registry, text: str) -> RuleEntry | None:
    """The rule whose code (any case) or kebab-case name (``_`` and spaces for ``-``) is ``text``."""
    entry = registry.rule(text.strip())
    if entry is not None:
        return entry
    wanted = _name_key(text)
    return next((e for e in registry.rules.values() if e.rule.name == wanted), None)


def _nearest(registry: Registry, text: str) -> str:
    """``"; did you mean 'PWR002' (psu-transient-headroom-too-low)?"``: the closest code or name."""
    if len(text) > 100:
        return ""
    by_key = {entry.rule.code.lower(): entry for entry in registry.rules.values()}
    by_key.update({entry.rule.name: entry for entry in registry.rules.values()})
    import difflib  # only for a code that is not a rule

    near = difflib.get_close_matches(_name_key(text), list(by_key), n=1, cutoff=0.6)
    if not near:
        return ""
    rule = by_key[near[0]].rule
    return f"; did you mean {rule.code!r} ({rule.name})?"
