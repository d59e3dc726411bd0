"""The hardware catalog: GPU facts with their sources, looked up by id, name or alias.

Entries live in ``specs/hardware/gpus.yaml`` (each with ``source`` and ``as_of``); plugins add or
override entries through the ``rigcheck_catalog`` hook. Lookup ignores case and punctuation, and
also tries the name without a brand prefix, so "RTX 3090", "NVIDIA GeForce RTX 3090" and
"rtx3090" find the same card. A name that matches nothing, or several cards, is an error that
lists the nearest names instead of a guess.
"""

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rigcheck.core.engine.errors import Problem, SpecError, clip
from rigcheck.core.spec import spec_codes

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
    #: Whether ``usable_gib_approx`` is what nvidia-smi reports with ECC on (a GDDR card with optional
    #: ECC gives 1/16 of its memory to check bits when it is on): None where not known or not optional.
    usable_with_ecc_on: bool | None = None
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
        """Add one entry. A second entry with the same id is an error unless ``override`` is set; so is a
        name or alias that is already a name of an entry from another origin (a plugin's ``"RTX 4090"``
        would make every spec naming that card ambiguous)."""
        spec = entry if isinstance(entry, GpuSpec) else GpuSpec.model_validate(entry)
        if spec.id in self._entries and not override:
            raise ValueError(
                f"GPU id {spec.id!r} from {origin} is already defined by {self._origin[spec.id]}; "
                f"register it with override=True to replace it"
            )
        self._refuse_taken_names(spec, origin)
        if spec.id in self._entries:
            self._forget(spec.id)
        self._entries[spec.id] = spec
        self._origin[spec.id] = origin
        for name in spec.names:
            key = normalize_name(name)
            self._exact.setdefault(key, set()).add(spec.id)
            self._derived.setdefault(_without_brands(key), set()).add(spec.id)
        return spec

    def _refuse_taken_names(self, spec: GpuSpec, origin: str) -> None:
        """A name of ``spec`` (after case, punctuation and brand prefixes) that names an entry of another
        origin is refused, before anything is indexed."""
        for name in spec.names:
            taken = self._derived.get(_without_brands(normalize_name(name)), set()) - {spec.id}
            other = next((gpu_id for gpu_id in sorted(taken) if self._origin[gpu_id] != origin), None)
            if other is not None:
                raise ValueError(
                    f"GPU {spec.id!r} from {origin}: its name {name!r} already names {other!r} "
                    f"({self._entries[other].name}, from {self._origin[other]}), so specs naming it would become "
                    f"ambiguous: the entry is refused (drop that alias, or replace {other!r} by registering "
                    f"id {other!r} with override=True)"
                )

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
        """The entry for ``name`` (id, name or alias; case and punctuation ignored; a memory size that the
        card has may be added: ``H100 SXM 80GB``). ``hints=False`` (or a name too long to be one) skips the
        family search and the suggestions of a miss."""
        short = len(name) <= MAX_HINTED_NAME
        hints = hints and short
        key = normalize_name(name)
        ids = self._named(key)
        if ids:
            return self._one(name, ids)
        sized = _memory_in(name) if short else None
        if sized is not None:
            spec = self._by_memory(name, *sized)
            if spec is not None:
                return spec
        family = self._family(key) if hints else set()
        if family:
            return self._one(name, family)
        suggestions = self.suggest(name) if hints else []
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        raise CatalogLookupError(
            name,
            f"unknown GPU {clip(repr(name), 120)}{hint} (rigcheck gpus lists the catalog; a plugin can add entries)",
            tuple(suggestions),
        )

    def _named(self, key: str) -> set[str]:
        """The ids of the cards named exactly ``key`` (normalised), with or without brand words."""
        return self._exact.get(key) or self._derived.get(_without_brands(key)) or set()

    def _family(self, key: str) -> set[str]:
        """The ids of the cards whose names start with ``key`` (``a100``: all four A100s)."""
        stem = _without_brands(key)
        if len(key) < 3 or not stem:
            return set()
        return {gpu_id for probe, ids in self._derived.items() if probe.startswith(stem) for gpu_id in ids}

    def _one(self, name: str, ids: set[str]) -> GpuSpec:
        if len(ids) == 1:
            return self._entries[next(iter(ids))]
        return self._ambiguous(name, ids)

    def _by_memory(self, name: str, size: float, rest: str) -> GpuSpec | None:
        """The card named ``rest`` that has ``size`` GB (``RTX 4090 24GB``); an error when the cards of that
        name have another size (``RTX 4090 48GB``); ``None`` when ``rest`` names no card."""
        key = normalize_name(rest)
        ids = self._named(key) or self._family(key)
        if not ids:
            return None
        fits = {gpu_id for gpu_id in ids if _same_memory(size, self._entries[gpu_id].memory_gib)}
        if fits:
            return self._one(name, fits)
        named = min((self._entries[gpu_id] for gpu_id in ids), key=_by_name)
        cards = sorted((self._entries[gpu_id] for gpu_id in ids | self._family(key)), key=_by_name)
        listed = "; ".join(f"{short_name(card)} ({card.memory_gib:g} GiB)" for card in cards)
        raise CatalogLookupError(
            name,
            f"GPU name {clip(repr(name), 120)} says {size:g} GB, which no card of that name has: {listed}; "
            f"write one of those names (a card modified to {size:g} GB: model: {short_name(named)!r} with "
            f"memory_gib: {size:g})",
            tuple(card.name for card in cards),
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
        """Refuse a name several cards share, listing every one of them."""
        cards = sorted((self._entries[gpu_id] for gpu_id in ids), key=_by_name)
        raise CatalogLookupError(
            name,
            f"GPU name {clip(repr(name), 120)} matches several cards: "
            f"{'; '.join(short_name(card) for card in cards)}; write the full name",
            tuple(card.name for card in cards),
        )

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """The display names nearest to ``name``: every card whose name holds it (``3090``: RTX 3090,
        RTX 3090 Ti; at most :data:`MAX_CONTAINING`), else the closest spellings."""
        key = _without_brands(normalize_name(name))
        display = self._display_names()
        containing = sorted((probe for probe in display if len(key) >= 3 and key in probe), key=_shortest)
        if containing:
            return list(dict.fromkeys(display[probe] for probe in containing))[:MAX_CONTAINING]
        import difflib  # only for a name the catalog does not know

        near = difflib.get_close_matches(key, list(display), n=limit * 3, cutoff=0.5)
        return list(dict.fromkeys(display[match] for match in near))[:limit]


#: Cards a suggestion lists when the name written is part of their names.
MAX_CONTAINING = 8

#: A memory size written in a GPU name: ``80GB``, ``24 GB``, ``141GiB``.
_MEMORY_IN_NAME = re.compile(r"(?<![\w.])(\d{1,4}(?:\.\d{1,2})?)\s*(?:gib|gb)(?![a-z0-9])", re.IGNORECASE)


def _memory_in(name: str) -> tuple[float, str] | None:
    """``"H100 SXM 80GB"`` -> ``(80.0, "H100 SXM ")``: the memory size a name gives, and the rest of it."""
    match = _MEMORY_IN_NAME.search(name)
    if match is None:
        return None
    return float(match.group(1)), name[: match.start()] + " " + name[match.end() :]


def _same_memory(written: float, memory_gib: float) -> bool:
    """Whether a size in a name is the card's, 8% apart at most (a B200 is announced with 192 GB, the catalog
    has the 180 GB an HGX B200 exposes)."""
    return abs(written - memory_gib) <= 0.08 * memory_gib


def short_name(card: GpuSpec) -> str:
    """The card's name without brand words: ``NVIDIA GeForce RTX 3090`` -> ``RTX 3090``."""
    words = card.name.split()
    while len(words) > 1 and normalize_name(words[0]) in _BRANDS:
        words.pop(0)
    return " ".join(words)


def _by_name(card: GpuSpec) -> tuple[str, str]:
    return short_name(card), card.name


def _shortest(probe: str) -> tuple[int, str]:
    return len(probe), probe


@functools.cache
def builtin_catalog() -> Catalog:
    """The shipped catalog (``specs/hardware/gpus.yaml``) without plugin entries, read once."""
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    return catalog


def number_as_gpu_name(number: float) -> str:
    """What to say of ``model: 4090``: YAML read a number, and the names it is probably part of, quoted."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e15:
        number = int(number)
    text = clip(str(number), 60)
    names = builtin_catalog().suggest(text) if len(text) <= 20 else []
    quoted = " or ".join(f'model: "{name}"' for name in names) or f'model: "{text}"'
    return (
        f"{text} was read as a number, not a GPU name (YAML reads unquoted digits as a number); "
        f"write the name in quotes: {quoted}"
    )


def load_catalog_file(path: str, catalog: Catalog, *, origin: str = "rigcheck") -> None:
    """Add the ``gpus:`` entries of a catalog YAML file; errors name the file and line."""
    from rigcheck.core.spec.loader import load_yaml_file

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
