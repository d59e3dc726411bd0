"""CUDA driver / runtime / GPU / PyTorch-wheel compatibility, decided from ``specs/hardware/cuda.yaml``.

The tables are NVIDIA's "CUDA Toolkit and Corresponding Driver Versions", the minor-version and
forward compatibility rules, the architecture matrix, nvcc's targets and PyTorch's wheel build lists
(each with its source in the data file). Three things must line up for CUDA code to run
(docs/research/cuda_compat.md section 1): the driver supports the GPU, the driver supports the runtime the
application was built with, and the application carries machine code (SASS) or PTX for the GPU.

Version strings compare as dotted integers ("535.104.05" > "535.54.03"). A driver belongs to the
nearest listed branch at or below its first number (Windows 551.61 is R550).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

Version = tuple[int, ...]


@cache
def parse_version(text: str | None) -> Version | None:
    """``"535.104.05"`` -> ``(535, 104, 5)``; None for anything that is not dotted integers."""
    if text is None:
        return None
    parts = str(text).strip().split(".")
    try:
        return tuple(int(part) for part in parts)
    except ValueError:
        return None


def release_version(text: str | None) -> Version | None:
    """A release as dotted integers, without its pre-release, post-release or local part: ``2.7.0.dev2025``,
    ``0.5.3.post1`` and ``0.6.4+cu121`` are 2.7.0, 0.5.3 and 0.6.4; None for what is not a version."""
    if text is None:
        return None
    return parse_version(re.sub(r"(a|b|rc|\.dev|\.post|\+).*$", "", str(text).strip()))


def cuda_text(version: Version) -> str:
    return ".".join(str(part) for part in version)


class CudaVersion(NamedTuple):
    """A CUDA release as specs write it: "12.4" (any 12.4; its GA row), "12.2.2" (12.2 Update 2)."""

    major: int
    minor: int
    update: int | None
    text: str

    @classmethod
    def parse(cls, text: str) -> CudaVersion | None:
        version = parse_version(text)
        if version is None or len(version) < 2:
            return None
        return cls(version[0], version[1], version[2] if len(version) > 2 else None, str(text))

    @property
    def short(self) -> tuple[int, int]:
        return (self.major, self.minor)


class TorchBuild(NamedTuple):
    """``"2.7.0+cu128"``: torch 2.7 with the CUDA 12.8 wheel. ``local`` is the part after ``+``."""

    version: Version
    local: str | None
    text: str

    @classmethod
    def parse(cls, text: str) -> TorchBuild | None:
        base, _, local = str(text).strip().partition("+")
        version = release_version(base)
        if version is None:
            return None
        return cls(version, local or None, str(text))

    @property
    def prerelease(self) -> bool:
        """A nightly, release candidate or source build (``2.7.0.dev20250310``, ``2.3.0a0+git``)."""
        base = self.text.partition("+")[0]
        return bool(re.search(r"(a|b|rc|\.dev)\d*", base))

    @property
    def cuda_tag(self) -> str | None:
        """``cu128`` for a CUDA build, None for ``+cpu``, ``+rocm6.0`` or a plain PyPI version."""
        if self.local and re.fullmatch(r"cu\d{3,4}", self.local):
            return self.local
        return None

    @property
    def cuda(self) -> CudaVersion | None:
        """The CUDA runtime the wheel bundles: ``cu121`` -> 12.1, ``cu130`` -> 13.0."""
        tag = self.cuda_tag
        if tag is None:
            return None
        digits = tag[2:]
        return CudaVersion(int(digits[:-1]), int(digits[-1]), None, f"{digits[:-1]}.{digits[-1]}")


@cache
def capability(text: str) -> Version:
    """``"8.6"`` -> ``(8, 6)``; also accepts ``86`` as nvcc writes it."""
    if isinstance(text, int) or (isinstance(text, str) and text.isdigit()):
        value = int(text)
        return (value // 10, value % 10)
    return tuple(int(part) for part in str(text).split("."))  # type: ignore[return-value]


def sass_runs_on(sass: Version, gpu: Version) -> bool:
    """A cubin for M.k runs on a GPU of the same major M and minor >= k (Blackwell compatibility guide)."""
    return sass[0] == gpu[0] and sass[1] <= gpu[1]


def ptx_runs_on(ptx: Version, gpu: Version) -> bool:
    """PTX for X.Y is JIT-compiled for any GPU of capability >= X.Y."""
    return ptx <= gpu


class CudaTables:
    """Lookups over ``specs/hardware/cuda.yaml``."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        rows = data["branch_max_cuda"]["rows"]
        self._branches = sorted((int(row["branch"]), parse_version(row["max_cuda"])) for row in rows)
        self._toolkit = [(parse_version(row["cuda"]), row) for row in data["toolkit_drivers"]["rows"]]

    def cite(self, section: str) -> dict[str, str]:
        table = self.data[section]
        return {"source": table["source"], "as_of": str(table["as_of"])}

    # -- drivers -----------------------------------------------------------------------------------

    def branch(self, driver: Version) -> int | None:
        """The nearest listed branch at or below the driver's first number."""
        below = [branch for branch, _ in self._branches if branch <= driver[0]]
        return below[-1] if below else None

    def branch_max_cuda(self, driver: Version) -> Version | None:
        """What nvidia-smi shows as "CUDA Version": the newest runtime the driver runs natively."""
        below = [maximum for branch, maximum in self._branches if branch <= driver[0]]
        return below[-1] if below else None

    def toolkit_row(self, cuda: CudaVersion) -> Mapping[str, Any] | None:
        """The table row for a release: its own update, or the GA row for "major.minor"."""
        rows = [row for version, row in self._toolkit if version == cuda.short]
        if not rows:
            return None
        if cuda.update is not None:
            exact = [row for row in rows if int(row["update"]) == cuda.update]
            if exact:
                return exact[0]
        ga = [row for row in rows if row.get("ga")] or [row for row in rows if int(row["update"]) == 0]
        return ga[0] if ga else rows[-1]

    def mvc_floor(self, major: int, windows: bool) -> str | None:
        """The minor-version-compatibility floor of a CUDA major, as written (11.x: "450.80.02" on Linux)."""
        for family in self.data["minor_version_compatibility"]["families"]:
            if int(family["major"]) == major:
                return family["windows" if windows else "linux"]
        return None

    def forward_package(self, name: str) -> Mapping[str, Any] | None:
        for row in self.data["forward_compatibility"]["packages"]:
            if row["package"] == name.strip():
                return row
        return None

    # -- architectures -----------------------------------------------------------------------------

    def architecture(self, cc: Version) -> Mapping[str, Any] | None:
        for row in self.data["architectures"]["rows"]:
            if any(capability(value) == cc for value in row["compute_capabilities"]):
                return row
        return None

    def nvcc_targets(self, cuda: CudaVersion) -> list[Version] | None:
        for row in self.data["nvcc_targets"]["rows"]:
            low, high = parse_version(row["cuda_from"]), parse_version(row["cuda_to"])
            if low is not None and high is not None and low <= cuda.short <= high:
                return [capability(value) for value in row["sm"]]
        return None

    # -- PyTorch wheels ----------------------------------------------------------------------------

    def torch_wheel(self, build: TorchBuild) -> Mapping[str, Any] | None:
        cache = self.__dict__.setdefault("_wheels", {})
        if build not in cache:
            cache[build] = self._torch_wheel(build)
        return cache[build]

    def _torch_wheel(self, build: TorchBuild) -> Mapping[str, Any] | None:
        short = build.version[:2]
        for row in self.data["torch_wheels"]["rows"]:
            low, high = parse_version(row["torch_from"]), parse_version(row["torch_to"])
            if (
                row["wheel"] == build.cuda_tag
                and low is not None
                and high is not None
                and low <= short <= high
            ):
                return row
        return None

    def nearest_wheel(self, build: TorchBuild) -> Mapping[str, Any] | None:
        """For a nightly or pre-release build no table row covers: the listed build of the same CUDA tag
        nearest in version (nightlies carry their CUDA line's architecture list)."""
        short = build.version[:2]
        best: tuple[tuple[int, ...], Mapping[str, Any]] | None = None
        for row in self.data["torch_wheels"]["rows"]:
            low, high = parse_version(row["torch_from"]), parse_version(row["torch_to"])
            if row["wheel"] != build.cuda_tag or low is None or high is None:
                continue
            gap = (
                (0,)
                if low <= short <= high
                else (abs(_minor_index(short) - _minor_index(high if short > high else low)),)
            )
            if best is None or gap < best[0]:
                best = (gap, row)
        return best[1] if best else None

    def wheels_of_release(self, build: TorchBuild) -> list[str] | None:
        for row in self.data["torch_releases"]["rows"]:
            if parse_version(row["torch"]) == build.version[:2]:
                return list(row["wheels"])
        return None


def _minor_index(version: Version) -> int:
    """torch 1.13 -> 113, 2.0 -> 200: a distance between releases."""
    return version[0] * 100 + (version[1] if len(version) > 1 else 0)


@cache
def cuda_tables() -> CudaTables:
    from rigcheck.core.spec.frozen import freeze
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.resources import hardware_file

    return CudaTables(freeze(load_yaml_file(str(hardware_file("cuda.yaml"))).data))
