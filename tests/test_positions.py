"""JSON pointers and their mapping onto the raw document."""

from __future__ import annotations

from rigcheck.core.spec.positions import (
    escape_token,
    parent_pointer,
    pointer_for_data_path,
    pointer_from_path,
    split_pointer,
)


def test_escape_follows_rfc_6901() -> None:
    assert escape_token("a/b~c") == "a~1b~0c"
    assert split_pointer("/env/a~1b~0c") == ["env", "a/b~c"]
    assert pointer_from_path(("nodes", 0, "gpus")) == "/nodes/0/gpus"
    assert parent_pointer("/nodes/0/gpus") == "/nodes/0"
    assert parent_pointer("") == ""


def test_index_of_a_one_or_many_field_written_as_a_mapping_is_dropped() -> None:
    data = {"nodes": [{"gpus": {"model": "RTX 3090"}, "psu": [{"watts": 850}, {"watts": 1000}]}]}
    assert pointer_for_data_path(data, ("nodes", 0, "gpus", 0, "model")) == "/nodes/0/gpus/model"
    assert pointer_for_data_path(data, ("nodes", 0, "psu", 1, "watts")) == "/nodes/0/psu/1/watts"
    assert pointer_for_data_path(data, ("nodes", 0, "missing", "deeper")) == "/nodes/0/missing/deeper"


def test_a_spec_document_locates_a_pointer_once_and_as_the_source_map_does() -> None:
    """SpecDocument.locate keeps each location it makes (twin nodes and checkers ask again); what it
    returns is what the source map gives: the key's line, or the nearest written ancestor's."""
    from rigcheck.core.spec.documents import parse_spec

    text = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n"
        "  - name: a\n    gpus: {model: RTX 4090, count: 1}\n    memory_gib: 64\n"
    )
    doc = parse_spec(text, "rig.yaml")
    first = doc.locate("/nodes/0/memory_gib")
    assert (first.file, first.line, first.column, first.pointer) == ("rig.yaml", 7, 5, "/nodes/0/memory_gib")
    assert doc.locate("/nodes/0/memory_gib") is first
    absent = doc.locate("/nodes/0/psu/watts")  # not written: the node's own position, its pointer kept
    assert (absent.line, absent.column, absent.pointer) == (5, 5, "/nodes/0/psu/watts")
    again = parse_spec(text, "rig.yaml")  # another document: its own locations
    assert again.locate("/nodes/0/memory_gib") == first
    assert again.locate("/nodes/0/memory_gib") is not first
