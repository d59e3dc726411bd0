"""Every number in docs/reference-rigs.md's tables is one rigcheck prints for that run (issue 17: the page
said 955 W and 9-25 h where the tool printed 905 W and 9.2-31.6 h). Numbers in double quotes are quoted
from elsewhere and left out."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import REPO

PAGE = (REPO / "docs" / "reference-rigs.md").read_text(encoding="utf-8")
ROWS = [line for line in PAGE.split("\n## ")[0].splitlines() if line.startswith("| `")]
NUMBER = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(kW|W|GiB|GB|TB|h|tokens/s|%|x|ms|s|Gb/s|GB/s|kB)(?![\w])"
)
QUOTED = re.compile(r'"[^"]*"')


def _runs(first_cell: str) -> list[list[str]]:
    names = re.findall(r"`([^`]+)`", first_cell)
    return [names[:2]] if " + " in first_cell else [[name] for name in names]


def _printed(run_cli, names: list[str]) -> str:  # type: ignore[no-untyped-def]
    """Messages, fixes and evidence of ``check`` (and, for a pair, ``estimate``'s JSON)."""
    report = run_cli("check", *names, "-f", "json").json()
    said = [[f["message"], f["fix"], f["evidence"]] for f in report["findings"]]
    if len(names) == 2:
        said.append(run_cli("estimate", names[1], "--rig", names[0], "-f", "json").json())
    return json.dumps(said)


def test_the_page_has_its_two_tables() -> None:
    assert len(ROWS) == 24


@pytest.mark.parametrize("row", ROWS, ids=[row.split("|")[1].strip() for row in ROWS])
def test_every_number_of_a_row_is_printed_by_its_run(run_cli, row: str) -> None:  # type: ignore[no-untyped-def]
    first, _verdict, why = (cell.strip() for cell in row.strip().strip("|").split("|")[:3])
    printed = " ".join(_printed(run_cli, names) for names in _runs(first))
    printed_numbers = {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", printed)}
    missing = [
        said
        for said, value, unit in (
            (match.group(0), match.group(1), match.group(2)) for match in NUMBER.finditer(QUOTED.sub("", why))
        )
        if not _rounds_to(value, unit, printed_numbers)
    ]
    assert not missing, f"{first}: the page says {missing}, the run prints none of them"


def _rounds_to(value: str, unit: str, printed: set[float]) -> bool:
    """Whether a printed number, rounded to the page's decimals, is ``value`` (74.788 GiB is the page's
    74.79 GiB, 9,588 W its 9.6 kW)."""
    decimals = len(value.split(".")[1]) if "." in value else 0
    target = float(value.replace(",", ""))
    scales = (1.0, 1000.0) if unit == "kW" else (1.0,)
    return any(round(number / scale, decimals) == target for number in printed for scale in scales)
