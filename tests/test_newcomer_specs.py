"""Issue 17, specs and messages: what a newcomer writes from docs/specs.md is read as the docs promise,
and what is wrong is said in one line with the file, line, field and what to write instead."""

from __future__ import annotations

import textwrap
import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any, Union

import jsonschema
import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from rigcheck.core.spec.fields import Choice
from rigcheck.core.spec.models.rig import Rig
from rigcheck.core.spec.models.workload import Workload
from rigcheck.core.spec.schemas import schema

from .conftest import MINIMAL_RIG, MINIMAL_WORKLOAD

# -- 1. choices: the published schema forgives what the loader forgives --------------------------------


def _choices_in(annotation: Any) -> Iterator[tuple[Choice, bool]]:
    """The choices an annotation holds, each with whether it is inside a list."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        for meta in annotation.__metadata__:
            if isinstance(meta, Choice):
                yield meta, False
        yield from _choices_in(args[0])
    elif origin in (Union, types.UnionType):
        for arg in args:
            yield from _choices_in(arg)
    elif origin is list:
        for choice, _ in _choices_in(args[0]):
            yield choice, True


def _models(root: type[BaseModel]) -> Iterator[type[BaseModel]]:
    seen: set[type[BaseModel]] = set()
    todo = [root]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        yield model
        for info in model.model_fields.values():
            todo.extend(_submodels(info.annotation))


def _submodels(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _submodels(arg)


def _choice_fields() -> list[tuple[str, type[BaseModel], str, Choice, bool]]:
    found = []
    for root, which in ((Rig, "rig"), (Workload, "workload")):
        for model in _models(root):
            for name, info in model.model_fields.items():
                for choice, listed in _choices_in(info.rebuild_annotation()):
                    found.append((which, model, info.alias or name, choice, listed))
    return found


CHOICE_FIELDS = _choice_fields()


def _variants(spelling: str) -> set[str]:
    """The spelling, upper-cased, with each separator written as '-', '_' and a space, and padded."""
    out = {spelling, spelling.upper(), spelling.title(), f"  {spelling} "}
    for separator in "-_ ":
        swapped = spelling.replace("-", separator).replace("_", separator).replace(" ", separator)
        out |= {swapped, swapped.upper()}
    return out


def _field_schema(which: str, model: type[BaseModel], field: str) -> dict[str, Any]:
    root = schema(which)
    props = root["properties"] if model in (Rig, Workload) else root["$defs"][model.__name__]["properties"]
    return {"$defs": root.get("$defs", {}), **props[field]}


def test_every_choice_of_both_models_is_found() -> None:
    names = {(model.__name__, field) for _, model, field, _, _ in CHOICE_FIELDS}
    assert {
        ("GpuGroup", "cooler"),
        ("Workload", "task"),
        ("StorageDevice", "roles"),
        ("Psu", "connectors"),
    } <= names
    assert len(CHOICE_FIELDS) >= 40


@pytest.mark.parametrize(
    ("which", "model", "field", "choice", "listed"),
    CHOICE_FIELDS,
    ids=[f"{model.__name__}.{field}" for _, model, field, _, _ in CHOICE_FIELDS],
)
def test_choice_spellings_pass_pydantic_and_the_published_schema(
    which: str, model: type[BaseModel], field: str, choice: Choice, listed: bool
) -> None:
    adapter = TypeAdapter(model.model_fields[_python_name(model, field)].rebuild_annotation())
    validator = jsonschema.Draft202012Validator(_field_schema(which, model, field))
    for spelling in [*choice.values, *getattr(choice, "aliases", {})]:
        for variant in _variants(spelling):
            value: Any = [variant] if listed else variant
            adapter.validate_python(value)
            assert validator.is_valid(value), (field, variant)
    nonsense: Any = ["no-such-thing-x"] if listed else "no-such-thing-x"
    with pytest.raises(ValidationError):
        adapter.validate_python(nonsense)
    assert not validator.is_valid(nonsense)


def _python_name(model: type[BaseModel], field: str) -> str:
    return next(name for name, info in model.model_fields.items() if field in (name, info.alias))


@pytest.mark.parametrize(
    "line",
    [
        "task: QLoRA",
        "task: Inference",
        "task: full-finetune",
        "precision: bf16_mixed",
        "attention: Flash",
        "optimizer: AdamW",
        "precision: 16",
        "activation_checkpointing: Selective",
    ],
)
def test_validate_accepts_the_documented_spellings(run_cli, write_spec, line: str) -> None:  # type: ignore[no-untyped-def]
    key = line.split(":")[0]
    text = "\n".join(row for row in MINIMAL_WORKLOAD.splitlines() if not row.startswith(key + ":"))
    result = run_cli("validate", write_spec(text + "\n" + line + "\n"))
    assert result.exit_code == 0, result.out + result.err
    assert "valid Workload 'test-workload'" in result.out


def test_validate_accepts_a_cooler_in_any_case(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(MINIMAL_RIG.replace("count: 2}", "count: 2, cooler: Open-Air}"))
    result = run_cli("validate", path)
    assert result.exit_code == 0, result.out + result.err


WRONG_OPTIMIZER = (
    "/optimizer: 'adamx' is not one of 'adamw', 'adam', 'adamw-8bit', 'paged-adamw-8bit', 'paged-adamw', "
    "'sgd', 'sgd-momentum', 'adafactor', 'lion' or 'none'; did you mean 'adam'? [SPEC010]"
)


@pytest.mark.parametrize("command", ["check", "validate"])
def test_a_wrong_choice_names_file_line_field_and_the_choices(run_cli, write_spec, command: str) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(MINIMAL_RIG, "rig.yaml")
    workload = write_spec(MINIMAL_WORKLOAD + "optimizer: adamx\n", "workload.yaml")
    result = run_cli(command, rig, workload) if command == "check" else run_cli(command, workload)
    assert result.exit_code == 2
    assert result.err.strip() == f"{workload}:7:12: error: {WRONG_OPTIMIZER}" or (
        result.out.strip() == f"{workload}:7:12: error: {WRONG_OPTIMIZER}"
    )


def _schema_problems(text: str, change: Any) -> list[str]:
    from rigcheck.core.spec.documents import parse_spec
    from rigcheck.core.spec.validate import json_schema_problems

    document = parse_spec(textwrap.dedent(text), "spec.yaml")
    change(document.yaml.data)
    return [problem.format() for problem in json_schema_problems(document)]


def test_schema_errors_descend_into_any_of_and_list_the_choices() -> None:
    def wrong_optimizer(data: dict[str, Any]) -> None:
        data["optimizer"] = "adamx"

    assert _schema_problems(MINIMAL_WORKLOAD + "optimizer: adamw\n", wrong_optimizer) == [
        f"spec.yaml:7:12: error: /optimizer: does not match the published JSON Schema: {WRONG_OPTIMIZER[12:]}"
    ]

    def wrong_cooler(data: dict[str, Any]) -> None:
        data["nodes"][0]["gpus"]["cooler"] = "Open-Aire"

    assert _schema_problems(MINIMAL_RIG.replace("count: 2}", "count: 2, cooler: blower}"), wrong_cooler) == [
        "spec.yaml:6:47: error: /nodes/0/gpus/cooler: does not match the published JSON Schema: 'Open-Aire' is "
        "not one of 'open-air', 'blower', 'passive', 'liquid' or 'hybrid'; did you mean 'open-air'? [SPEC010]"
    ]

    def wrong_zero(data: dict[str, Any]) -> None:
        data["parallelism"] = {"zero": 5}

    assert _schema_problems(MINIMAL_WORKLOAD, wrong_zero) == [
        "spec.yaml:1:1: error: /parallelism/zero: does not match the published JSON Schema: 5 is not one of "
        "0, 1, 2 or 3 [SPEC010]"
    ]


# -- 2. GPU names as people write them -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("H100 SXM 80GB", "h100-sxm"),
        ("RTX 4090 24GB", "rtx-4090"),
        ("a10g 24gb", "a10g"),
        ("A100 40GB PCIe", "a100-pcie-40gb"),
        ("RTX 3090 24 GB", "rtx-3090"),
    ],
)
def test_a_memory_size_the_card_has_is_accepted(catalog, name: str, gpu_id: str) -> None:  # type: ignore[no-untyped-def]
    assert catalog.lookup(name).id == gpu_id


def test_a_name_with_a_memory_size_validates(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("validate", write_spec(MINIMAL_RIG.replace("RTX 3090", "H100 SXM 80GB")))
    assert result.exit_code == 0, result.out + result.err


def test_a_memory_size_that_contradicts_the_card_names_the_cards(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(MINIMAL_RIG.replace("RTX 3090", "RTX 4090 48GB"))
    result = run_cli("validate", path)
    assert result.exit_code == 2
    assert result.out.strip() == (
        f"{path}:6:12: error: /nodes/0/gpus/model: GPU name 'RTX 4090 48GB' says 48 GB, which no card of that "
        "name has: RTX 4090 (24 GiB); RTX 4090 Laptop GPU (16 GiB); write one of those names (a card modified "
        "to 48 GB: model: 'RTX 4090' with memory_gib: 48) [SPEC013]"
    )


def test_a_memory_size_shared_by_several_cards_is_ambiguous(catalog) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.catalog.catalog import CatalogLookupError

    with pytest.raises(CatalogLookupError) as excinfo:
        catalog.lookup("A100 80GB")
    assert str(excinfo.value) == (
        "GPU name 'A100 80GB' matches several cards: A100 PCIe 80GB; A100 SXM4 80GB; write the full name"
    )


def test_an_unquoted_number_is_said_to_be_one(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(MINIMAL_RIG.replace("model: RTX 3090", "model: 4090"))
    result = run_cli("check", path)
    assert result.exit_code == 2 and "Traceback" not in result.err
    assert result.err.strip() == (
        f"{path}:6:19: error: /nodes/0/gpus/model: 4090 was read as a number, not a GPU name (YAML reads "
        'unquoted digits as a number); write the name in quotes: model: "RTX 4090" or model: "RTX 4090M" [SPEC010]'
    )


def test_gpus_ranks_the_cards_a_number_is_part_of_first(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("gpus", "3090")
    assert result.exit_code == 2
    assert result.err.strip() == (
        "rigcheck gpus: unknown GPU '3090'; did you mean 'RTX 3090', 'RTX 3090 Ti'? (rigcheck gpus lists the "
        "catalog; a plugin can add entries)"
    )


def test_an_ambiguous_name_lists_every_card(catalog) -> None:  # type: ignore[no-untyped-def]
    from rigcheck.core.catalog.catalog import CatalogLookupError, short_name

    with pytest.raises(CatalogLookupError) as excinfo:
        catalog.lookup("RTX")
    expected = sorted(short_name(card) for card in catalog if short_name(card).startswith("RTX "))
    listed = str(excinfo.value).split(": ", 1)[1].rsplit("; write the full name", 1)[0].split("; ")
    assert sorted(listed) == expected and len(expected) >= 25


def test_an_ambiguous_name_is_never_clipped_in_a_spec_error() -> None:
    from rigcheck.core.catalog.catalog import Catalog
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.engine.errors import SpecError
    from rigcheck.core.spec.documents import parse_spec

    catalog = Catalog()
    for index in range(80):
        catalog.add(
            {
                "id": f"acme-x{index}",
                "name": f"ACME X{index} Accelerator Card",
                "vendor": "nvidia",
                "architecture": "Hopper",
                "memory_gib": 96,
                "source": "https://acme.example/x.pdf",
                "as_of": "2026-11-01",
            },
            origin="plugin acme",
        )
    rig = parse_spec(MINIMAL_RIG.replace("RTX 3090", "ACME X"), "rig.yaml")
    with pytest.raises(SpecError) as excinfo:
        CheckContext(rig, None, catalog)
    message = excinfo.value.problems[0].message
    assert len(message) > 2000 and "characters cut" not in message
    assert all(f"ACME X{index} Accelerator Card" in message for index in range(80))


# -- 3. YAML structure errors -------------------------------------------------------------------------------

NODE = """\
apiVersion: rigcheck/v1
kind: Rig
name: test-rig
nodes:
  - name: box
    gpus:
      model: RTX 3090
      count: 2
    pcie:
      gen: 4
    cpu:
      cores: 16
      threads: 32
    memory_gib: 64
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            NODE.replace("    memory_gib: 64", "\tmemory_gib: 64"),
            ":14:1: error: not valid YAML: a tab character (YAML indents with spaces) before 'memory_gib:'; "
            "replace the tab with spaces [SPEC012]",
        ),
        (
            NODE.replace("      threads: 32", "     threads: 32"),
            ":13:6: error: /nodes/0/cpu/threads: not valid YAML: 'threads:' at column 6 lines up with no key "
            "above it; indent it to column 7 to go with 'cores:' (line 12) or to column 5 to go with 'cpu:' "
            "(line 11) [SPEC012]",
        ),
        (
            NODE.replace("      model: RTX 3090\n      count: 2", "    model: RTX 3090\n      count: 2"),
            ":8:7: error: /nodes/0/model: not valid YAML: 'count:' is indented under 'model: RTX 3090' (line 7), "
            "which already has a value; keys of one mapping start in the same column: check the indentation of "
            "lines 7 and 8 [SPEC012]",
        ),
        (
            NODE.replace(
                "    cpu:\n      cores: 16\n      threads: 32",
                "      cpu:\n        cores: 16\n        threads: 32",
            ),
            ":11:7: error: /nodes/0/pcie/cpu: unknown field 'cpu' under 'pcie:' (line 9), but 'cpu' is a field of "
            "/nodes/0 (line 5): this looks like an indentation problem (indented too far); indent 'cpu:' to column "
            "5, like the other keys there [SPEC011]",
        ),
        (
            NODE.replace("      count: 2", "    slots: 2"),
            ":8:5: error: /nodes/0/slots: unknown field 'slots' in /nodes/0 (line 5), but 'slots' is a field of "
            "/nodes/0/gpus (line 6) just above: this looks like an indentation problem (not indented enough); "
            "indent 'slots:' to column 7, like the other keys there [SPEC011]",
        ),
    ],
    ids=["tab", "between-columns", "under-a-value", "over-indented", "under-indented"],
)
def test_structure_errors_are_one_line_at_the_place_to_fix(
    run_cli, write_spec, text: str, expected: str
) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(text)
    result = run_cli("validate", path)
    assert result.exit_code == 2
    assert result.out.strip() == path + expected
    checked = run_cli("check", path)
    assert (
        checked.exit_code == 2 and checked.err.strip() == path + expected and "Traceback" not in checked.err
    )


def test_a_line_at_the_column_of_a_list_names_the_item() -> None:
    from rigcheck.core.engine.errors import SpecError
    from rigcheck.core.spec.loader import load_yaml_text

    text = (
        "nodes:\n  - name: a\n    storage:\n      - kind: nvme\n        capacity_gb: 2\n      read_mb_s: 9\n"
    )
    with pytest.raises(SpecError) as excinfo:
        load_yaml_text(text, "rig.yaml")
    assert excinfo.value.problems[0].format() == (
        "rig.yaml:6:7: error: /nodes/0/storage/0/read_mb_s: not valid YAML: 'read_mb_s:' at column 7 lines up "
        "with the '- ' items of 'storage:' (line 3) but is not one; indent it to column 9 like 'capacity_gb:' "
        "(line 5) if it belongs to that item, or start a new item with '- ' [SPEC012]"
    )


def test_a_colon_in_a_value_says_to_quote_it() -> None:
    from rigcheck.core.engine.errors import SpecError
    from rigcheck.core.spec.loader import load_yaml_text

    with pytest.raises(SpecError) as excinfo:
        load_yaml_text("name: a\ndescription: two GPUs: 3090s\n", "rig.yaml")
    assert excinfo.value.problems[0].format() == (
        "rig.yaml:2:22: error: /description: not valid YAML: the value of 'description:' holds ': ', which YAML "
        'reads as another key; quote the value (description: "...") [SPEC012]'
    )


def test_the_pure_python_parser_gets_the_same_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    from rigcheck.core.engine.errors import SpecError
    from rigcheck.core.spec import loader

    texts = [
        NODE.replace("    memory_gib: 64", "\tmemory_gib: 64"),
        NODE.replace("      threads: 32", "     threads: 32"),
    ]
    said = []
    for parser in (loader._CLoader, loader._PyLoader):
        monkeypatch.setattr(loader, "_Loader", parser)
        for text in texts:
            with pytest.raises(SpecError) as excinfo:
                loader.load_yaml_text(text, "rig.yaml")
            said.append(excinfo.value.problems[0].format())
    assert said[:2] == said[2:]


# -- 4. explain takes a rule's name ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["psu-transient-headroom-too-low", "PWR002", "pwr002", "PSU_Transient_Headroom_Too_Low"]
)
def test_explain_takes_a_code_or_a_name(run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("explain", name)
    assert result.exit_code == 0
    assert result.out.startswith("# PWR002: psu-transient-headroom-too-low\n")


@pytest.mark.parametrize("name", ["psu-transient-headroom", "PWR02"])
def test_explain_suggests_the_nearest_code_and_name(run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("explain", name)
    assert result.exit_code == 2
    assert result.err.strip() == (
        f"rigcheck explain: no rule {name!r}; did you mean 'PWR002' (psu-transient-headroom-too-low)? "
        "(rigcheck rules lists them)"
    )


# -- 5. docs/specs.md against the models ---------------------------------------------------------------------


def test_the_field_reference_of_specs_md_is_generated_from_the_models() -> None:
    from rigcheck.core.spec.field_docs import with_reference

    from .conftest import REPO

    text = (REPO / "docs" / "specs.md").read_text(encoding="utf-8")
    assert text == with_reference(text), "run: python -m rigcheck.core.spec.field_docs docs/specs.md"


def test_every_model_field_is_in_specs_md() -> None:
    from rigcheck.core.spec.field_docs import field_rows

    from .conftest import REPO

    text = (REPO / "docs" / "specs.md").read_text(encoding="utf-8")
    paths = [row.path for model in (Rig, Workload) for row in field_rows(model)]
    assert len(paths) > 250
    missing = [path for path in paths if f"| `{path}` |" not in text]
    assert missing == []
    for path in (
        "nodes[].psu[].connectors",
        "nodes[].gpus[].slots",
        "nodes[].gpus[].slot_gap",
        "nodes[].max_power_w",
        "runs_on",
        "labels",
        "site.rack_power_limit_kw",
    ):
        assert f"| `{path}` |" in text, path
