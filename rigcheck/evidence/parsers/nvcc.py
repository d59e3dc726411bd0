"""``nvcc -V`` / ``nvcc --version``: the CUDA *toolkit* release.

Four lines, plus a fifth ``Build cuda_...`` line from CUDA 11.0 on; the version is read from
``release X.Y, VX.Y.Z`` so that the Build line does not matter. The toolkit can differ from the
driver's "CUDA Version" and from the CUDA that torch was built with.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence

_RELEASE = re.compile(r"release\s+(\d+\.\d+)\s*,\s*V(\d+\.\d+(?:\.\d+)?)")
_RELEASE_ONLY = re.compile(r"release\s+(\d+\.\d+)")


class NvccParser:
    name = "nvcc"

    def detect(self, text: str) -> bool:
        return "Cuda compilation tools" in text or "Cuda compiler driver" in text

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        extra: dict[str, Any] = {}
        toolkit = None
        if match := _RELEASE.search(text):
            toolkit = match.group(2)
            if not toolkit.startswith(match.group(1)):
                problems.append(f"release {match.group(1)} and V{toolkit} disagree")
        elif match := _RELEASE_ONLY.search(text):
            toolkit = match.group(1)
            problems.append(f"no 'VX.Y.Z' after 'release {toolkit}': only the major.minor is known")
        else:
            problems.append("no 'Cuda compilation tools, release X.Y, VX.Y.Z' line")
        if match := re.search(r"(?m)^Build\s+(\S+)", text):
            extra["build"] = match.group(1)
        if match := re.search(r"(?m)^Built on\s+(\S+)", text):
            extra["built_on"] = match.group(1)
        return Evidence(source=path, tool=self.name, toolkit_version=toolkit, problems=problems, extra=extra)


PARSER = NvccParser()
