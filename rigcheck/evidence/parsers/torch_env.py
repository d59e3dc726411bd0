"""PyTorch: ``python -m torch.utils.collect_env`` and a three-line version check.

collect_env prints ``Key: value`` lines: ``PyTorch version``, ``CUDA used to build PyTorch``
(torch.version.cuda), ``Is CUDA available``, ``CUDA runtime version`` (the system's nvcc, not
torch's), ``GPU models and configuration`` (on the same line for one GPU, on the following lines
for several), ``Nvidia driver version``... A paste is often cut short; what is missing is listed.

The short form is the output of
``print(torch.__version__); print(torch.cuda.is_available()); print(torch.cuda.get_device_capability())``:
``2.9.0+cu128`` / ``True`` / ``(12, 0)``. The ``+cuXYZ`` tag gives the CUDA build: cu121 -> 12.1.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence, TorchEvidence

_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?(?:\.\w+)*(?:\+[\w.]+)?$")
_CAPABILITY = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_NOT_COLLECTED = {"", "could not collect", "n/a", "none"}
_EXPECTED = (
    "PyTorch version",
    "CUDA used to build PyTorch",
    "Is CUDA available",
    "CUDA runtime version",
    "GPU models and configuration",
    "Nvidia driver version",
)


def cuda_from_tag(version: str | None) -> str | None:
    """``2.4.1+cu121`` -> ``12.1``; ``+cu92`` -> ``9.2``; None for ``+cpu``, ``+rocm``, no tag."""
    match = re.search(r"\+cu(\d+)", version or "")
    if not match:
        return None
    digits = match.group(1)
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else None


def _value(value: str | None) -> str | None:
    if value is None or value.strip().lower() in _NOT_COLLECTED:
        return None
    return value.strip()


class TorchCollectEnvParser:
    name = "torch-collect-env"

    def detect(self, text: str) -> bool:
        return "PyTorch version:" in text and (
            "Collecting environment information" in text or "CUDA used to build PyTorch" in text
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        fields: dict[str, str] = {}
        gpus: list[str] = []
        in_gpus = False
        for raw in text.splitlines():
            line = raw.rstrip()
            if in_gpus:
                if match := re.match(r"^\s*GPU\s+\d+:\s*(.+)$", line):
                    gpus.append(match.group(1).strip())
                    continue
                in_gpus = False
            if match := re.match(r"^([A-Za-z][\w ./()-]*?):\s?(.*)$", line):
                key, value = match.group(1).strip(), match.group(2).strip()
                if key in fields:
                    continue
                fields[key] = value
                if key == "GPU models and configuration":
                    in_gpus = True
                    if inline := re.match(r"^GPU\s+\d+:\s*(.+)$", value):
                        gpus.append(inline.group(1).strip())
                    elif value and value.lower() not in _NOT_COLLECTED:
                        gpus.append(value)
        for key in _EXPECTED:
            if key not in fields:
                problems.append(f"no '{key}' line (cut off?)")
            elif key == "CUDA runtime version" and fields[key].lower() == "could not collect":
                problems.append("'CUDA runtime version: Could not collect' (no nvcc on the PATH)")
        if (
            "GPU models and configuration" in fields
            and not gpus
            and fields.get("Is CUDA available") == "True"
        ):
            problems.append("'GPU models and configuration' lists no GPU")
        if "Versions of relevant libraries" not in fields:
            problems.append("the file ends before the 'Versions of relevant libraries' section (cut off?)")
        version = _value(fields.get("PyTorch version"))
        cuda = _value(fields.get("CUDA used to build PyTorch")) or cuda_from_tag(version)
        available = {"True": True, "False": False}.get(fields.get("Is CUDA available", ""))
        driver = _value(fields.get("Nvidia driver version"))
        torch = TorchEvidence(
            version=version,
            cuda=cuda,
            cuda_available=available,
            gpus=gpus or None,
            driver_version=driver,
            cuda_runtime=_value(fields.get("CUDA runtime version")),
        )
        extra: dict[str, Any] = {}
        for key, name in (
            ("cuDNN version", "cudnn"),
            ("Python version", "python"),
            ("Is debug build", "debug"),
        ):
            if _value(fields.get(key)):
                extra[name] = fields[key]
        return Evidence(
            source=path,
            tool=self.name,
            os=_value(fields.get("OS")),
            driver_version=driver,
            gpu_count=len(gpus) or None,
            torch=torch,
            problems=problems,
            extra=extra,
        )


class TorchVersionParser:
    name = "torch-version"

    def detect(self, text: str) -> bool:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return (
            2 <= len(lines) <= 12
            and bool(_VERSION.match(lines[0]))
            and lines[1] in ("True", "False")
            and all(_CAPABILITY.match(line) or re.fullmatch(r"\d+\.\d+|None", line) for line in lines[2:])
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        version = lines[0] if lines and _VERSION.match(lines[0]) else None
        if version is None:
            problems.append("the first line is not a torch version such as 2.4.1+cu121")
        available = {"True": True, "False": False}.get(lines[1]) if len(lines) > 1 else None
        if available is None:
            problems.append("no True/False line for torch.cuda.is_available()")
        capabilities = []
        cuda = cuda_from_tag(version)
        for line in lines[2:]:
            if match := _CAPABILITY.match(line):
                capabilities.append(f"{match.group(1)}.{match.group(2)}")
            elif re.fullmatch(r"\d+\.\d+", line):
                cuda = line  # print(torch.version.cuda)
        if available and not capabilities:
            problems.append("no '(major, minor)' line for torch.cuda.get_device_capability()")
        torch = TorchEvidence(
            version=version, cuda=cuda, cuda_available=available, device_capabilities=capabilities or None
        )
        return Evidence(source=path, tool=self.name, torch=torch, problems=problems)


COLLECT_ENV = TorchCollectEnvParser()
VERSION = TorchVersionParser()
