"""ROCm compatibility, decided from ``specs/hardware/rocm.yaml`` (AMD's compatibility matrices and PyTorch's
ROCm build scripts, each row with its source).

Three things must line up for ROCm code to run on an AMD GPU: the ROCm release supports the GPU's gfx
target (its libraries carry kernels for it), the PyTorch ``+rocm`` wheel was compiled for that target
(else "HIP error: invalid device function"), and the amdgpu kernel driver is one AMD lists for the ROCm
user space in use (the runtime libraries a wheel bundles included).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from rigcheck.core.catalog.cuda_compat import Version, parse_version


def short(version: Version) -> str:
    """``(6, 2, 4)`` -> ``"6.2"``: the release line the tables are written by."""
    return ".".join(str(part) for part in version[:2])


def driver_listed(driver: str, listed: str) -> bool:
    """Whether the amdgpu release ``driver`` (``6.4.1``, ``30.10.1``) is the matrix entry ``listed``:
    ``6.4.x`` takes any 6.4 release, ``30.10`` only 30.10 itself (30.10.0), ``30.10.1`` only that one."""
    have = parse_version(driver)
    if have is None:
        return False
    if listed.endswith(".x"):
        line = parse_version(listed[:-2])
        return line is not None and have[: len(line)] == line
    want = parse_version(listed)
    if want is None:
        return False
    return _padded(have) == _padded(want)


def _padded(version: Version) -> Version:
    """30.10 is 30.10.0."""
    return version + (0,) * (3 - len(version))


@dataclass(frozen=True)
class RocmTables:
    """The three tables of ``rocm.yaml``: gfx support by ROCm release, PyTorch +rocm wheels' gfx targets,
    and the amdgpu driver releases each ROCm release is listed with."""

    data: Mapping[str, Any]

    @staticmethod
    def cite(row: Mapping[str, Any]) -> dict[str, str]:
        return {"source": str(row["source"]), "as_of": str(row["as_of"])}

    def releases(self) -> list[str]:
        """The ROCm release lines the gfx table covers, oldest first."""
        return [str(row["rocm"]) for row in self.data["gfx_support"]]

    def gfx_row(self, rocm: Version) -> Mapping[str, Any] | None:
        """The gfx-support row of the release line of ``rocm`` (6.2.4 -> 6.2), or None."""
        return _by_line(self.data["gfx_support"], rocm)

    def driver_row(self, rocm: Version) -> Mapping[str, Any] | None:
        return _by_line(self.data["drivers"], rocm)

    def wheel_row(self, torch: Version, rocm: str) -> Mapping[str, Any] | None:
        """The build of torch ``torch``'s release line with the wheel tag ``rocm`` (``5.4.2``; ``6.0`` also
        matches a row written ``6.0``), or None when the build lists do not have it."""
        tag = parse_version(rocm)
        if tag is None:
            return None
        for row in self.data["torch_wheels"]:
            if parse_version(str(row["torch"])) == torch[:2] and parse_version(str(row["rocm"])) == tag:
                return row
        return None

    def torch_lines(self) -> list[str]:
        return sorted({str(row["torch"]) for row in self.data["torch_wheels"]}, key=_key)

    def supporting(self, gfx: str) -> tuple[list[str], list[str]]:
        """The release lines that list ``gfx`` as supported, and those that list it as deprecated."""
        rows = self.data["gfx_support"]
        return (
            [str(row["rocm"]) for row in rows if gfx in row["gfx"]],
            [str(row["rocm"]) for row in rows if gfx in row.get("deprecated", ())],
        )

    def wheels_for(self, gfx: str) -> list[str]:
        """``torch 2.3+rocm6.0``-style names of the listed wheels compiled for ``gfx``, oldest first."""
        rows = sorted(
            (row for row in self.data["torch_wheels"] if gfx in row["gfx"]),
            key=lambda row: (_key(str(row["torch"])), _key(str(row["rocm"]))),
        )
        return [f"torch {row['torch']}+rocm{row['rocm']}" for row in rows]

    def driver_lines(self) -> list[str]:
        """The driver release lines the matrix names (``6.4``, ``30.10``), oldest first."""
        lines = {
            short(version)
            for row in self.data["drivers"]
            for entry in row["drivers"]
            if (version := parse_version(str(entry).removesuffix(".x"))) is not None
        }
        return sorted(lines, key=_key)

    def names_driver_line(self, driver: str) -> bool:
        """Whether ``driver`` is a driver release: of a line the matrix names, or older than its oldest
        (AMD's table starts at 5.3.x; 5.2.3 is a release it does not list). ``6.12.12``, a DKMS module
        version between the lines, is not."""
        version = parse_version(driver)
        if version is None:
            return False
        lines = self.driver_lines()
        return short(version) in lines or version[:2] < (parse_version(lines[0]) or (0,))[:2]

    def releases_with_driver(self, driver: str) -> list[str]:
        """The ROCm release lines whose driver list includes the amdgpu release ``driver``."""
        return [
            str(row["rocm"])
            for row in self.data["drivers"]
            if any(driver_listed(driver, str(listed)) for listed in row["drivers"])
        ]


def span(lines: Sequence[str]) -> str:
    """``["6.0", "6.1", "6.2"]`` -> ``"6.0-6.2"``; one line as itself; none as ``"none"``."""
    if not lines:
        return "none"
    return lines[0] if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"


def runs(lines: Sequence[str]) -> str:
    """Release lines as runs of consecutive minors: ``["2.8", "2.9", "2.11", "2.12"]`` -> ``"2.8-2.9,
    2.11-2.12"`` (a gap is a line the tables do not have)."""
    groups: list[list[str]] = []
    for line in lines:
        version, last = _key(line), _key(groups[-1][-1]) if groups else None
        if last is not None and version[:1] == last[:1] and version[1:2] == (last[1] + 1,):
            groups[-1].append(line)
        else:
            groups.append([line])
    return ", ".join(span(group) for group in groups) or "none"


def rocm_tag(local: str | None) -> str | None:
    """``rocm6.2`` -> ``6.2``, the ROCm a ``+rocm`` wheel was built with; None for other builds."""
    match = re.fullmatch(r"rocm(\d+(?:\.\d+){0,2})", local or "")
    return match.group(1) if match else None


def _key(text: str) -> Version:
    return parse_version(text) or (0,)


def _by_line(rows: Sequence[Mapping[str, Any]], version: Version) -> Mapping[str, Any] | None:
    for row in rows:
        if parse_version(str(row["rocm"])) == version[:2]:
            return row
    return None


@cache
def rocm_tables() -> RocmTables:
    from rigcheck.core.spec.frozen import freeze
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.resources import hardware_file

    return RocmTables(freeze(load_yaml_file(str(hardware_file("rocm.yaml"))).data))
