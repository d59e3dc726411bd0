"""Issue 15, "A pull request is hostile input": probe files are untrusted, so ``rigcheck merge`` must

* catch one hostname reported by more than one probe file (DRIFT006), which also let two different
  machines pass DRIFT001 as one, and
* write every string so that rigcheck's YAML 1.2 loader reads back exactly the value merged
  (``1e999`` is a float to YAML 1.2; PyYAML's YAML 1.1 dumper left it unquoted), with control
  characters escaped and each value on its own line.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from rigcheck.core.lint.merge import merge_probes
from rigcheck.core.spec.documents import load_spec
from rigcheck.core.spec.loader import load_yaml_file, load_yaml_text

HOSTILE = [
    "1e999",
    "-1e999",
    "1e9",
    "0x1F",
    "0o17",
    "0b101",
    ".inf",
    "-.Inf",
    ".nan",
    "null",
    "Null",
    "~",
    "",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "False",
    "0755",
    "007",
    "0",
    "1_000",
    "12",
    "+1",
    "1.5",
    ".5",
    "1:30",
    "2026-11-29",
    "<<",
    "=",
    "a: b",
    "a:",
    ":",
    "#x",
    "a #b",
    "\n::error::x",
    "x\n::error::y",
    "::warning file=x::y",
    "\x1b[31m",
    " lead",
    "trail ",
    "  ",
    "- item",
    "-",
    "? q",
    "?",
    "!tag",
    "!!python/object:os.system",
    "&anchor",
    "*alias",
    "| block",
    "> fold",
    "%YAML 1.1",
    "@at",
    "`tick`",
    "'single'",
    '"double"',
    "[flow]",
    "{flow: 1}",
    "a, b",
    "x\ty",
    "\r\n",
    "line1\nline2\n",
    "\x00nul",
    "\x07bell\x7f",
    "\x85",
    "\u2028\u2029",
    "\ufeffbom",
    "\u202eevil\u202c",
    "zero\u200bwidth",
    "nb\xa0space",
    "café Ünïcødé 名前",
    "🚀 rocket",
    "\\back\\slash",
    "---",
    "...",
    "http://example.com/a?b=c#frag",
    "NVIDIA H100 80GB HBM3",
    "x" * 300,
]

#: What YAML does not carry raw in a quoted string: non-printable characters, and line breaks (NEL, U+2028,
#: U+2029) that a reader folds into a space.
_UNPRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def _yaml_json(data: Any) -> str:
    """JSON (which YAML 1.2 reads) with the characters YAML does not allow raw written as escapes."""
    text = json.dumps(data, ensure_ascii=False, indent=1)
    return _UNPRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def probe_file(
    folder: Path,
    file: str,
    host: str,
    *,
    gpus: int = 8,
    node_name: str | None = None,
    driver: str = "550.54.15",
    torch: str = "2.3.0+cu121",
    probed_at: str = "2026-11-29T10:00:00+00:00",
    memory_gib: float = 2015.6,
) -> str:
    spec = {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": "probe",
        "probed_at": probed_at,
        "probe": {
            "probed_at": probed_at,
            "hostname": host,
            "driver_version": driver,
            "cuda_driver_version": "12.4",
            "gpus": [{"index": i, "name": host, "vbios": driver, "ecc_current": True} for i in range(gpus)],
        },
        "nodes": [
            {
                "name": host if node_name is None else node_name,
                "gpus": {"model": "NVIDIA H100 80GB HBM3", "count": gpus},
                "memory_gib": memory_gib,
                "software": {"os": "linux", "driver": driver, "torch": torch},
            }
        ],
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file
    path.write_text(_yaml_json(spec), encoding="utf-8")
    return str(path)


def _merge(run_cli, files: list[str], out: Path) -> tuple[int, list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    result = run_cli("merge", *files, "-o", str(out), "--format", "json")
    assert result.exit_code in (0, 1), result.err
    return result.exit_code, result.json()["findings"]


# -- problem 1: one hostname, two probe files ---------------------------------------------------------------


def test_one_hostname_with_different_gpus_is_drift(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [probe_file(tmp_path, "a.yaml", "node00"), probe_file(tmp_path, "b.yaml", "node00", gpus=7)]
    code, findings = _merge(run_cli, files, tmp_path / "cluster.yaml")
    assert code == 1
    failed = {f["code"]: f for f in findings if f["severity"] == "fail"}
    assert set(failed) == {"DRIFT001", "DRIFT006"}
    repeated = failed["DRIFT006"]
    assert (
        repeated["location"]["file"].endswith("b.yaml")
        and repeated["location"]["pointer"] == "/probe/hostname"
    )
    assert "a.yaml" in repeated["message"] and "different" in repeated["message"]
    assert repeated["evidence"]["files"] == files
    assert failed["DRIFT001"]["location"]["file"].endswith(("a.yaml", "b.yaml"))


def test_one_hostname_twice_with_the_same_hardware_is_drift(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The same probe file given twice (overlapping globs) would count the node twice."""
    files = [probe_file(tmp_path, "a.yaml", "node00"), probe_file(tmp_path / "copy", "a.yaml", "node00")]
    files.append(probe_file(tmp_path, "c.yaml", "node01"))
    code, findings = _merge(run_cli, files, tmp_path / "cluster.yaml")
    assert code == 1
    failed = [f for f in findings if f["severity"] == "fail"]
    assert [f["code"] for f in failed] == ["DRIFT006"]
    assert failed[0]["location"]["file"] == files[1] and "2 probe files" in failed[0]["message"]


def test_hostnames_are_compared_as_dns_names(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [probe_file(tmp_path, "a.yaml", "node00.pod-a"), probe_file(tmp_path, "b.yaml", "NODE00.Pod-A.")]
    code, findings = _merge(run_cli, files, tmp_path / "cluster.yaml")
    assert code == 1 and [f["code"] for f in findings if f["severity"] == "fail"] == ["DRIFT006"]


def test_unique_hostnames_pass(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [probe_file(tmp_path, f"n{i}.yaml", f"node{i:02d}") for i in range(3)]
    code, findings = _merge(run_cli, files, tmp_path / "cluster.yaml")
    assert code == 0
    (unique,) = [f for f in findings if f["code"] == "DRIFT006"]
    assert unique["severity"] == "pass" and "3 probe files" in unique["message"]


# -- problem 2: what merge writes is read back as written ----------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE, ids=[ascii(text)[:40] for text in HOSTILE])
def test_hostile_strings_round_trip_and_validate(text: str, tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [
        probe_file(tmp_path, "a.yaml", text, node_name=text, driver=text, torch=text, probed_at=text),
        probe_file(tmp_path, "b.yaml", "node-b", node_name=text, driver=text, torch=text, memory_gib=1007.8),
    ]
    out = tmp_path / "cluster.yaml"
    _merge(run_cli, files, out)
    merged, _ = merge_probes([load_spec(path, kind="Rig") for path in files])
    written = load_yaml_file(str(out))
    assert written.data == merged and written.traps == []
    assert [group["name"] for group in written.data["nodes"]] == [text, text]
    assert written.data["nodes"][0]["software"]["driver"] == text
    assert all(not line.lstrip().startswith("::") for line in out.read_text(encoding="utf-8").splitlines())
    result = run_cli("validate", str(out), "--format", "json")
    assert result.exit_code == 0, result.out
    (validated,) = result.json()
    assert validated["valid"] and validated["findings"] == []


def test_the_drift_report_does_not_pass_control_characters_on(tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A hostname is shown escaped in messages: no terminal escapes, no line that starts a CI workflow command."""
    files = [probe_file(tmp_path, "a.yaml", "evil\x1b[31m\n::error::x", gpus=7)]
    files += [probe_file(tmp_path, f"n{i}.yaml", f"node{i:02d}") for i in range(2)]
    result = run_cli("merge", *files, "-o", str(tmp_path / "cluster.yaml"), "--color", "never")
    assert result.exit_code == 1
    assert "\x1b" not in result.out and not any(
        line.lstrip().startswith("::") for line in result.out.splitlines()
    )
    assert "evil\\x1b[31m\\n::error::x" in result.out


# -- the writer on its own -----------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and the type kept (1 is not 1.0, True is not 1)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_writer_round_trips_every_kind_of_value() -> None:
    from rigcheck.core.spec.yaml_writer import dump_yaml

    data: dict[str, Any] = {text: text for text in HOSTILE}
    data["values"] = [1, -7, 0, 10**30, 1.5, -0.25, 1e300, 1e-7, 5e20, math.inf, -math.inf, math.nan]
    data["flags"] = [True, False, None, [], {}, "", [[1, [2]], {"a": [3]}], {"x": {"y": {"z": "1e999"}}}]
    data["x" * 2000] = {"long key": ["x" * 2000]}
    text = dump_yaml(data)
    loaded = load_yaml_text(text)
    assert _same(loaded.data, data) and loaded.traps == []
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert all(ch == "\n" or ch.isprintable() for ch in text)


def test_writer_reads_back_with_a_yaml_11_reader_too() -> None:
    """Numbers keep a '.' so that PyYAML reads them as floats as well; strings that YAML 1.1 reads as
    something else (1:30, 2026-11-29, 0b101, yes) are quoted too."""
    import yaml

    from rigcheck.core.spec.yaml_writer import dump_yaml

    data = {"floats": [1e20, 2.5e-5, 3.0], "strings": HOSTILE}
    assert _same(yaml.safe_load(dump_yaml(data)), data)


def test_writer_refuses_what_yaml_cannot_carry() -> None:
    from rigcheck.core.spec.yaml_writer import dump_yaml

    for bad in ({1: "int key"}, {"a": {1, 2}}, {"a": object()}, {"a": "\ud800"}):
        with pytest.raises((TypeError, ValueError)):
            dump_yaml(bad)


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

_SCALARS = (
    st.text(max_size=24)
    | st.integers()
    | st.floats(allow_nan=False)
    | st.booleans()
    | st.none()
    | st.sampled_from(HOSTILE)
)
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


@hypothesis.seed(15)
@hypothesis.settings(max_examples=150, deadline=None, derandomize=True, database=None)
@hypothesis.given(st.dictionaries(st.text(max_size=12) | st.sampled_from(HOSTILE), _DATA, max_size=5))
def test_writer_round_trips_generated_data(data: dict[str, Any]) -> None:
    from rigcheck.core.spec.yaml_writer import dump_yaml

    loaded = load_yaml_text(dump_yaml(data))
    assert _same(loaded.data, data) and loaded.traps == []
