"""Regenerate everything derived from the code and the data, after adding or changing a rule, a model
field or a catalog field (issue 45: one command):

    python tools/regenerate.py

- ``docs/rules/`` (one page per rule and the index, from the registry: rigcheck.core.report.docgen);
- ``schemas/`` (the JSON Schemas of the spec models: rigcheck.core.spec.schemas);
- the field reference in ``docs/specs.md`` (rigcheck.core.spec.field_docs);
- the catalog field table in ``docs/plugins.md`` (rigcheck.core.catalog.catalog_docs);
- the golden reports (``tests/golden/``: ``RIGCHECK_UPDATE_GOLDEN=1`` on the golden tests).

Review the diff before committing: a test fails on each of these until they match the code again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STEPS = [
    [sys.executable, "-m", "rigcheck.core.report.docgen", "docs/rules"],
    [sys.executable, "-m", "rigcheck.core.spec.schemas", "schemas"],
    [sys.executable, "-m", "rigcheck.core.spec.field_docs", "docs/specs.md"],
    [sys.executable, "-m", "rigcheck.core.catalog.catalog_docs", "docs/plugins.md"],
    [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "tests/test_golden.py",
        "tests/test_lint_formats.py",
    ],
]


def main() -> int:
    env = {**os.environ, "RIGCHECK_UPDATE_GOLDEN": "1", "PYTHONPATH": str(REPO)}
    for step in STEPS:
        print("+", " ".join(step[1:]), file=sys.stderr)
        if subprocess.run(step, cwd=REPO, env=env, check=False).returncode != 0:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
