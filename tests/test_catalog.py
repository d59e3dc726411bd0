"""The GPU catalog: every entry sourced and dated; lookup by id, name or alias; overrides."""

from __future__ import annotations

import re

import pytest

from rigcheck.core.catalog.catalog import (
    Catalog,
    CatalogLookupError,
    GpuSpec,
    load_catalog_file,
    normalize_name,
)
from rigcheck.core.engine.errors import SpecError

from .conftest import MINIMAL_RIG, SPECS


def test_every_entry_has_a_source_a_date_and_a_confidence(catalog: Catalog) -> None:
    assert len(catalog) >= 60
    for spec in catalog:
        assert len(spec.source) > 10, spec.id
        assert re.match(r"^\d{4}-\d{2}-\d{2}$", spec.as_of), spec.id
        assert spec.confidence in ("high", "medium", "low")


def test_names_are_unique_after_normalisation(catalog: Catalog) -> None:
    seen: dict[str, str] = {}
    for spec in catalog:
        for name in spec.names:
            key = normalize_name(name)
            assert seen.setdefault(key, spec.id) == spec.id, f"{name!r} of {spec.id} clashes with {seen[key]}"


@pytest.mark.parametrize(
    ("query", "gpu_id"),
    [
        ("RTX 3090", "rtx-3090"),
        ("NVIDIA GeForce RTX 3090", "rtx-3090"),
        ("rtx3090", "rtx-3090"),
        ("GeForce RTX 3090", "rtx-3090"),
        ("rtx-3090", "rtx-3090"),
        ("RTX 3090 Ti", "rtx-3090-ti"),
        ("H100 SXM", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),  # what nvidia-smi prints
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("Tesla T4", "t4"),
        ("tesla-v100-sxm2-16gb", "v100-sxm2-16gb"),
        ("NVIDIA RTX A5000", "rtx-a5000"),
    ],
)
def test_lookup_ignores_case_punctuation_and_brand(catalog: Catalog, query: str, gpu_id: str) -> None:
    assert catalog.lookup(query).id == gpu_id


@pytest.mark.parametrize("family", ["A100", "H100", "V100", "RTX 3080"])
def test_family_names_are_ambiguous_not_guessed(catalog: Catalog, family: str) -> None:
    with pytest.raises(CatalogLookupError) as excinfo:
        catalog.lookup(family)
    assert "matches several cards" in str(excinfo.value)
    assert len(excinfo.value.candidates) >= 2


def test_unknown_name_suggests_the_nearest(catalog: Catalog) -> None:
    with pytest.raises(CatalogLookupError) as excinfo:
        catalog.lookup("RTX 3095")
    assert "RTX 3090" in excinfo.value.candidates


def test_facts_of_reference_cards(catalog: Catalog) -> None:
    rtx3090 = catalog.lookup("RTX 3090")
    assert (rtx3090.memory_gib, rtx3090.tdp_w, rtx3090.compute_capability) == (24, 350, "8.6")
    # docs/research/rules_facts.md section 0.2: 112.5, not 600
    assert rtx3090.nvlink.total_bidirectional_gbps == 112.5
    h100 = catalog.lookup("H100 SXM")
    assert (h100.memory_gib, h100.tdp_w, h100.bf16_dense_tflops) == (80, 700, 989.4)  # dense, not sparse
    assert catalog.lookup("RTX 4090").p2p_stock_driver is False  # NET-9


def test_plugin_entries_add_and_override() -> None:
    catalog = Catalog()
    base = {
        "id": "acme-x1",
        "name": "ACME X1",
        "aliases": ["X1"],
        "vendor": "nvidia",
        "architecture": "Hopper",
        "memory_gib": 96,
        "source": "https://acme.example/x1.pdf",
        "as_of": "2026-11-01",
    }
    catalog.add(base, origin="plugin acme")
    assert catalog.lookup("acme x1").memory_gib == 96
    with pytest.raises(ValueError, match="already defined by plugin acme"):
        catalog.add(base, origin="plugin other")
    catalog.add({**base, "memory_gib": 128, "aliases": ["X1 Pro"]}, origin="plugin other", override=True)
    assert catalog.lookup("X1 Pro").memory_gib == 128
    with pytest.raises(CatalogLookupError):
        catalog.lookup("X1")  # the replaced entry's aliases are gone


def test_entry_without_source_is_refused() -> None:
    with pytest.raises(ValueError, match="source"):
        GpuSpec.model_validate(
            {
                "id": "x",
                "name": "X",
                "vendor": "nvidia",
                "architecture": "A",
                "memory_gib": 1,
                "as_of": "2026-01-01",
            }
        )


def test_bad_catalog_file_names_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "gpus.yaml"
    path.write_text(
        "gpus:\n  - id: x\n    name: X\n    vendor: nvidia\n    architecture: A\n    memory_gib: -4\n"
        "    source: https://x.example\n    as_of: '2026-01-01'\n"
    )
    with pytest.raises(SpecError) as excinfo:
        load_catalog_file(str(path), Catalog())
    assert excinfo.value.problems[0].line == 6


def test_interconnect_data_is_sourced() -> None:
    from rigcheck.core.spec.loader import load_yaml_file

    data = load_yaml_file(str(SPECS / "hardware" / "interconnects.yaml")).data
    for table, rows in data.items():
        if isinstance(rows, list):
            for row in rows:
                assert row.get("source") and row.get("as_of"), (table, row)


def test_rig_fields_override_catalog_facts(catalog: Catalog) -> None:
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.spec.documents import parse_spec

    rig = MINIMAL_RIG.replace("count: 2}", "count: 2, power_limit_w: 280, length_mm: 336}")
    gpu = CheckContext(parse_spec(rig), None, catalog).nodes[0].gpus[0]
    assert gpu.power_limit_w == 280 and gpu.fact("power_limit_w").origin == "rig"  # the user's limit wins
    assert gpu.fact("length_mm").value == 336
    assert gpu.fact("memory_gib").value == 24 and gpu.fact("memory_gib").origin == "catalog:rtx-3090"


def test_unknown_gpu_in_a_rig_is_an_error_at_its_line(check) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError) as excinfo:
        check(MINIMAL_RIG.replace("RTX 3090", "RTX 3095"))
    [problem] = excinfo.value.problems
    assert problem.code == "SPEC013" and problem.line == 6 and "did you mean" in problem.message
