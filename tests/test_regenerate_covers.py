"""One command regenerates everything derived (issue 45): every generator a test names in its failure
message ("run: python -m MODULE TARGET") is a step of tools/regenerate.py, so a newcomer who adds a rule
or a field runs that one command."""

from __future__ import annotations

import re

from .conftest import REPO


def test_every_generator_the_tests_name_is_a_step_of_regenerate() -> None:
    named = set()
    for path in (REPO / "tests").glob("*.py"):
        named |= set(re.findall(r"python -m (rigcheck[\w.]+) ([\w./-]+)", path.read_text(encoding="utf-8")))
    steps = (REPO / "tools" / "regenerate.py").read_text(encoding="utf-8")
    assert named, "no generator named by the tests"
    missing = sorted(
        f"{module} {target}" for module, target in named if f'"{module}", "{target}"' not in steps
    )
    assert missing == [], f"not run by tools/regenerate.py: {missing}"
