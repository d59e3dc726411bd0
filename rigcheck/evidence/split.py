"""One file holding several tools' outputs one after another, as a pod check saves them
(``ssh pod "nvidia-smi && df -h && pip show torch" > pod.txt``), split into one part per tool.

A part starts at the first line a tool always prints: nvidia-smi's ``NVIDIA-SMI`` banner (with the
border and the date line above it), the ``Filesystem ... Mounted on`` header of ``df``, ``Name:``
followed by ``Version:`` of ``pip show``, nvcc's ``Cuda compiler driver`` line, torch's
``collect_env`` banner, and a shell prompt echoing the next command (``$ df -h``). A file with fewer
than two such starts is one part, as before. Each line is looked at once, so the split is linear in
the file's size.
"""

from __future__ import annotations

import re

_DF = re.compile(r"^Filesystem\s+.*\bMounted on\s*$")
_PROMPT = re.compile(r"^\S*[$#>]\s+(nvidia-smi|df|pip|pip3|nvcc|python|python3|uv|conda)\b")
_DATE = re.compile(r"\b\d{4}\s*$")
_BORDER = re.compile(r"^\+[-=+]+\+\s*$")


def _starts(lines: list[str]) -> list[int]:
    """Indexes of the lines where a tool's output begins."""
    starts: list[int] = []
    for index, line in enumerate(lines):
        text = line.strip()
        if _PROMPT.match(text):
            starts.append(index)
        elif "NVIDIA-SMI" in text and text.startswith("|"):
            first = index
            if first > 0 and _BORDER.match(lines[first - 1].strip()):
                first -= 1
            if first > 0 and _DATE.search(lines[first - 1]) and ":" in lines[first - 1]:
                first -= 1
            starts.append(first)
        elif (
            _DF.match(text)
            or "Cuda compiler driver" in text
            or text == "Collecting environment information..."
        ) or (
            text.startswith("Name: ")
            and any(following.strip().startswith("Version: ") for following in lines[index + 1 : index + 3])
        ):
            starts.append(index)
    # a prompt right before a tool's first line starts the same part: a start with only blank and prompt
    # lines since the last kept one joins it (one pass: each line is looked at once)
    kept: list[int] = []
    marks = set(starts)
    content = False
    for index, line in enumerate(lines):
        if index in marks and (not kept or content):
            kept.append(index)
            content = False
        text = line.strip()
        if (text and not _PROMPT.match(text) and index not in marks) or (
            index in marks and not _PROMPT.match(text)
        ):
            content = True
    return kept


def split_outputs(text: str) -> list[tuple[int, int, str]]:
    """The parts of ``text``: (first line, last line, text), lines counted from 1; the whole text as one
    part unless two or more tools' outputs start in it."""
    lines = text.split("\n")
    starts = _starts(lines)
    if len(starts) < 2:
        return [(1, len(lines), text)]
    starts[0] = 0  # what comes before the first tool's output belongs to it
    parts = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        body = [line for line in lines[start:end] if not _PROMPT.match(line.strip())]
        parts.append((start + 1, end, "\n".join(body)))
    return parts
