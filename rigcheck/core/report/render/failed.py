"""The report written in place of each output when a run ends with exit code 2 before anything was
checked (a bad config, an unknown plugin, a spec that does not load for ``check``): it says why, in
the output's own format, so that a file a later CI step uploads is never a stale report, nor one a
pull request committed (docs/security.md). Every text goes through :mod:`rigcheck.core.report.render.escape`.
"""

from __future__ import annotations

from rigcheck.core.report.render.escape import (
    dump_json,
    escape_github_data,
    escape_markdown,
    escape_stderr,
    escape_xml,
    guard_line,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def failed_report(format_name: str, reason: str, version: str) -> str:
    """The document that says nothing was checked, and why, in ``format_name`` (a plugin's format, or
    text, gets a plain line)."""
    said = f"nothing was checked (exit 2): {reason}"
    if format_name == "json":
        document = {"schema_version": 1, "tool": {"name": "rigcheck", "version": version}}
        return dump_json({**document, "exit_code": 2, "error": said}) + "\n"
    if format_name == "sarif":
        notification = {"level": "error", "message": {"text": said}}
        run = {
            "tool": {"driver": {"name": "rigcheck", "version": version, "rules": []}},
            "invocations": [
                {"executionSuccessful": False, "exitCode": 2, "toolExecutionNotifications": [notification]}
            ],
            "results": [],
        }
        return dump_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}) + "\n"
    if format_name == "junit":
        text = escape_xml(said)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<testsuites name="rigcheck" tests="1" failures="0" errors="1" skipped="0" time="0">\n'
            '  <testsuite name="rigcheck" tests="1" failures="0" errors="1" skipped="0" time="0">\n'
            '    <testcase classname="rigcheck" name="run" time="0">\n'
            f'      <error type="exit-2" message="{text}">{text}</error>\n'
            "    </testcase>\n  </testsuite>\n</testsuites>\n"
        )
    if format_name == "github":
        return f"::error title=rigcheck::{escape_github_data(said)}\n"
    if format_name == "markdown":
        return f"## rigcheck: ❌ nothing was checked\n\n{escape_markdown(said, table=False)}\n"
    if format_name == "html":
        text = escape_xml(said)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>rigcheck: nothing was checked'
            f"</title></head>\n<body><h1>rigcheck: nothing was checked</h1>\n<p>{text}</p></body></html>\n"
        )
    return guard_line(escape_stderr(f"rigcheck: {said}")) + "\n"
