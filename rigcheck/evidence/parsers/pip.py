"""pip's views of the installed Python distributions: ``pip show NAME...``, ``pip list`` and ``pip freeze``.

* ``pip show`` prints ``Key: value`` lines per distribution (``Name``, ``Version``, ``Location``,
  ``Requires``, ``Required-by``...), distributions separated by ``---``; a name it cannot find gives
  ``WARNING: Package(s) not found: NAME``.
* ``pip list`` prints a ``Package  Version`` header (a third column, ``Editable project location``, when
  one is editable), a row of dashes, then one distribution per line; pip may add ``[notice]`` lines.
* ``pip freeze`` prints requirement lines: ``name==version``, ``name @ URL`` (installed from a file or
  VCS: no version), ``-e URL#egg=name``, and ``-e PATH`` for a local editable install (named only in
  the ``# Editable install with no version control (name==version)`` comment above it).

Names are normalised as PEP 503 says (lower case, runs of ``-``, ``_``, ``.`` as one ``-``), so
``nvidia_cuda_runtime_cu12`` and ``nvidia-cuda-runtime-cu12`` are one distribution. Facts drawn from the
versions: torch's version and the CUDA it runs on, from its ``+cuXYZ`` tag (download.pytorch.org
wheels) or, for PyPI's Linux wheels that carry no tag and depend on NVIDIA's CUDA wheels, from the
``nvidia-cuda-runtime-cuNN`` version (12.1.105 -> 12.1); NCCL's from ``nvidia-nccl-cuNN``.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence, TorchEvidence
from rigcheck.evidence.parsers.torch_env import cuda_from_tag

_SHOW_FIELD = re.compile(r"^([A-Za-z][\w-]*):[ \t]?(.*)$")
_LIST_HEADER = re.compile(r"^Package\s+Version(?:\s+\S.*)?$")
_DASHES = re.compile(r"^-+(?:\s+-+)+\s*$")
_REQUIREMENT = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*"
    r"(?:(?:===?)\s*(?P<version>[^\s;#]+)|@\s*(?P<url>\S+))\s*(?:[;#].*)?$"
)
_EDITABLE = re.compile(r"^-e\s+\S*?(?:[#&]egg=(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*))?\S*$")
_NOISE = ("[notice]", "WARNING:", "DEPRECATION:", "#")
#: NVIDIA's CUDA wheels whose versions are worth naming (pip list of a torch install).
CUDA_WHEEL = re.compile(r"^nvidia-[a-z0-9-]+-cu\d+$")


def normalise(name: str) -> str:
    """PEP 503: ``Nvidia_CUDA.runtime-cu12`` -> ``nvidia-cuda-runtime-cu12``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _noise(line: str) -> bool:
    return line.startswith(_NOISE)


def facts_from_packages(packages: dict[str, str]) -> dict[str, Any]:
    """The torch facts (version, CUDA) and the CUDA wheels named by a {name: version} map."""
    facts: dict[str, Any] = {}
    wheels = {name: version for name, version in packages.items() if CUDA_WHEEL.match(name)}
    torch_version = packages.get("torch")
    runtime = next(
        (version for name, version in sorted(wheels.items()) if name.startswith("nvidia-cuda-runtime-cu")),
        None,
    )
    cuda = cuda_from_tag(torch_version)
    if cuda is None and runtime:
        parts = runtime.split(".")
        cuda = ".".join(parts[:2]) if len(parts) >= 2 else None
    if torch_version or cuda:
        facts["torch"] = TorchEvidence(version=torch_version, cuda=cuda if torch_version else None)
    extra: dict[str, Any] = {}
    if wheels:
        extra["cuda_wheels"] = wheels
    if runtime:
        extra["cuda_runtime_wheel"] = runtime
    nccl = next(
        (version for name, version in sorted(wheels.items()) if name.startswith("nvidia-nccl-cu")), None
    )
    if nccl:
        extra["nccl"] = nccl
    facts["extra"] = extra
    return facts


def _evidence(name: str, path: str, packages: dict[str, str], problems: list[str], **extra: Any) -> Evidence:
    facts = facts_from_packages(packages)
    return Evidence(
        source=path,
        tool=name,
        packages=packages,
        torch=facts.get("torch"),
        problems=problems,
        extra={**facts["extra"], **extra},
    )


class PipShowParser:
    name = "pip-show"

    def detect(self, text: str) -> bool:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        lines = [line for line in lines if not line.startswith("WARNING: Package(s) not found")]
        return (
            bool(lines)
            and lines[0].startswith("Name: ")
            and any(line.startswith("Version: ") for line in lines[:3])
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        packages: dict[str, str] = {}
        details: dict[str, dict[str, str]] = {}
        current: dict[str, str] = {}
        blocks: list[dict[str, str]] = []
        for raw in text.splitlines():
            line = raw.rstrip()
            if line.strip() == "---":
                blocks.append(current)
                current = {}
                continue
            if line.startswith("WARNING: Package(s) not found"):
                problems.append(f"pip: {line.split(':', 1)[1].strip()}")
                continue
            if match := _SHOW_FIELD.match(line):
                key = match.group(1)
                if key in current and key != "Name":
                    continue
                if key == "Name" and current:
                    blocks.append(current)
                    current = {}
                current[key] = match.group(2).strip()
        blocks.append(current)
        for block in blocks:
            if not block:
                continue
            if "Name" not in block or "Version" not in block:
                problems.append(f"a pip show block without {'Name' if 'Name' not in block else 'Version'}")
                continue
            name = normalise(block["Name"])
            packages[name] = block["Version"]
            details[name] = {
                key.lower().replace("-", "_"): block[key]
                for key in ("Location", "Requires", "Required-by")
                if block.get(key)
            }
        return _evidence(self.name, path, packages, problems, details=details)


class PipListParser:
    name = "pip-list"

    def detect(self, text: str) -> bool:
        lines = [line.rstrip() for line in text.splitlines() if line.strip() and not _noise(line.strip())]
        return len(lines) >= 2 and bool(_LIST_HEADER.match(lines[0])) and bool(_DASHES.match(lines[1]))

    def parse(self, text: str, path: str) -> Evidence:
        """Rows are cut at the columns of the dashes line (pip aligns them), so that an empty ``Build``
        cell does not shift the editable location into it."""
        problems: list[str] = []
        packages: dict[str, str] = {}
        columns: dict[str, dict[str, str]] = {}
        lines = [line.rstrip() for line in text.splitlines() if line.strip() and not _noise(line.strip())]
        spans = [match.span() for match in re.finditer(r"-+", lines[1])] if len(lines) > 1 else []
        names = [
            lines[0][start : spans[n + 1][0] if n + 1 < len(spans) else None].strip()
            for n, (start, _) in enumerate(spans)
        ]
        for number, line in enumerate(lines[2:], start=3):
            cells = [
                line[start : spans[n + 1][0] if n + 1 < len(spans) else None].strip()
                for n, (start, _) in enumerate(spans)
            ]
            if len(cells) < 2 or not cells[0] or not cells[1] or " " in cells[0]:
                problems.append(
                    f"row {number}: {line.strip()!r} is not a name and a version under the header"
                )
                continue
            name = normalise(cells[0])
            packages[name] = cells[1]
            for column, cell in zip(names[2:], cells[2:], strict=False):
                if cell:
                    columns.setdefault(column.lower().replace(" ", "_"), {})[name] = cell
        if not packages:
            problems.append("a pip list header but no distributions")
        return _evidence(self.name, path, packages, problems, **columns)


class PipFreezeParser:
    name = "pip-freeze"

    def detect(self, text: str) -> bool:
        lines = [line.strip() for line in text.splitlines() if line.strip() and not _noise(line.strip())]
        if not lines:
            return False
        matched = sum(1 for line in lines if _REQUIREMENT.match(line) or _EDITABLE.match(line))
        pinned = sum(1 for line in lines if "==" in line)
        return pinned >= 1 and matched >= max(1, int(0.9 * len(lines)))

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        packages: dict[str, str] = {}
        unversioned: dict[str, str] = {}
        editable: list[str] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or _noise(line):
                continue
            if match := _REQUIREMENT.match(line):
                name = normalise(match.group("name"))
                if match.group("version"):
                    packages[name] = match.group("version")
                else:
                    unversioned[name] = match.group("url")
            elif match := _EDITABLE.match(line):
                if match.group("name"):
                    unversioned[normalise(match.group("name"))] = line[3:].strip()
                else:  # a local editable install: pip names it only in a comment line above
                    editable.append(line[3:].strip())
            else:
                problems.append(f"not a requirement line: {line[:80]!r}")
        extra: dict[str, Any] = {"editable": editable} if editable else {}
        if unversioned:
            extra["unversioned"] = unversioned
            if "torch" in unversioned:
                problems.append(
                    "torch is installed from a file or URL (name @ URL): pip freeze gives no version"
                )
        return _evidence(self.name, path, packages, problems, **extra)


PIP_SHOW = PipShowParser()
PIP_LIST = PipListParser()
PIP_FREEZE = PipFreezeParser()
