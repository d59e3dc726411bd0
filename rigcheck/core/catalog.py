"""The hardware catalog: GPU facts with their sources, looked up by id, name or alias.

Entries live in ``specs/hardware/gpus.yaml`` (each with ``source`` and ``as_of``); plugins add or
override entries through the ``rigcheck_catalog`` hook. Lookup ignores case and punctuation, and
also tries the name without a brand prefix, so "RTX 3090", "NVIDIA GeForce RTX 3090" and
"rtx3090" find the same card. A name that matches nothing, or several cards, is an error that
lists the nearest names instead of a guess.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rigcheck.core import spec_codes
from rigcheck.core.errors import Problem, SpecError, clip

_BRANDS = ("nvidia", "geforce", "tesla", "quadro", "amd", "instinct", "intel", "apple")


def normalize_name(name: str) -> str:
    """``"NVIDIA GeForce RTX 3090"`` -> ``"nvidiageforcertx3090"``."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _without_brands(key: str) -> str:
    changed = True
    while changed:
        changed = False
        for brand in _BRANDS:
            if key.startswith(brand) and len(key) > len(brand):
                key = key[len(brand) :]
                changed = True
    return key


class NvLink(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generation: int | str | None = None
    total_bidirectional_gbps: float = Field(gt=0)
    topology: str | None = None
    links: int | None = None


class PcieLink(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gen: int = Field(ge=1, le=7)
    lanes: int = Field(16, ge=1, le=16)


class GpuSpec(BaseModel):
    """One GPU model's facts. Units as in the field names; TFLOPS are dense vendor peaks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    name: str
    aliases: tuple[str, ...] = ()
    vendor: Literal["nvidia", "amd", "intel", "apple"]
    software_stack: Literal["CUDA", "ROCm", "Metal", "oneAPI"] | None = None
    architecture: str
    compute_capability: str | None = Field(None, pattern=r"^\d+\.\d+$")
    gfx_target: str | None = None
    memory_gib: float = Field(gt=0)
    usable_gib_approx: float | None = Field(None, gt=0)
    memory_type: str | None = None
    memory_bandwidth_gbps: float | None = Field(None, gt=0)
    tdp_w: float | None = Field(None, gt=0)
    tdp_range_w: tuple[float, float] | None = None
    fp64_tflops: float | None = None
    fp64_tensor_tflops: float | None = None
    fp64_matrix_tflops: float | None = None
    fp32_tflops: float | None = None
    fp32_matrix_tflops: float | None = None
    tf32_dense_tflops: float | None = None
    bf16_dense_tflops: float | None = None
    fp16_tensor_dense_tflops: float | None = None
    fp16_fp16acc_dense_tflops: float | None = None
    fp8: bool | None = None
    fp8_dense_tflops: float | None = None
    fp4: bool | None = None
    fp4_dense_tflops: float | None = None
    int8_dense_tops: float | None = None
    ai_tops_fp4_sparse: float | None = None
    ecc: bool | Literal["optional"] | None = None
    nvlink: NvLink | Literal["none"] | None = None
    infinity_fabric: dict[str, Any] | None = None
    cpu_link: str | None = None
    pcie: PcieLink | None = None
    form_factor: Literal["PCIe", "SXM", "OAM", "laptop", "SoC", "Superchip"] | None = None
    cooler: Literal["open-air", "blower", "passive", "liquid"] | None = None
    length_mm: float | None = Field(None, gt=0)
    height_mm: float | None = Field(None, gt=0)
    slots: float | None = Field(None, gt=0)
    datacenter: bool | None = None
    segment: Literal["consumer", "workstation", "datacenter", "laptop"] | None = None
    recommended_psu_w: float | None = None
    power_connector: str | None = None
    power_connectors: tuple[str, ...] | None = None
    mig_max_instances: int | None = None
    min_cuda: str | None = None
    min_driver_linux: str | None = None
    min_driver_windows: str | None = None
    last_cuda: str | None = None
    last_driver_branch: str | None = None
    min_rocm: str | None = None
    p2p_stock_driver: bool | None = None
    notes: str | None = None
    source: str = Field(
        min_length=8, description="Where the facts come from: addresses or papers, ' ; '-separated."
    )
    as_of: str = Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$", description="When the facts were checked.")
    confidence: Literal["high", "medium", "low"] = "medium"

    @property
    def names(self) -> tuple[str, ...]:
        return (self.id, self.name, *self.aliases)

    @property
    def usable_memory_gib(self) -> float:
        """What the driver leaves usable: the measured figure where known, else 97% of capacity."""
        return self.usable_gib_approx if self.usable_gib_approx is not None else self.memory_gib * 0.97


#: Names longer than this get no suggestions (fuzzy matching a megabyte-long name takes seconds).
MAX_HINTED_NAME = 200


class CatalogLookupError(LookupError):
    """A GPU name that matches no entry, or several."""

    def __init__(self, name: str, message: str, candidates: tuple[str, ...]) -> None:
        super().__init__(message)
        self.name = name
        self.candidates = candidates


class Catalog:
    """GPU entries indexed by every normalised name. Build with :func:`load_catalog`."""

    def __init__(self) -> None:
        self._entries: dict[str, GpuSpec] = {}
        self._origin: dict[str, str] = {}
        self._exact: dict[str, set[str]] = {}
        self._derived: dict[str, set[str]] = {}

    # -- building -------------------------------------------------------------------------------

    def add(
        self, entry: GpuSpec | dict[str, Any], *, origin: str = "rigcheck", override: bool = False
    ) -> GpuSpec:
        """Add one entry. A second entry with the same id is an error unless ``override`` is set."""
        spec = entry if isinstance(entry, GpuSpec) else GpuSpec.model_validate(entry)
        if spec.id in self._entries:
            if not override:
                raise ValueError(
                    f"GPU id {spec.id!r} from {origin} is already defined by {self._origin[spec.id]}; "
                    f"register it with override=True to replace it"
                )
            self._forget(spec.id)
        self._entries[spec.id] = spec
        self._origin[spec.id] = origin
        for name in spec.names:
            key = normalize_name(name)
            self._exact.setdefault(key, set()).add(spec.id)
            self._derived.setdefault(_without_brands(key), set()).add(spec.id)
        return spec

    def _forget(self, gpu_id: str) -> None:
        for index in (self._exact, self._derived):
            for key in [key for key, ids in index.items() if gpu_id in ids]:
                index[key].discard(gpu_id)
                if not index[key]:
                    del index[key]
        del self._entries[gpu_id]
        del self._origin[gpu_id]

    # -- reading --------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[GpuSpec]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def origin(self, gpu_id: str) -> str:
        return self._origin[gpu_id]

    def get(self, gpu_id: str) -> GpuSpec:
        return self._entries[gpu_id]

    def lookup(self, name: str, *, hints: bool = True) -> GpuSpec:
        """The entry for ``name`` (id, name or alias; case and punctuation ignored). ``hints=False``
        (or a name too long to be one) skips the family search and the suggestions of a miss."""
        hints = hints and len(name) <= MAX_HINTED_NAME
        key = normalize_name(name)
        for index, probe in ((self._exact, key), (self._derived, _without_brands(key))):
            ids = index.get(probe)
            if ids:
                if len(ids) == 1:
                    return self._entries[next(iter(ids))]
                return self._ambiguous(name, ids)
        family = (
            {
                gpu_id
                for probe, ids in self._derived.items()
                if probe.startswith(_without_brands(key))
                for gpu_id in ids
            }
            if hints and len(key) >= 3
            else set()
        )
        if family:
            return self._ambiguous(name, family)
        suggestions = self.suggest(name) if hints else []
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        raise CatalogLookupError(
            name,
            f"unknown GPU {clip(repr(name), 120)}{hint} (rigcheck gpus lists the catalog; a plugin can add entries)",
            tuple(suggestions),
        )

    def _display_names(self) -> dict[str, str]:
        """Normalised alias -> display name, built once per catalog size (entries are only added)."""
        cached = self.__dict__.get("_display_cache")
        if cached is not None and cached[0] == len(self._entries):
            return cached[1]
        display: dict[str, str] = {}
        for spec in self._entries.values():
            for alias in spec.names:
                display.setdefault(
                    _without_brands(normalize_name(alias)), spec.aliases[-1] if spec.aliases else spec.name
                )
        self.__dict__["_display_cache"] = (len(self._entries), display)
        return display

    def _ambiguous(self, name: str, ids: Iterable[str]) -> GpuSpec:
        names = tuple(sorted(self._entries[gpu_id].name for gpu_id in ids))
        raise CatalogLookupError(
            name, f"GPU name {name!r} matches several cards: {'; '.join(names)}; write the full name", names
        )

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """The display names nearest to ``name``."""
        key = _without_brands(normalize_name(name))
        display = self._display_names()
        near = difflib.get_close_matches(key, list(display), n=limit * 3, cutoff=0.5)
        out: list[str] = []
        for match in near:
            if display[match] not in out:
                out.append(display[match])
        return out[:limit]


def load_catalog_file(path: str, catalog: Catalog, *, origin: str = "rigcheck") -> None:
    """Add the ``gpus:`` entries of a catalog YAML file; errors name the file and line."""
    from rigcheck.core.loader import load_yaml_file

    document = load_yaml_file(path)
    entries = document.data.get("gpus")
    if not isinstance(entries, list):
        raise SpecError(Problem(path, "a catalog file needs a 'gpus:' list", code=spec_codes.INVALID_VALUE))
    for index, entry in enumerate(entries):
        pointer = f"/gpus/{index}"
        try:
            catalog.add(entry, origin=origin)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = "/".join(str(step) for step in error["loc"])
            where = f"{pointer}/{field}" if field else pointer
            _, mark = document.source_map.locate(where)
            raise SpecError(
                Problem(path, f"catalog entry: {error['msg']}", mark.line, mark.column, where)
            ) from None
        except ValueError as exc:
            _, mark = document.source_map.locate(pointer)
            raise SpecError(Problem(path, str(exc), mark.line, mark.column, pointer)) from None
