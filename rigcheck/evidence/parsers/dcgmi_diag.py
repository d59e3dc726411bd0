"""``dcgmi diag -r 1|2|3|4``: the 78-column ASCII table.

DCGM 3.x: a Metadata section (``DCGM Version``, ``Driver Version Detected``, ``GPU Device IDs
Detected``), then named checks (Deployment, Integration, Hardware, Stress) with ``Pass``, ``Fail``,
``Warn``, ``Skip`` or ``Pass - All``; an ``Error``/``Warning`` row below a check carries text that
dcgmi wraps at a fixed width, cutting words, so the continuation cells are joined without adding
spaces. DCGM 4.x: lower-case plugin rows (``software``, ``memory``...) each followed by per-GPU rows
``GPU0: Pass``, which become one result per GPU.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import DiagResult, Evidence

_RESULT = re.compile(r"^(Pass|Fail|Warn|Warning|Skip|Skipped|Not Run|Error)\b", re.IGNORECASE)
_GPU_RESULT = re.compile(r"^GPU\s*(\d+)\s*:\s*(Pass|Fail|Warn|Warning|Skip|Skipped|Not Run)\b(.*)$", re.I)
_SECTION = re.compile(r"^[|+]-+\s+([A-Za-z][\w ]*?)\s+-+[+|]")
_DETAIL_NAMES = {"error", "warning", "info"}
_NORMAL = {
    "pass": "pass",
    "fail": "fail",
    "warn": "warn",
    "warning": "warn",
    "skip": "skip",
    "skipped": "skip",
    "not run": "skip",
}


def _split(line: str) -> tuple[str, str] | None:
    """(name cell, raw result area) of a ``| name | result |`` row; None for other lines."""
    body = line.rstrip()
    if not body.startswith("|") or not body.endswith("|") or body.count("|") < 3:
        return None
    first = body.index("|", 1)
    return body[1:first].strip(), body[first + 1 : -1]


def _chunk(area: str) -> str:
    """The text of a wrapped cell: dcgmi pads ``| `` + text + ``  |``; keep inner spaces as they are."""
    return area[1:-2] if len(area) > 3 else area.strip()


class _Test:
    def __init__(self, name: str, result: str, detail: str) -> None:
        self.name = name
        self.result = result
        self.detail_parts: list[str] = [detail] if detail else []
        self.gpus: list[tuple[int, str, str]] = []


class DcgmiDiagParser:
    name = "dcgmi-diag"

    def detect(self, text: str) -> bool:
        return bool(re.search(r"\|\s*Diagnostic\s*\|\s*Result\s*\|", text)) or (
            "Successfully ran diagnostic" in text
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        extra: dict[str, Any] = {}
        metadata: dict[str, str] = {}
        tests: list[_Test] = []
        section = ""
        detail_target: _Test | None = None
        for line in text.splitlines():
            if match := _SECTION.match(line.strip()):
                section = match.group(1).strip()
                detail_target = None
                continue
            cells = _split(line)
            if cells is None:
                continue
            name, area = cells
            value = area.strip()
            if name == "Diagnostic" and value == "Result":
                continue
            if section.lower() == "metadata" and name:
                metadata[name] = value
                continue
            if name.lower() in _DETAIL_NAMES:
                target = tests[-1] if tests else None
                if target is not None:
                    # A new message: keep it apart from what came before.
                    target.detail_parts.append((" " if target.detail_parts else "") + _chunk(area))
                detail_target = target
                continue
            if name:
                match = _RESULT.match(value)
                if match is None:
                    problems.append(f"cannot read the result of {name!r}: {value!r}")
                    detail_target = None
                    continue
                word = match.group(1).lower()
                if word == "error":
                    word = "fail"
                rest = value[match.end() :].strip(" -")
                tests.append(_Test(name, _NORMAL.get(word, "fail"), rest if rest.lower() != "all" else ""))
                detail_target = None
                continue
            # A row with an empty name: a per-GPU result (4.x) or the continuation of a detail.
            if match := _GPU_RESULT.match(value):
                if tests:
                    word = match.group(2).lower()
                    tests[-1].gpus.append(
                        (int(match.group(1)), _NORMAL.get(word, "skip"), match.group(3).strip())
                    )
                detail_target = None
                continue
            if re.match(r"^(Error|Warning|Info)\s*:", value) and tests:
                detail_target = tests[-1]
                detail_target.detail_parts.append(" " + _chunk(area))
                continue
            if detail_target is not None:
                detail_target.detail_parts.append(_chunk(area))

        results: list[DiagResult] = []
        for test in tests:
            detail = " ".join("".join(test.detail_parts).split()) or None
            gpu_results = {result for _gpu, result, _rest in test.gpus}
            if not test.gpus or test.result not in gpu_results:
                # 3.x names the failing GPUs in the result cell: "Fail - GPU: 0".
                named = re.findall(r"\d+", test.detail_parts[0]) if test.detail_parts else []
                single = int(named[0]) if len(named) == 1 and test.detail_parts[0].startswith("GPU") else None
                results.append(
                    DiagResult(test=test.name, result=test.result, gpu=single, detail=detail)  # type: ignore[arg-type]
                )
            for gpu, result, rest in test.gpus:
                results.append(
                    DiagResult(test=test.name, result=result, gpu=gpu, detail=rest or detail)  # type: ignore[arg-type]
                )
        if not results:
            problems.append("no diagnostic rows after the header")
        device_ids = [
            item.strip() for item in metadata.get("GPU Device IDs Detected", "").split(",") if item.strip()
        ]
        if device_ids:
            extra["gpu_device_ids"] = device_ids
        level = re.search(r"dcgmi diag\s+-r\s+(\w+)", text)
        if level:
            extra["level"] = level.group(1)
        if not metadata:
            extra["metadata"] = False
        return Evidence(
            source=path,
            tool=self.name,
            diag_version=metadata.get("DCGM Version"),
            driver_version=metadata.get("Driver Version Detected"),
            gpu_count=len(device_ids) or None,
            diag=results,
            problems=problems,
            extra=extra,
        )


PARSER = DcgmiDiagParser()
