"""The price data for `rigcheck plan` is sourced, dated, well-formed and names GPUs the catalog knows.

Checks specs/hardware/instances.yaml, gpu_prices.yaml and platforms.yaml: every family / entry / part has a
`source` and an ISO `as_of` that is not after the data's reading date; every price is a positive finite number
with a source on the same record (or an enclosing one); every `gpu` resolves in the catalog; there are at
least 40 priced instance sizes and no size name repeats.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

HARDWARE = Path(__file__).resolve().parents[1] / "specs" / "hardware"
READ_DATE = dt.date(2026, 12, 7)  # the last date data was gathered; no as_of may be later

PRICE_KEYS = {
    "price_per_hour",
    "price_per_gpu_hour",
    "launch_msrp_usd",
    "amount",
    "price",
    "price_per_gb",
    "price_per_tb",
    "price_per_kwh",
    "rate",
}
DATE_KEYS = {"as_of", "price_as_of", "msrp_as_of"}
SOURCE_KEYS = ("source", "price_source", "msrp_source")
INTERCONNECTS = {"pcie", "nvlink", "nvswitch"}


def load(name: str) -> Any:
    with (HARDWARE / name).open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def instances() -> dict[str, Any]:
    return load("instances.yaml")


@pytest.fixture(scope="module")
def gpu_prices() -> dict[str, Any]:
    return load("gpu_prices.yaml")


@pytest.fixture(scope="module")
def platforms() -> dict[str, Any]:
    return load("platforms.yaml")


@pytest.fixture(scope="module")
def catalog() -> Any:
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.engine.plugin_manager import PluginHost

    return build_catalog(PluginHost(autoload=False).load())


def sizes(instances: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for family in instances["families"]:
        for size in family["sizes"]:
            yield family, size


def walk(node: Any, path: str = "", sourced: bool = False) -> Iterator[tuple[str, str, Any, bool]]:
    """Yield (path, key, value, has_source) for every mapping entry; has_source: this dict or an ancestor."""
    if isinstance(node, dict):
        sourced = sourced or any(node.get(k) for k in SOURCE_KEYS)
        for key, value in node.items():
            yield path, str(key), value, sourced
            yield from walk(value, f"{path}.{key}", sourced)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from walk(item, f"{path}[{i}]", sourced)


def as_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    assert isinstance(value, str), f"not a date: {value!r}"
    return dt.date.fromisoformat(value)  # raises on anything but YYYY-MM-DD


def records(instances: dict, gpu_prices: dict, platforms: dict) -> Iterator[tuple[str, dict[str, Any]]]:
    """The records that must carry their own source and as_of."""
    for i, family in enumerate(instances["families"]):
        yield f"instances.families[{i}] {family.get('provider')}/{family.get('family')}", family
    for i, entry in enumerate(gpu_prices["gpus"]):
        yield f"gpu_prices.gpus[{i}] {entry.get('gpu')}", entry
        if "street_price" in entry:
            yield f"gpu_prices {entry['gpu']} street_price", entry["street_price"]
        for j, other in enumerate(entry.get("other_street_prices", [])):
            yield f"gpu_prices {entry['gpu']} other_street_prices[{j}]", other
    for kind, parts in platforms["parts"].items():
        for part in parts:
            yield f"platforms.parts.{kind} {part.get('id')}", part
    for template in platforms["templates"]:
        yield f"platforms.templates {template.get('name')}", template
    for i, row in enumerate(platforms["electricity"]):
        yield f"platforms.electricity[{i}]", row
    for i, row in enumerate(platforms["fx"]):
        yield f"platforms.fx[{i}]", row


@pytest.mark.parametrize("name", ["instances.yaml", "gpu_prices.yaml", "platforms.yaml"])
def test_schema_version(name: str) -> None:
    assert load(name)["schema_version"] == 1


def test_every_record_has_source_and_as_of(instances, gpu_prices, platforms) -> None:
    problems = []
    for where, record in records(instances, gpu_prices, platforms):
        if not (isinstance(record.get("source"), str) and record["source"].strip()):
            problems.append(f"{where}: no source")
        if "as_of" not in record:
            problems.append(f"{where}: no as_of")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["instances.yaml", "gpu_prices.yaml", "platforms.yaml"])
def test_dates_are_iso_and_not_in_the_future(name: str) -> None:
    problems = []
    for path, key, value, _ in walk(load(name)):
        if key in DATE_KEYS:
            try:
                date = as_date(value)
            except (AssertionError, ValueError) as exc:
                problems.append(f"{path}.{key}: {exc}")
                continue
            if date > READ_DATE:
                problems.append(f"{path}.{key}: {date} is after {READ_DATE}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["instances.yaml", "gpu_prices.yaml", "platforms.yaml"])
def test_prices_are_positive_finite_and_sourced(name: str) -> None:
    problems = []
    seen = 0
    for path, key, value, sourced in walk(load(name)):
        if key not in PRICE_KEYS:
            continue
        seen += 1
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{path}.{key}: {value!r} is not a number")
        elif not (math.isfinite(value) and value > 0):
            problems.append(f"{path}.{key}: {value!r} is not positive and finite")
        if not sourced:
            problems.append(f"{path}.{key}: price without a source")
    assert seen, f"{name} has no price at all"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["instances.yaml", "platforms.yaml"])
def test_priced_records_name_their_currency(name: str) -> None:
    problems = []

    def visit(node: Any, path: str, currency: str | None) -> None:
        if isinstance(node, dict):
            currency = node.get("currency", currency)
            if (PRICE_KEYS - {"rate"}) & node.keys() and not (  # an fx rate names base and quote instead
                isinstance(currency, str) and len(currency) == 3 and currency.isupper()
            ):
                problems.append(f"{path}: a price without an ISO 4217 currency")
            for key, value in node.items():
                visit(value, f"{path}.{key}", currency)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                visit(item, f"{path}[{i}]", currency)

    visit(load(name), "", None)
    assert not problems, "\n".join(problems)


def test_gpu_prices_street_prices_name_their_currency(gpu_prices) -> None:
    for entry in gpu_prices["gpus"]:
        for price in [entry.get("street_price"), *entry.get("other_street_prices", [])]:
            if price is not None:
                assert price.get("currency") == "USD", entry["gpu"]
                assert "amount" in price, entry["gpu"]


def test_every_gpu_name_resolves(instances, gpu_prices, catalog) -> None:
    names = [family["gpu"] for family in instances["families"]] + [
        entry["gpu"] for entry in gpu_prices["gpus"]
    ]
    problems = []
    for name in names:
        try:
            catalog.lookup(name)
        except LookupError as exc:
            problems.append(f"{name!r}: {exc}")
    assert not problems, "\n".join(problems)


def test_gpu_prices_cover_the_required_models(gpu_prices, catalog) -> None:
    listed = {catalog.lookup(entry["gpu"]).id for entry in gpu_prices["gpus"]}
    assert len(listed) == len(gpu_prices["gpus"]), "a GPU model is listed twice"
    required = [
        "RTX 3060 12GB", "RTX 3090", "RTX 3090 Ti", "RTX 4060 Ti 16GB", "RTX 4070 Ti Super", "RTX 4080 Super",
        "RTX 4090", "RTX 5090", "RTX A4000", "RTX A6000", "RTX 6000 Ada", "L4", "L40S", "A10", "T4",
        "A100 PCIe 40GB", "A100 80GB PCIe", "H100 PCIe", "H100 SXM",
    ]  # fmt: skip
    missing = [name for name in required if catalog.lookup(name).id not in listed]
    assert not missing, missing


def test_msrp_has_its_own_source_and_date(gpu_prices) -> None:
    for entry in gpu_prices["gpus"]:
        if "launch_msrp_usd" in entry:
            assert entry.get("msrp_source") and entry.get("msrp_as_of"), entry["gpu"]


def test_at_least_40_priced_instance_sizes(instances) -> None:
    priced = [size["name"] for _, size in sizes(instances) if "price_per_hour" in size]
    assert len(priced) >= 40, len(priced)


def test_per_gpu_rates_match_the_instance_price(instances) -> None:
    for _, size in sizes(instances):
        if "price_per_gpu_hour" in size and "price_per_hour" in size:
            assert size["price_per_hour"] == pytest.approx(
                size["price_per_gpu_hour"] * size["gpus"], rel=1e-3
            ), size["name"]


def test_size_names_are_unique(instances) -> None:
    by_provider: dict[str, set[str]] = {}
    everywhere: set[str] = set()
    duplicates = []
    for family, size in sizes(instances):
        name = size["name"]
        names = by_provider.setdefault(family["provider"], set())
        if name in names or name.lower() in everywhere:
            duplicates.append(f"{family['provider']}: {name}")
        names.add(name)
        # rigcheck/core/catalog/instances.py looks a lowercased name up in every family, so names are unique overall.
        everywhere.add(name.lower())
    assert not duplicates, duplicates


def test_sizes_keep_the_fields_instances_py_reads(instances) -> None:
    for family, size in sizes(instances):
        assert isinstance(family["source"], str) and family["provider"] and family["family"]
        assert size["name"] == size["name"].lower(), size["name"]
        for key in ("gpus", "vcpus"):
            assert isinstance(size[key], int) and not isinstance(size[key], bool) and size[key] > 0, size[
                "name"
            ]
        assert isinstance(size["memory_gib"], (int, float)) and size["memory_gib"] > 0, size["name"]
        if "gpu_interconnect" in size:
            assert size["gpu_interconnect"] in INTERCONNECTS, size["name"]
        if "price_per_hour" in size:
            assert size.get("region"), f"{size['name']}: a price without a region"
        if "local_storage" in size:
            assert isinstance(size["local_storage"], dict) and size["local_storage"].get("kind"), size["name"]
        if "network_gbps" in size:
            assert isinstance(size["network_gbps"], (int, float)) and size["network_gbps"] > 0, size["name"]


def test_instances_py_still_reads_the_file() -> None:
    from rigcheck.core.catalog.instances import family_sizes

    # every size name finds its own family through the module PLT002's fixes use
    for family in load("instances.yaml")["families"]:
        expected = [size["name"] for size in family["sizes"]]
        for name in expected:
            assert [size.name for size in family_sizes(name)] == expected, name


def test_platform_templates(platforms) -> None:
    templates = {t["name"]: t for t in platforms["templates"]}
    assert set(templates) >= {"desktop", "workstation", "server-4gpu", "hgx-8gpu"}
    part_ids = {part["id"] for parts in platforms["parts"].values() for part in parts}
    assert len(part_ids) == sum(len(parts) for parts in platforms["parts"].values()), "duplicate part id"
    for template in templates.values():
        assert isinstance(template["max_gpus"], int) and template["max_gpus"] > 0
        for kind, ids in template.get("parts", {}).items():
            unknown = set(ids) - part_ids
            assert not unknown, f"{template['name']}.{kind}: {unknown}"
    assert templates["desktop"]["max_gpus"] <= 2
    assert templates["workstation"]["max_gpus"] <= 4
    assert templates["hgx-8gpu"]["max_gpus"] == 8
    assert isinstance(templates["hgx-8gpu"]["whole_system_price_found"], bool)


def test_fx_and_electricity_rows(platforms) -> None:
    pairs = {(row["base"], row["quote"]) for row in platforms["fx"]}
    assert ("USD", "CNY") in pairs and ("EUR", "CNY") in pairs
    for base, quote in pairs:
        assert base != quote and all(len(c) == 3 and c.isupper() for c in (base, quote)), (base, quote)
    regions = {row["region"] for row in platforms["electricity"]}
    assert "US" in regions
