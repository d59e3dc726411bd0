"""The engine's own rules: faults of plugins and checkers, reported as findings of their own."""

from __future__ import annotations

from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.severity import Severity

_REFS = (
    "docs/design.md section 5: a checker that raises is reported as a fail finding; the others still run",
)

CHECKER_CRASHED = Rule(
    code="ENGINE001",
    name="checker-crashed",
    summary="A checker raised an exception; its rules were not checked",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a checker (built-in or from a plugin) that raised an exception while checking.",
        why="A crashed checker has checked nothing. Counting it as a pass would hide exactly the problems it "
        "exists to find, so the run reports a failure and goes on with the other checkers.",
        example="```\n✗ ENGINE001 checker rack-power (plugin rigcheck-rack-power 1.2.0) raised KeyError: 'site'\n```",
        fix="Upgrade or fix the plugin named in the finding, or turn it off with `-p no:NAME` and report the bug "
        "to its authors with the traceback from `RIGCHECK_DEBUG=1`.",
        references=_REFS,
    ),
)

CHECKER_TIMED_OUT = Rule(
    code="ENGINE002",
    name="checker-timed-out",
    summary="A checker ran past its time limit; its rules were not checked",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a checker that did not finish within its time limit (10 s unless the checker sets "
        "`timeout_s`, or `--checker-timeout` says otherwise; never past the run's `--timeout`: ENGINE005).",
        why="A linter in pre-commit and CI must finish. A hung checker is stopped, reported, and the run goes on.",
        example="```\n✗ ENGINE002 checker slow-policy (plugin acme-policy 0.3) did not finish within 10.0 s\n```",
        fix="Find the loop or blocking call in the plugin (checkers must not do I/O), or raise `--checker-timeout` "
        "if the checker is legitimately slow on a very large rig.",
        references=_REFS,
    ),
)

CHECKER_INVALID_RESULT = Rule(
    code="ENGINE003",
    name="checker-returned-invalid-result",
    summary="A checker's check() did not give findings of its own rules",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports a checker whose `check()` returned `None` (a `check()` without `yield`: it checked "
        "nothing), returned something that is not an iterable of findings (`return 42`, a string, a mapping, "
        "one `Finding` instead of a list of them), yielded an object that is not a `rigcheck.Finding`, yielded "
        "a finding of a rule it does not declare, or (third-party checkers) a finding whose evidence is not "
        "JSON data. The findings it did give that are valid are kept; the message says whether its rules were "
        "checked at all. A `check()` that raises while it runs is `ENGINE001` instead.",
        why="Findings drive exit codes, suppressions and machine-readable reports; one that cannot be trusted "
        "is dropped and reported rather than guessed at. A checker that returns `None` would otherwise pass "
        "silently, which is exactly the mistake a linter must not hide.",
        example="```\n✗ ENGINE003 checker gpu-policy (plugin acme 0.1) returned None from check() instead of findings "
        "(a check() without `yield` returns None); its rules were not checked\n"
        "✗ ENGINE003 checker gpu-policy (plugin acme 0.1) yielded dict \"{'ok': True}\", not a rigcheck.Finding\n```",
        fix="Yield the findings from `check()` (or return a list of them), built with the checker's own rules: "
        "`yield RULE.failed(message, location=..., evidence=...)`.",
        references=_REFS,
    ),
)

PLUGIN_FAILED_TO_LOAD = Rule(
    code="ENGINE004",
    name="plugin-failed-to-load",
    summary="An installed plugin could not be imported or its registration hook raised",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Reports an installed plugin (entry-point group `rigcheck`, or named in the config's `plugins:`) "
        "that failed to import, a registration hook that raised, a catalog entry that was refused (every field "
        "that failed is named; so is a name or alias that another entry already has), and a config model that "
        "was refused. The message ends with what the fault cost: after a failed import its checkers did not "
        "run; after a refused catalog entry only that entry is missing and its checkers ran. (A module named "
        "with `-p` that fails to import is an error, exit code 2, not this finding.)",
        why="The run goes on with the other plugins (and with what the faulty one did register), and says "
        "exactly what is missing, so a report never passes for checks that did not happen.",
        example="```\n✗ ENGINE004 plugin rigcheck-site-policy 0.2.0 failed in import: ModuleNotFoundError: "
        "No module named 'requests'\n```",
        fix="Install the plugin's missing dependency, upgrade the plugin, or block it with `-p no:NAME` or "
        "`RIGCHECK_DISABLE_PLUGIN_AUTOLOAD=1`.",
        references=("datasette and pytest load plugins from entry points the same way",),
    ),
)

RUN_TIMED_OUT = Rule(
    code="ENGINE005",
    name="run-timed-out",
    summary="The run reached its --timeout before this rig or pair was checked; it was not checked",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="`--timeout SECONDS` bounds the whole run. The rigs and pairs not checked when it is reached "
        "get this finding each, and the report is written as usual; a checker still running then is "
        "stopped as ENGINE002 says. A run that cannot stop (a plugin blocked at import) is ended a few "
        "seconds later by the watching parent, with exit code 2 and each output saying it did not finish.",
        why="A CI step needs a bound it can rely on, and a report that says what was left out: a run that "
        "is cut short and passes would call unchecked specs good.",
        example="```console\n$ rigcheck lint specs/ --timeout 60\n```",
        fix="Raise `--timeout`, split the lint over several steps, or find the slow checker "
        "(`rigcheck lint -f json` lists each checker's time under `checkers`).",
        references=_REFS,
    ),
)

ENGINE_RULES = (
    CHECKER_CRASHED,
    CHECKER_TIMED_OUT,
    CHECKER_INVALID_RESULT,
    PLUGIN_FAILED_TO_LOAD,
    RUN_TIMED_OUT,
)
