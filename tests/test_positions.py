"""JSON pointers and their mapping onto the raw document."""

from __future__ import annotations

from rigcheck.core.positions import (
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
