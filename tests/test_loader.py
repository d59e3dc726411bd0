"""The YAML loader: YAML 1.2 scalars, positions, traps, and what it refuses."""

from __future__ import annotations

import hashlib
import math
import time

import pytest

from rigcheck.core.engine.errors import SpecError
from rigcheck.core.spec.loader import load_yaml_file, load_yaml_text, resolve_plain_scalar
from rigcheck.core.spec.positions import Mark


def load(text: str):  # type: ignore[no-untyped-def]
    return load_yaml_text(text, "t.yaml")


def only_problem(excinfo: pytest.ExceptionInfo[SpecError]):  # type: ignore[no-untyped-def]
    assert len(excinfo.value.problems) == 1
    return excinfo.value.problems[0]


class TestScalars:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("1e9", 1e9),  # a string to PyYAML's YAML 1.1 rules
            ("5.0e8", 5.0e8),  # idem: the spec example's tokens: 5.0e8
            ("1.2e8", 1.2e8),
            ("-3.5", -3.5),
            (".5", 0.5),
            ("42", 42),
            ("0x1F", 31),
            ("0o17", 15),
            ("1_000_000", 1_000_000),
            ("true", True),
            ("False", False),
            ("null", None),
            ("~", None),
            ("yes", "yes"),  # a string under YAML 1.2 (and a SPEC002 warning)
            ("1:30", "1:30"),  # sexagesimal 90 in YAML 1.1, text in 1.2
            ("2026-11-29", "2026-11-29"),  # no implicit timestamps
            ("12.4", 12.4),
            ("v1", "v1"),
        ],
    )
    def test_plain_scalars_follow_yaml_12(self, text: str, expected: object) -> None:
        value = load(f"a: {text}\n").data["a"]
        assert value == expected
        assert type(value) is type(expected)

    def test_quoted_scalars_stay_strings(self) -> None:
        data = load("a: '1e9'\nb: \"true\"\nc: !!str 42\n").data
        assert data == {"a": "1e9", "b": "true", "c": "42"}

    def test_special_floats(self) -> None:
        data = load("a: .inf\nb: -.Inf\nc: .nan\n").data
        assert data["a"] == math.inf and data["b"] == -math.inf and math.isnan(data["c"])

    def test_resolver_marks_octal_looking_numbers(self) -> None:
        assert resolve_plain_scalar("0755").endswith("octal-like")
        assert resolve_plain_scalar("0") == "tag:yaml.org,2002:int"


class TestPositions:
    TEXT = (
        "# comment\nname: x\nnodes:\n  - name: a\n    memory_gib: 64\n    gpus: {model: RTX 3090, count: 2}\n"
    )

    def test_keys_and_values_have_1_based_lines_and_columns(self) -> None:
        source = load(self.TEXT).source_map
        assert source.key_mark("/name") == Mark(2, 1)
        assert source.value_mark("/name") == Mark(2, 7)
        assert source.key_mark("/nodes/0/memory_gib") == Mark(5, 5)
        assert source.value_mark("/nodes/0/memory_gib") == Mark(5, 17)
        assert source.key_mark("/nodes/0/gpus/count") == Mark(6, 29)
        assert source.value_mark("/nodes/0") == Mark(4, 5)

    def test_missing_field_resolves_to_nearest_ancestor(self) -> None:
        source = load(self.TEXT).source_map
        assert source.locate("/nodes/0/gpus/length_mm") == ("/nodes/0/gpus", Mark(6, 5))
        assert source.locate("/nowhere") == ("", Mark(2, 1))

    def test_merge_keys_point_at_the_anchor(self) -> None:
        doc = load("base: &b {memory_gib: 64, cpu: {cores: 8}}\nnode:\n  <<: *b\n  name: n\n")
        assert doc.data["node"] == {"name": "n", "memory_gib": 64, "cpu": {"cores": 8}}
        assert doc.source_map.key_mark("/node/memory_gib") == Mark(1, 11)
        assert doc.source_map.key_mark("/node/cpu/cores") == Mark(1, 33)

    def test_written_keys_win_over_merged_ones(self) -> None:
        assert load("b: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n").data["c"] == {"x": 3, "y": 2}


class TestTraps:
    def test_duplicate_key_is_reported_at_the_second_key_and_last_value_kept(self) -> None:
        doc = load("name: a\nmemory_gib: 128\nother: 1\nmemory_gib: 64\n")
        assert doc.data["memory_gib"] == 64
        [trap] = doc.traps
        assert trap.code == "SPEC001"
        assert trap.pointer == "/memory_gib"
        assert trap.mark == Mark(4, 1)
        assert "lines 2 and 4" in trap.message

    @pytest.mark.parametrize(
        ("word", "meant"), [("yes", "true"), ("No", "false"), ("ON", "true"), ("off", "false")]
    )
    def test_yaml11_booleans_warn_and_name_the_spelling(self, word: str, meant: str) -> None:
        doc = load(f"ecc: {word}\n")
        assert doc.data["ecc"] == word
        [trap] = doc.traps
        assert trap.code == "SPEC002"
        assert f"write {meant}" in trap.fix
        assert trap.mark == Mark(1, 6)

    def test_yaml11_boolean_keys_are_reported_too(self) -> None:
        [trap] = load("on: push\n").traps
        assert trap.code == "SPEC002" and trap.pointer == "/on"

    def test_octal_looking_number(self) -> None:
        doc = load("port: 0755\n")
        assert doc.data["port"] == 755
        [trap] = doc.traps
        assert trap.code == "SPEC003"
        assert trap.evidence == {"value": "0755", "read_as": 755, "yaml11_reading": 493}

    def test_leading_zero_that_reads_the_same_is_not_a_trap(self) -> None:
        assert load("a: 007\n").traps == []

    def test_non_octal_leading_zero_is_text_to_yaml11(self) -> None:
        [trap] = load("a: 08\n").traps
        assert trap.evidence["yaml11_reading"] is None and "a string" in trap.message


class TestRefusals:
    def test_python_tag_is_refused_with_its_position(self) -> None:
        with pytest.raises(SpecError) as excinfo:
            load("name: ok\nx: !!python/object/apply:os.system ['echo hi']\n")
        problem = only_problem(excinfo)
        assert problem.code == "SPEC004"
        assert (problem.line, problem.column) == (2, 4)
        assert "!!python/object/apply:os.system" in problem.message

    @pytest.mark.parametrize("tag", ["!custom", "!!binary", "!!set"])
    def test_other_tags_are_refused(self, tag: str) -> None:
        with pytest.raises(SpecError) as excinfo:
            load(f"x: {tag} abc\n")
        assert only_problem(excinfo).code == "SPEC004"

    def test_billion_laughs_is_refused_quickly(self) -> None:
        lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for level in range(1, 9):
            previous, name = chr(96 + level), chr(97 + level)
            lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
        started = time.perf_counter()
        with pytest.raises(SpecError) as excinfo:
            load("\n".join(lines) + "\n")
        elapsed = time.perf_counter() - started
        problem = only_problem(excinfo)
        assert problem.code == "SPEC005"
        assert "alias bomb" in problem.message
        assert elapsed < 0.5  # measured at about 0.1 ms; the bomb would be 9**9 nodes

    def test_reasonable_reuse_of_anchors_is_allowed(self) -> None:
        text = "base: &b {model: RTX 3090, count: 8, cooler: blower}\nnodes:\n" + "".join(
            f"  - {{name: n{i}, gpus: *b}}\n" for i in range(500)
        )
        assert len(load(text).data["nodes"]) == 500

    def test_recursive_alias_is_refused(self) -> None:
        with pytest.raises(SpecError) as excinfo:
            load("a: &a [1, *a]\n")
        assert only_problem(excinfo).code == "SPEC005"

    def test_syntax_error_names_line_and_column(self) -> None:
        with pytest.raises(SpecError) as excinfo:
            load("name: a\nnodes:\n  - a: b: c\n")
        problem = only_problem(excinfo)
        assert problem.code == "SPEC012"
        assert problem.line == 3
        assert problem.message.startswith("not valid YAML")

    @pytest.mark.parametrize(
        ("text", "words"),
        [
            ("", "empty"),
            ("# only a comment\n", "empty"),
            ("- 1\n- 2\n", "found a list"),
            ("just text\n", "found a single scalar"),
            ("a: 1\n---\nb: 2\n", "several YAML documents"),
        ],
    )
    def test_not_a_spec(self, text: str, words: str) -> None:
        with pytest.raises(SpecError) as excinfo:
            load(text)
        problem = only_problem(excinfo)
        assert words in problem.message and problem.code == "SPEC012"

    @pytest.mark.parametrize("anchor", ["", "b: &x 1\n"])
    def test_deep_nesting_is_refused(self, anchor: str) -> None:
        """Without an anchor the builder refuses the depth; with one, the alias walk before it does."""
        with pytest.raises(SpecError) as excinfo:
            load(anchor + "a: " + "[" * 200 + "]" * 200 + "\n")
        problem = only_problem(excinfo)
        assert "deeper than 64" in problem.message and (problem.line, problem.column) == (
            1 + bool(anchor),
            3 + 65,
        )

    def test_binary_file(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        path = tmp_path / "x.yaml"
        path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00binary")
        with pytest.raises(SpecError) as excinfo:
            load_yaml_file(str(path))
        assert "binary" in only_problem(excinfo).message

    def test_non_utf8_file_names_the_byte_and_line(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        path = tmp_path / "x.yaml"
        path.write_bytes(b"name: a\ndescription: caf\xe9\n")
        with pytest.raises(SpecError) as excinfo:
            load_yaml_file(str(path))
        problem = only_problem(excinfo)
        assert "not UTF-8" in problem.message and "0xe9" in problem.message and problem.line == 2

    def test_huge_file_is_refused_before_reading(self, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        monkeypatch.setenv("RIGCHECK_MAX_SPEC_BYTES", "1000")
        path = tmp_path / "x.yaml"
        path.write_text("a: " + "x" * 2000 + "\n")
        with pytest.raises(SpecError) as excinfo:
            load_yaml_file(str(path))
        assert "limited to 1,000 bytes" in only_problem(excinfo).message

    def test_missing_file(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        with pytest.raises(SpecError) as excinfo:
            load_yaml_file(str(tmp_path / "nope.yaml"))
        assert "cannot read" in only_problem(excinfo).message

    def test_utf8_bom_and_sha256(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        path = tmp_path / "x.yaml"
        path.write_bytes(b"\xef\xbb\xbfname: a\n")
        doc = load_yaml_file(str(path))
        assert doc.data == {"name": "a"}
        assert (
            doc.sha256 == hashlib.sha256(b"\xef\xbb\xbfname: a\n").hexdigest()
        )  # of the bytes, BOM included
