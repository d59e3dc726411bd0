"""PyTorch: ``python -m torch.utils.collect_env`` and a three-line version check.

collect_env prints ``Key: value`` lines: ``PyTorch version``, ``CUDA used to build PyTorch``
(torch.version.cuda), ``Is CUDA available``, ``CUDA runtime version`` (the system's nvcc, not
torch's), ``GPU models and configuration`` (on the same line for one GPU, on the following lines
for several), ``Nvidia driver version``... A paste is often cut short; what is missing is listed.

The short forms are the outputs of ``python -c "import torch; print(...)"`` one-liners, e.g.
``print(torch.__version__); print(torch.cuda.is_available()); print(torch.cuda.get_device_capability())``:
``2.9.0+cu128`` / ``True`` / ``(12, 0)`` (:class:`TorchVersionParser`). The ``+cuXYZ`` tag gives the CUDA
build: cu121 -> 12.1.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.evidence.model import Evidence, GpuEvidence, TorchEvidence

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


_PROPERTIES = re.compile(r"_CudaDeviceProperties\((?P<body>.*)\)")
_PROPERTY = re.compile(r"(?<!\w)(\w+)=('(?:[^'\\]|\\.)*'|[^,]*)")  # tried once per word: linear
_COUNTED = re.compile(r"^(\d+)\s+(?:devices?|GPUs?)$", re.IGNORECASE)
_LABEL = re.compile(r"^(?P<key>[A-Za-z][\w .()/_-]*?)\s*[:=]\s*(?P<value>.+)$")
_AMOUNT = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB|TB|TiB)?$", re.IGNORECASE)
_GPU_WORDS = re.compile(
    r"NVIDIA|GeForce|Tesla|Quadro|RTX|TITAN|A100|H100|H200|B200|L40|L4\b|A10|T4\b|V100|AMD|Radeon|MI\d", re.I
)
_MIB = {
    "b": 1 / 2**20,
    "kb": 1 / 1024,
    "kib": 1 / 1024,
    "mb": 1,
    "mib": 1,
    "gb": 1024,
    "gib": 1024,
    "tb": 2**20,
    "tib": 2**20,
}


class _OneLiner:
    """What the lines of a torch one-liner said, as they are read."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.available: bool | None = None
        self.cuda: str | None = None
        self.count: int | None = None
        self.capabilities: list[str] = []
        self.names: list[str] = []
        self.memory_mib: list[float] = []
        self.unknown: list[str] = []
        self.tensors: list[str] = []
        self.uuids: list[str | None] = []
        self.properties = 0

    def line(self, line: str) -> None:
        if match := _PROPERTIES.search(line):
            self._properties(match.group("body"))
        elif match := _COUNTED.match(line):
            self.count = int(match.group(1))
        elif line.startswith("tensor("):  # a smoke test: print(torch.randn(1, device="cuda"))
            self.tensors.append(line)
        elif match := _LABEL.match(line):
            self._labelled(match.group("key").strip().lower(), match.group("value").strip(), line)
        else:
            self._tokens(line)

    def _properties(self, body: str) -> None:
        values = {key: value.strip().strip("'") for key, value in _PROPERTY.findall(body)}
        self.properties += 1
        if values.get("name"):
            self.names.append(values["name"])
        if values.get("major", "").isdigit() and values.get("minor", "").isdigit():
            self.capabilities.append(f"{values['major']}.{values['minor']}")
        if memory := _mib(values.get("total_memory", "")):
            self.memory_mib.append(memory)
        self.uuids.append(values.get("uuid"))

    def _labelled(self, key: str, value: str, line: str) -> None:
        if ("version" in key and "cuda" in key) or key in ("cuda", "torch.version.cuda", "cuda build"):
            self.cuda = value if re.fullmatch(r"\d+\.\d+", value) else self.cuda
        elif "version" in key or key in ("torch", "pytorch", "torch.__version__"):
            if _VERSION.match(value):
                self.version = value
        elif "available" in key:
            self.available = {"true": True, "false": False}.get(value.lower(), self.available)
        elif "count" in key or key in ("gpus", "devices", "number of gpus"):
            self.count = int(value) if value.isdigit() else self.count
        elif "capabilit" in key and (match := _CAPABILITY.match(value)):
            self.capabilities.append(f"{match.group(1)}.{match.group(2)}")
        elif "memory" in key or "vram" in key:
            if memory := _mib(value):
                self.memory_mib.append(memory)
        elif "name" in key or "device" in key or key.startswith("gpu"):
            self.names.append(value)
        else:
            self.unknown.append(line)

    def _tokens(self, line: str) -> None:
        if match := _CAPABILITY.match(line):
            self.capabilities.append(f"{match.group(1)}.{match.group(2)}")
            return
        words = line.split()
        while words:
            word = words[0]
            if self.version is None and _VERSION.match(word) and ("+" in word or word.count(".") >= 2):
                self.version = (
                    word  # torch's are X.Y.Z (2.4.1, 2.1.0.dev20230810+cu118): X.Y is torch.version.cuda
                )
            elif word in ("True", "False"):
                self.available = word == "True"
            elif re.fullmatch(r"\d+\.\d+", word) and self.cuda is None:
                self.cuda = word
            elif word == "None" and self.cuda is None:
                pass  # torch.version.cuda of a CPU build
            elif word.isdigit() and int(word) <= 1024 and self.count is None:
                self.count = int(word)
            elif word.isdigit() and int(word) > 2**20:
                self.memory_mib.append(int(word) / 2**20)  # get_device_properties(0).total_memory, bytes
            else:
                rest = " ".join(words)
                if _GPU_WORDS.search(rest):
                    self.names.append(rest)
                else:
                    self.unknown.append(line)
                return
            words.pop(0)

    def recognised(self) -> bool:
        told = [self.available is not None, bool(self.names), bool(self.capabilities), self.properties > 0]
        anchored = (
            self.version is not None
            or self.properties > 0
            or (self.available is not None and bool(self.names or self.capabilities or self.cuda))
        )
        return anchored and any(told) and len(self.unknown) <= 2


def _mib(value: str) -> float | None:
    """``81050MB`` (torch prints MiB as MB), ``79.19 GiB``, ``85083553792`` (bytes) -> MiB."""
    match = _AMOUNT.match(value.strip())
    if not match:
        return None
    number, unit = float(match.group(1)), (match.group(2) or "").lower()
    if not unit:
        return number / 2**20 if number > 2**20 else None
    return number * _MIB[unit]


def _one_liner(text: str) -> _OneLiner | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not 1 <= len(lines) <= 40:
        return None
    read = _OneLiner()
    for line in lines:
        if "Warning" in line or line.startswith(("warnings.warn", "/")):
            continue  # a UserWarning printed by torch on import
        read.line(line)
    return read if read.recognised() else None


class TorchVersionParser:
    """The output of ``python -c "import torch; print(...)"`` one-liners: ``torch.__version__``,
    ``torch.cuda.is_available()``, ``torch.version.cuda``, ``torch.cuda.device_count()``,
    ``torch.cuda.get_device_name(0)``, ``torch.cuda.get_device_capability()`` (``(8, 0)``),
    ``torch.cuda.get_device_properties(0)`` (``_CudaDeviceProperties(name='...', major=8, minor=0,
    total_memory=81050MB, ...)``: torch prints the memory in MiB, ``totalGlobalMem / 2**20``, named MB) or
    its ``.total_memory`` in bytes, one value per line or several on one line, bare or labelled
    (``CUDA available: True``); ``N devices`` lines and the ``tensor(..., device='cuda:0')`` of a smoke test
    are read too."""

    name = "torch-version"

    def detect(self, text: str) -> bool:
        return _one_liner(text) is not None

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        read = _one_liner(text) or _OneLiner()
        if read.version is None:
            problems.append("no torch version line (print(torch.__version__))")
        if read.available is None and not read.properties:
            problems.append("no True/False line for torch.cuda.is_available()")
        for line in read.unknown:
            problems.append(f"not read: {line[:80]!r}")
        cuda = read.cuda or cuda_from_tag(read.version)
        if read.available and not (read.capabilities or read.names):
            problems.append("CUDA is available but no device line (get_device_name or get_device_capability)")
        gpus = [
            GpuEvidence(
                index=index,
                name=name,
                memory_total_mib=read.memory_mib[index] if index < len(read.memory_mib) else None,
                compute_capability=read.capabilities[index] if index < len(read.capabilities) else None,
                uuid=read.uuids[index] if index < len(read.uuids) else None,
            )
            for index, name in enumerate(read.names)
        ]
        on_cuda = bool(read.tensors) and all("device='cuda" in line for line in read.tensors)
        available = read.available
        if available is None and (read.properties or on_cuda):
            available = True  # get_device_properties and a tensor on cuda:0 need a working CUDA device
        torch = TorchEvidence(
            version=read.version,
            cuda=cuda,
            cuda_available=available,
            device_capabilities=read.capabilities or None,
            gpus=read.names or None,
            device_count=read.count,
        )
        extra: dict[str, Any] = {}
        if read.tensors:
            extra["tensor_on_cuda"] = on_cuda
        return Evidence(
            source=path,
            tool=self.name,
            torch=torch,
            gpus=gpus,
            gpu_count=read.count if read.count is not None else (len(gpus) or None),
            problems=problems,
            extra=extra,
        )


COLLECT_ENV = TorchCollectEnvParser()
VERSION = TorchVersionParser()
