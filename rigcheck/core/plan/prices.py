"""Dated prices for ``rigcheck plan``: cloud instance sizes (``specs/hardware/instances.yaml``), GPU
purchase prices (``gpu_prices.yaml``), platform parts and templates, electricity and exchange rates
(``platforms.yaml``). Every price keeps its source and date; a thing without a sourced price has
``price=None`` and is never given a guessed one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Price:
    """An amount with its currency, what it is, and where and when it was read."""

    amount: float
    currency: str
    what: str
    source: str
    as_of: str

    def times(self, count: float) -> Price:
        """``count`` of the thing at this price (GPUs of a rig, nodes of a rental)."""
        return Price(self.amount * count, self.currency, self.what, self.source, self.as_of)

    def age_days(self, today: date) -> int:
        return (today - date.fromisoformat(self.as_of)).days


#: What a sector is called in each region's data: EU statistics say household and non-household.
SECTOR_NAMES: dict[str, tuple[str, ...]] = {
    "residential": ("residential", "household"),
    "household": ("household", "residential"),
    "industrial": ("industrial", "non-household"),
    "commercial": ("commercial", "non-household"),
    "non-household": ("non-household", "industrial"),
}


@dataclass(frozen=True)
class InstanceOffer:
    """One cloud instance size with its on-demand price (``None``: no sourced price)."""

    provider: str
    family: str
    name: str
    gpu: str  # the catalog id
    gpu_name: str  # the catalog name
    gpus: int
    vcpus: int
    memory_gib: float
    price: Price | None
    gpu_interconnect: str | None
    local_storage: Mapping[str, Any] | None
    network_gbps: float | None
    network_kind: str
    source: str

    @property
    def label(self) -> str:
        return f"{self.provider} {self.name}"


@dataclass(frozen=True)
class Part:
    """A platform part (board, CPU, RAM kit, PSU, case, NVMe) with its attributes and price."""

    category: str
    id: str
    model: str
    price: Price | None
    attributes: Mapping[str, Any]


@dataclass(frozen=True)
class Template:
    """A kind of buildable machine: its limits and the priced parts it is built from."""

    name: str
    description: str
    max_gpus: int
    gpu_form_factor: str
    pcie_gen: int | None
    max_ram_gb: float | None
    memory: str | None
    chassis_form_factor: str | None
    lanes_one_gpu: int | None
    lanes_per_gpu_several: int | None
    parts: Mapping[str, tuple[Part, ...]]
    unpriced: tuple[str, ...]
    source: str
    memory_slots: int | None = None


@dataclass(frozen=True)
class PriceBook:
    """All the price data, loaded once."""

    instances: tuple[InstanceOffer, ...]
    gpu_prices: Mapping[str, Price]  # catalog GPU id -> its purchase price
    gpu_price_sources: Mapping[str, str]  # catalog GPU id -> the entry's source (also for unpriced GPUs)
    templates: tuple[Template, ...]
    electricity: tuple[Mapping[str, Any], ...]
    fx: tuple[Mapping[str, Any], ...] = field(default=())
    blower_edition_slots: float | None = None  # platforms.yaml sizing

    def template(self, name: str) -> Template:
        return next(template for template in self.templates if template.name == name)

    def convert(self, amount: float, currency: str, to: str) -> float:
        """``amount`` of ``currency`` in ``to``, at the recorded rates (through any chain of them)."""
        return amount * self._rate(currency.upper(), to.upper())

    def fx_used(self, currencies: set[str], to: str) -> list[Mapping[str, Any]]:
        """The rate rows a conversion into ``to`` relies on (to say which and how old)."""
        wanted = {c.upper() for c in currencies} | {to.upper()}
        return [row for row in self.fx if {row["base"], row["quote"]} <= wanted and len(wanted) > 1]

    def _rate(self, source: str, target: str) -> float:
        if source == target:
            return 1.0
        edges: dict[str, dict[str, float]] = {}
        for row in self.fx:
            edges.setdefault(row["base"], {})[row["quote"]] = float(row["rate"])
            edges.setdefault(row["quote"], {})[row["base"]] = 1.0 / float(row["rate"])
        frontier, seen = [(source, 1.0)], {source}
        while frontier:
            currency, rate = frontier.pop(0)
            for other, step in edges.get(currency, {}).items():
                if other == target:
                    return rate * step
                if other not in seen:
                    seen.add(other)
                    frontier.append((other, rate * step))
        raise KeyError(f"no exchange rate from {source} to {target} in specs/hardware/platforms.yaml (fx)")

    def electricity_for(self, currency: str, choice: str | None = None) -> Mapping[str, Any] | None:
        """The electricity price row for ``choice``: ``REGION:SECTOR`` (``US:industrial``), a sector alone
        (``residential``, ``industrial``, ``commercial``: in the currency's region), or None for the
        currency's region's homes (USD: US residential, EUR: EU household, CNY: China residential: a home
        builder's meter). None when the data has no such row."""
        region = {"USD": "US", "EUR": "EU", "CNY": "CN"}.get(currency.upper())
        sector = "residential"
        if choice:
            region, _, sector = choice.rpartition(":") if ":" in choice else (region, "", choice)
        if not region:
            return None
        wanted = SECTOR_NAMES.get(sector.lower(), (sector.lower(),))
        for name in wanted:
            for row in self.electricity:
                if (
                    str(row["region"]).upper() == region.upper()
                    and str(row.get("sector", "")).lower() == name
                ):
                    return row
        return None

    def electricity_choices(self) -> list[str]:
        """``REGION:SECTOR`` of every electricity row, for a message."""
        return [f"{row['region']}:{row.get('sector', '')}" for row in self.electricity]


def _price(amount: Any, currency: str, what: str, source: str, as_of: Any) -> Price:
    return Price(float(amount), str(currency), what, str(source), str(as_of))


def _instances(data: Mapping[str, Any], canonical: Any) -> tuple[InstanceOffer, ...]:
    offers = []
    for family in data["families"]:
        for size in family["sizes"]:
            price = None
            if "price_per_hour" in size:
                price = _price(
                    size["price_per_hour"],
                    size.get("currency", "USD"),
                    f"on-demand per hour ({size.get('region', 'region not stated')})",
                    size.get("price_source") or family.get("price_source") or family["source"],
                    size.get("price_as_of") or family.get("price_as_of") or family["as_of"],
                )
            gpu = canonical(family["gpu"])
            offers.append(
                InstanceOffer(
                    provider=family["provider"],
                    family=family["family"],
                    name=size["name"],
                    gpu=gpu.id,
                    gpu_name=gpu.name,
                    gpus=int(size["gpus"]),
                    vcpus=int(size["vcpus"]),
                    memory_gib=float(size["memory_gib"]),
                    price=price,
                    gpu_interconnect=size.get("gpu_interconnect"),
                    local_storage=size.get("local_storage"),
                    network_gbps=size.get("network_gbps"),
                    network_kind=family.get("network_kind", "ethernet"),
                    source=family["source"],
                )
            )
    return tuple(offers)


def _gpu_price(entry: Mapping[str, Any]) -> Price | None:
    """The newest dated street price, else the launch MSRP; None when neither is sourced."""
    observations = [entry["street_price"]] if entry.get("street_price") else []
    observations += list(entry.get("other_street_prices") or ())
    if observations:
        newest = max(observations, key=lambda row: str(row["as_of"]))
        return _price(newest["amount"], newest["currency"], "street price", newest["source"], newest["as_of"])
    if "launch_msrp_usd" in entry:
        return _price(
            entry["launch_msrp_usd"],
            "USD",
            "launch MSRP",
            entry.get("msrp_source", entry["source"]),
            entry.get("msrp_as_of", entry["as_of"]),
        )
    return None


def _templates(data: Mapping[str, Any]) -> tuple[Template, ...]:
    parts: dict[str, Part] = {}
    for category, rows in data["parts"].items():
        for row in rows:
            price = (
                _price(row["price"], row.get("currency", "USD"), category, row["source"], row["as_of"])
                if "price" in row
                else None
            )
            attributes = {
                k: v for k, v in row.items() if k not in ("id", "model", "price", "source", "as_of")
            }
            parts[row["id"]] = Part(category, row["id"], row["model"], price, attributes)
    templates = []
    for row in data["templates"]:
        chosen = {
            category: tuple(sorted((parts[i] for i in ids), key=_cheapest))
            for category, ids in (row.get("parts") or {}).items()
        }
        templates.append(
            Template(
                name=row["name"],
                description=row.get("description", ""),
                max_gpus=int(row["max_gpus"]),
                gpu_form_factor=row.get("gpu_form_factor", "pcie"),
                pcie_gen=row.get("pcie_gen"),
                max_ram_gb=row.get("max_ram_gb"),
                memory=row.get("memory"),
                chassis_form_factor=row.get("chassis_form_factor"),
                lanes_one_gpu=row.get("lanes_one_gpu"),
                lanes_per_gpu_several=row.get("lanes_per_gpu_several"),
                parts=chosen,
                unpriced=tuple(row.get("unpriced") or ()),
                source=row["source"],
                memory_slots=row.get("memory_slots"),
            )
        )
    return tuple(templates)


def _cheapest(part: Part) -> float:
    return part.price.amount if part.price else float("inf")


@cache
def price_book() -> PriceBook:
    """The price data of the shipped ``specs/hardware`` files (GPU names resolved in the catalog)."""
    from rigcheck.core.catalog.catalog import builtin_catalog
    from rigcheck.core.spec.loader import load_yaml_file
    from rigcheck.resources import hardware_file

    catalog = builtin_catalog()

    def canonical(name: str) -> Any:
        return catalog.lookup(name)

    instances = load_yaml_file(str(hardware_file("instances.yaml"))).data
    gpus = load_yaml_file(str(hardware_file("gpu_prices.yaml"))).data
    platforms = load_yaml_file(str(hardware_file("platforms.yaml"))).data
    prices, sources = {}, {}
    for entry in gpus["gpus"]:
        gpu_id = canonical(entry["gpu"]).id
        sources[gpu_id] = str(entry["source"])
        price = _gpu_price(entry)
        if price is not None:
            prices[gpu_id] = price
    return PriceBook(
        instances=_instances(instances, canonical),
        gpu_prices=prices,
        gpu_price_sources=sources,
        templates=_templates(platforms),
        electricity=tuple(platforms.get("electricity") or ()),
        fx=tuple(platforms.get("fx") or ()),
        blower_edition_slots=(platforms.get("sizing") or {}).get("blower_edition_slots"),
    )
