"""Rules of rigcheck's own lint pipeline: pairing specs, suppressions, waivers, the config file.

They are not checkers: ``rigcheck lint`` and ``rigcheck check`` produce these findings while
discovering specs and applying suppressions, and they are registered with the engine's rules so
that ``rigcheck explain``, ``--select``/``--ignore`` and the generated docs know them.
"""

from __future__ import annotations

from rigcheck.core.engine.rules import Rule, RuleDocs
from rigcheck.core.engine.severity import Severity

_LINTERS = "https://docs.astral.sh/ruff/rules/unused-noqa/ (RUF100)"

WORKLOAD_WITHOUT_RIG = Rule(
    code="LINT001",
    name="workload-without-rig",
    summary="A workload spec is not paired with any rig, so only its syntax was checked",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="`rigcheck lint` pairs each workload with the rigs it names in `runs_on:` and with the pairs and "
        "matrix of the project config. A workload with none is loaded and validated, and reported as not checked.",
        why="A workload that never meets a rig is never checked for fit, speed, storage or networking: the "
        "checks a reviewer expects silently did not happen.",
        example="```yaml\nkind: Workload\nname: llama-finetune\n"
        "# no runs_on: and no pair in .rigcheck.yaml: LINT001\n```",
        fix="Add `runs_on: [rig-file.yaml or rig-name]` to the workload, or a `pairs:` entry to `.rigcheck.yaml`.",
        references=("docs/ci.md",),
    ),
)

UNKNOWN_RIG = Rule(
    code="LINT002",
    name="runs-on-unknown-rig",
    summary="A runs_on entry or a config pair names a rig or workload that cannot be found",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Resolves each entry of a workload's `runs_on:` (a path relative to the workload file, or a rig "
        "`name:` among the scanned files or the shipped specs) and each config pair; reports the ones that match "
        "nothing.",
        why="A misspelt rig name would otherwise drop the pair from the check without a trace.",
        example="```yaml\nruns_on: [dgx-h100-x5]   # no such rig: LINT002\n```",
        fix="Correct the name or path (the message lists the nearest names).",
        references=("docs/ci.md",),
    ),
)

INVALID_SUPPRESSION = Rule(
    code="SUP001",
    name="invalid-suppression",
    summary="A suppression comment has no reason, names an unknown rule, or cannot be read; it is not applied",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Checks every `# rigcheck: ignore[CODE] reason: ...` and `# rigcheck: ignore-file[CODE] reason: ...` "
        "comment: it needs at least one known rule code (or prefix) and a reason. A comment that fails is not "
        "applied.",
        why="A suppression is a reviewed decision. Without a reason a reviewer cannot judge it later, and a typo "
        "in a code would silently suppress nothing while looking like it does (Checkov #7501).",
        example="```yaml\npsu: {watts: 1000}  # rigcheck: ignore[PWR001]   <- SUP001: no reason\n```",
        fix="Write `# rigcheck: ignore[PWR001] reason: measured 780 W at the wall with the cards limited to 300 W`.",
        references=(_LINTERS,),
    ),
)

UNUSED_SUPPRESSION = Rule(
    code="SUP002",
    name="unused-suppression",
    summary="A suppression or waiver matched no finding",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Reports suppression comments and config waivers whose rules ran on the file but produced no "
        "warning, failure or not-checked finding where the suppression points.",
        why="Stale suppressions hide the next real problem at that place; like ruff's RUF100, rigcheck asks for "
        "them to be removed once the problem is fixed.",
        example="```yaml\npsu: {watts: 1600}  # rigcheck: ignore[PWR001] reason: old PSU\n"
        "# SUP002 once the bigger PSU is in\n```",
        fix="Delete the comment or waiver.",
        references=(_LINTERS,),
    ),
)

EXPIRED_WAIVER = Rule(
    code="SUP003",
    name="expired-waiver",
    summary="A config waiver is past its expires: date and no longer applies",
    severity=Severity.WARN,
    docs=RuleDocs(
        what="Reports waivers in the project config whose `expires:` date has passed. The findings they covered "
        "count again.",
        why="Waivers are meant to be temporary (a PSU upgrade on order, a rack being rewired); an expiry date makes "
        "sure they are looked at again (spotbugs #918, grype #3031 ask for the same).",
        example="```yaml\nwaivers:\n  - {rule: PWR005, path: specs/rigs/lab.yaml, reason: second feed in Q3, "
        "expires: 2026-09-30}\n```",
        fix="Fix the problem, or renew the waiver with a new date and reason.",
        references=("docs/ci.md",),
    ),
)

CONFIG_ERROR = Rule(
    code="CONFIG001",
    name="invalid-config",
    summary="The project config (.rigcheck.yaml or [tool.rigcheck]) cannot be used",
    severity=Severity.FAIL,
    docs=RuleDocs(
        what="Validates the project config against `schemas/config.schema.json`: known keys, rule codes, "
        "thresholds that exist in `specs/rules/*.yaml` with the same kind of value, waivers with a reason and a "
        "scope. An invalid config stops the run with exit code 2 and the file, line and key.",
        why="A config that is silently half-read is worse than none: a misspelt `ignore:` would turn rules off "
        "nobody meant to turn off, or leave on the ones that were.",
        example="```yaml\nfail_on: warning   # CONFIG001: warn or fail\n```",
        fix="Correct the key or value the message names; `rigcheck lint --show-config` prints the effective "
        "settings and where each came from.",
        references=("docs/ci.md",),
    ),
)

#: The most findings of one rule at one severity that a report lists in one file (LINT003 folds the rest).
FOLD_AFTER = 100

FINDINGS_FOLDED = Rule(
    code="LINT003",
    name="findings-folded",
    summary="One rule found more in one file than a report lists: the rest are counted, not listed",
    severity=Severity.WARN,
    docs=RuleDocs(
        what=f"A report lists at most {FOLD_AFTER} findings of one rule at one severity in one file; the rest are "
        "folded into this one finding, which has their severity, says how many there are and where the "
        "first of them is, and stands for all of them in the summary, the verdict and the exit code.",
        why="A file of 20,000 identical nodes made a 250 MB JSON report and a pull request's annotations "
        "unreadable (issue 44): past a hundred, more copies of one finding tell a reviewer nothing new, "
        "and a report must stay a size a CI step can upload.",
        example="```yaml\nnodes:   # 20,000 nodes with the same problem: 100 findings listed, then\n"
        "         # LINT003: 19,900 more fail findings of PWR001 in rig.yaml\n```",
        fix="Fix the listed findings (they are the same problem as the folded ones) and run again. "
        "`--create-baseline` lists every finding, folded or not.",
        references=("docs/security.md",),
    ),
)

LINT_RULES = (
    WORKLOAD_WITHOUT_RIG,
    UNKNOWN_RIG,
    FINDINGS_FOLDED,
    INVALID_SUPPRESSION,
    UNUSED_SUPPRESSION,
    EXPIRED_WAIVER,
    CONFIG_ERROR,
)
