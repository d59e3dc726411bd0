"""Spec models: the shipped examples load unchanged; errors name file, line, column and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rigcheck.core.engine.errors import SpecError
from rigcheck.core.spec.documents import load_spec, parse_spec

from .conftest import MINIMAL_RIG, MINIMAL_WORKLOAD, SPECS

EXAMPLES = sorted((SPECS / "rigs").glob("*.yaml")) + sorted((SPECS / "workloads").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_shipped_specs_load(path: Path) -> None:
    document = load_spec(str(path))
    assert document.kind in ("Rig", "Workload")
    assert document.traps == []


def test_example_values_are_read_as_meant() -> None:
    workload = load_spec(str(SPECS / "workloads" / "gpt-125m-pretrain.yaml")).model
    assert workload.data.tokens == 5.0e8  # PyYAML would load '5.0e8' as a string
    assert workload.precision == "bf16-mixed"  # Lightning's name for the 'bf16' alias
    lora = load_spec(str(SPECS / "workloads" / "llama-2-7b-lora-4090.yaml")).model
    assert lora.activation_checkpointing == "full"  # true means full
    rig = load_spec(str(SPECS / "rigs" / "dgx-h100-x4.yaml")).model
    assert rig.total_nodes == 4
    assert rig.nodes[0].gpus[0].count == 8  # a single mapping is a one-item list
    assert rig.nodes[0].psu[0].redundancy == "4+2"
    assert rig.nodes[0].software.driver == "550.54.15"


def test_quantities_with_units_are_converted() -> None:
    text = MINIMAL_RIG.replace("memory_gib: 64", 'memory_gib: "0.5 TiB"').replace(
        "count: 2}", "count: 2, power_limit_w: 0.3 kW}"
    )
    node = parse_spec(text).model.nodes[0]
    assert node.memory_gib == 512.0
    assert node.gpus[0].power_limit_w == 300.0


def test_numbers_in_version_fields_become_text() -> None:
    text = MINIMAL_RIG + "    software: {driver: 550.54.15, cuda_toolkit: 12.4, os: linux}\n"
    software = parse_spec(text).model.nodes[0].software
    assert software.cuda_toolkit == "12.4" and software.driver == "550.54.15"


def errors(text: str) -> list:  # type: ignore[type-arg]
    with pytest.raises(SpecError) as excinfo:
        parse_spec(text, "spec.yaml")
    return excinfo.value.problems


def test_typo_in_field_name_suggests_the_field() -> None:
    [problem] = errors(MINIMAL_RIG.replace("memory_gib: 64", "memroy_gib: 64"))
    assert problem.code == "SPEC011"
    assert (problem.line, problem.column, problem.pointer) == (8, 5, "/nodes/0/memroy_gib")
    assert problem.message == "unknown field 'memroy_gib'; did you mean 'memory_gib'?"


def test_typo_inside_a_one_or_many_field_points_at_the_written_key() -> None:
    [problem] = errors(MINIMAL_RIG.replace("count: 2}", "cuont: 2}"))
    assert problem.pointer == "/nodes/0/gpus/cuont"
    assert problem.line == 6
    assert "did you mean 'count'" in problem.message


def test_string_where_a_number_is_expected() -> None:
    [problem] = errors(MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: lots"))
    assert (problem.line, problem.column) == (8, 17)
    assert problem.pointer == "/nodes/0/memory_gib"
    assert "got 'lots'" in problem.message


def test_enumerated_value_suggests_nearest_choice() -> None:
    [problem] = errors(MINIMAL_WORKLOAD + "precision: bf61\n")
    assert "did you mean 'bf16-mixed'?" in problem.message
    assert problem.pointer == "/precision"


def test_missing_required_field_points_at_its_mapping() -> None:
    [problem] = errors(MINIMAL_RIG.replace("model: RTX 3090, ", ""))
    assert problem.message == "missing required field 'model'"
    assert problem.line == 6 and problem.pointer == "/nodes/0/gpus/model"


def test_several_problems_are_all_reported_in_file_order() -> None:
    problems = errors(MINIMAL_RIG.replace("cores: 16", "cores: -1").replace("memory_gib: 64", "ram: 64"))
    assert [p.line for p in problems] == [7, 8]


def test_wrong_kind_and_api_version() -> None:
    [problem] = errors(MINIMAL_RIG.replace("kind: Rig", "kind: Rigg"))
    assert "did you mean 'Rig'" in problem.message
    [problem] = errors(MINIMAL_RIG.replace("rigcheck/v1", "rigcheck/v2"))
    assert problem.pointer == "/apiVersion"


def test_negative_and_non_finite_quantities_are_refused() -> None:
    [problem] = errors(MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: -1"))
    assert "greater than or equal to 0" in problem.message
    [problem] = errors(MINIMAL_RIG.replace("memory_gib: 64", "memory_gib: .nan"))
    assert "finite" in problem.message


def test_expected_kind(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    shutil.copy(SPECS / "workloads" / "qwen-1.8b-lora.yaml", path)
    with pytest.raises(SpecError) as excinfo:
        load_spec(str(path), kind="Rig")
    assert "expected a Rig spec here, this file is a Workload" in str(excinfo.value)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [("fp16", "16-mixed"), ("bf16-true", "bf16-true"), ("FP32", "32-true"), ("fp8", "fp8-mixed")],
)
def test_precision_aliases(written: str, canonical: str) -> None:
    assert parse_spec(MINIMAL_WORKLOAD + f"precision: {written}\n").model.precision == canonical


@pytest.mark.parametrize(
    ("written", "canonical"), [("true", "full"), ("false", "none"), ("selective", "selective")]
)
def test_activation_checkpointing(written: str, canonical: str) -> None:
    model = parse_spec(MINIMAL_WORKLOAD + f"activation_checkpointing: {written}\n").model
    assert model.activation_checkpointing == canonical


def _model_classes() -> list[type]:
    """Every pydantic model rigcheck defines (spec, config, catalog, report, finding and evidence)."""
    import importlib

    from pydantic import BaseModel

    for name in (
        "rigcheck.core.spec.models.rig",
        "rigcheck.core.spec.models.workload",
        "rigcheck.core.engine.config",
        "rigcheck.core.catalog.catalog",
        "rigcheck.core.report.report",
        "rigcheck.core.engine.findings",
        "rigcheck.evidence.model",
    ):
        importlib.import_module(name)
    seen: list[type] = []
    stack = [BaseModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub.__module__.startswith("rigcheck.") and sub not in seen:
                seen.append(sub)
            stack.append(sub)
    return seen
