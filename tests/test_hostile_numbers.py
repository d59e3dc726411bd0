"""Hostile numbers in a pull request (issue 15): huge integers, ``.inf``/``.nan``, absurd parallel degrees,
zero rates and broken ``hf_config`` JSON are one-line SPEC errors naming file, line and field, never
a traceback, an internal error or a non-finite number in the output."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import pytest

from .conftest import MINIMAL_RIG, MINIMAL_WORKLOAD, SPECS

BIG = "9" * 310  # past the largest float (1.8e308)
HUGE = "9" * 5_000  # past Python's 4,300-digit limit on int(str)

HOME = str(SPECS / "rigs" / "home-2x3090.yaml")
DESKTOP = str(SPECS / "rigs" / "rtx4090-desktop.yaml")
GPT = str(SPECS / "workloads" / "gpt-125m-pretrain.yaml")

RIG = MINIMAL_RIG + textwrap.indent(
    "psu: {watts: 1200}\nstorage:\n  - {name: data, kind: nvme, read_mb_s: 7000, write_mb_s: 5000}\n"
    "network:\n  - {kind: ethernet, gbps: 10}\n",
    "    ",
)

#: (field, text it replaces in RIG, pointer)
RIG_QUANTITIES = [
    ("watts", "watts: 1200", "/nodes/0/psu/watts"),
    ("memory_gib", "memory_gib: 64", "/nodes/0/memory_gib"),
    ("read_mb_s", "read_mb_s: 7000", "/nodes/0/storage/0/read_mb_s"),
    ("gbps", "gbps: 10", "/nodes/0/network/0/gbps"),
    ("count", "count: 2", "/nodes/0/gpus/count"),
]


def _rig(field: str, value: str) -> str:
    old = next(text for name, text, _ in RIG_QUANTITIES if name == field)
    assert old in RIG
    return RIG.replace(old, f"{old.split(':')[0]}: {value}")


def _pointer(field: str) -> str:
    return next(pointer for name, _, pointer in RIG_QUANTITIES if name == field)


def _one_spec_error(text: str, path: str, pointer: str) -> str:
    """The single error line of ``text`` (stdout or stderr): at ``path``, naming ``pointer``, short."""
    assert "internal error" not in text and "Traceback" not in text, text
    lines = [line for line in text.splitlines() if ": error:" in line]
    assert len(lines) == 1, text
    [line] = lines
    assert re.match(rf"^{re.escape(path)}:\d+:\d+: error: {re.escape(pointer)}: .+ \[SPEC010\]$", line), line
    assert len(line) < len(path) + 200, line  # the digits are not echoed back
    return line


def _finite_json(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in the JSON output")

    return json.loads(text, parse_constant=refuse)


# -- huge integers and non-finite values in quantity fields ------------------------------------------


@pytest.mark.parametrize("value", [BIG, HUGE, f"-{BIG}"], ids=["310-digits", "5000-digits", "negative-310"])
@pytest.mark.parametrize("field", [name for name, _, _ in RIG_QUANTITIES])
def test_huge_integer_is_a_spec_error_in_check_validate_estimate(run_cli, write_spec, field, value) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(_rig(field, value), "rig.yaml")
    workload = write_spec(MINIMAL_WORKLOAD, "workload.yaml")
    for args, stream in (
        (("check", rig), "err"),
        (("check", rig, workload), "err"),
        (("validate", rig), "out"),
        (("estimate", "--rig", rig, workload, "-f", "json"), "err"),
    ):
        result = run_cli(*args)
        assert result.exit_code == 2, (args, result.err)
        line = _one_spec_error(getattr(result, stream), rig, _pointer(field))
        bound = r"must be (at most|at least|greater than) [\d,]+|5000-digit integer is not a quantity"
        assert re.search(bound, line), line


@pytest.mark.parametrize("value", [BIG, HUGE], ids=["310-digits", "5000-digits"])
def test_huge_integer_in_lint_is_a_finding_and_sarif_is_written(run_cli, write_spec, tmp_path, value) -> None:  # type: ignore[no-untyped-def]
    write_spec(_rig("watts", value), "rig.yaml")
    write_spec(MINIMAL_WORKLOAD + "runs_on: [rig.yaml]\n", "workload.yaml")
    write_spec(HOME_TEXT.replace("name: home-2x3090", "name: other"), "other.yaml")
    sarif = tmp_path / "out" / "report.sarif"
    sarif.parent.mkdir()
    result = run_cli("lint", str(tmp_path), "-f", "sarif", "-o", str(sarif))
    assert result.exit_code == 1, result.err
    assert "internal error" not in result.err
    document = _finite_json(sarif.read_text(encoding="utf-8"))
    results = document["runs"][0]["results"]  # type: ignore[index]
    [spec] = [r for r in results if r["ruleId"] == "SPEC010"]
    assert spec["properties"]["pointer"] == "/nodes/0/psu/watts"
    assert spec["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("rig.yaml")
    assert spec["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    expected = "at most 100,000" if value is BIG else "a 5000-digit integer is not a quantity"
    assert expected in spec["message"]["text"]
    assert len(spec["message"]["text"]) < 300
    # the other rig is still checked
    report = run_cli("lint", str(tmp_path), "-f", "json").json()
    assert "rig other" in [run["subject"] for run in report["runs"]]  # type: ignore[index]


HOME_TEXT = Path(HOME).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("watts", ".inf", "finite"),
        ("watts", "-.inf", "finite"),
        ("watts", ".nan", "finite"),
        ("watts", "1e400", "finite"),
        ("watts", '"1e400 W"', "at most 100,000 W"),
        ("watts", f'"{BIG} W"', "at most"),
        ("memory_gib", '"1e300 PiB"', "at most"),
        ("memory_gib", "2e6", "at most 1,048,576"),
        ("watts", "100001", "at most 100,000"),
        ("count", "1025", "at most 1,024"),
        ("count", ".nan", "finite"),
        ("count", "1e300", "at most 1,024"),
        ("gbps", "0", "greater than 0"),
    ],
)
def test_out_of_range_and_non_finite_values(run_cli, write_spec, field, value, words) -> None:  # type: ignore[no-untyped-def]
    rig = write_spec(_rig(field, value), "rig.yaml")
    result = run_cli("validate", rig)
    assert result.exit_code == 2
    line = _one_spec_error(result.out, rig, _pointer(field))
    assert words in line, line


def test_every_number_field_has_an_upper_bound() -> None:
    """Each numeric field of both schemas is finite and bounded (a maximum, or a short enum)."""
    from rigcheck.core.spec.schemas import schema

    unbounded: list[str] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            bounded = {"maximum", "exclusiveMaximum", "enum", "const"} & set(node)
            if node.get("type") in ("number", "integer") and not bounded:
                unbounded.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    for which in ("rig", "workload"):
        walk(schema(which), which)
    assert unbounded == []


# -- parallelism -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e300", "1" + "0" * 30, "1000001"])
def test_absurd_parallel_degree_is_a_spec_error(run_cli, write_spec, value) -> None:  # type: ignore[no-untyped-def]
    workload = write_spec(MINIMAL_WORKLOAD + f"parallelism: {{dp: {value}}}\n", "workload.yaml")
    for args in (("check", HOME, workload), ("estimate", workload, "-f", "json")):
        result = run_cli(*args)
        assert result.exit_code == 2, (args, result.out[-300:])
        line = _one_spec_error(result.err, workload, "/parallelism/dp")
        assert "at most 1,000,000" in line, line


def test_largest_parallel_degrees_give_finite_json(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    text = MINIMAL_WORKLOAD + "parallelism: {dp: 1000000, tp: 1000000, pp: 1000000, cp: 1000000}\n"
    text += "data: {tokens: 1.0e18, bytes_per_token: 4}\nrun: {hours: 1000000, checkpoint_interval_min: 1}\n"
    workload = write_spec(text, "workload.yaml")
    for rig in (HOME, DESKTOP):
        result = run_cli("estimate", "--rig", rig, workload, "-f", "json")
        assert result.exit_code == 0, result.err
        _finite_json(result.out)
        result = run_cli("check", rig, workload, "-f", "json")
        assert result.exit_code in (0, 1), result.err
        report = _finite_json(result.out)
        assert [f for f in report["findings"] if f["code"] == "ENGINE001"] == []  # type: ignore[index]


def test_estimate_refuses_a_non_finite_result() -> None:
    from rigcheck.core.engine.errors import RigcheckError
    from rigcheck.core.report.estimate_report import ensure_finite

    assert ensure_finite({"a": [1.0, {"b": 2}]}) == {"a": [1.0, {"b": 2}]}
    with pytest.raises(RigcheckError, match=r"/speed/tokens/1"):
        ensure_finite({"speed": {"tokens": [1.0, math.inf]}})


# -- zero rates --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    [
        "read_mb_s",
        "write_mb_s",
        "random_read_iops",
        "random_write_iops",
        "provisioned_iops",
        "provisioned_mb_s",
    ],
)
def test_zero_rate_is_a_spec_error(run_cli, write_spec, field) -> None:  # type: ignore[no-untyped-def]
    text = Path(DESKTOP).read_text(encoding="utf-8")
    device = "read_mb_s: 7450, write_mb_s: 6900, random_read_iops: 1400000"
    assert device in text
    rates = re.sub(rf"\b{field}: \d+", f"{field}: 0", device) if field in device else f"{device}, {field}: 0"
    rig = write_spec(text.replace(device, rates), "rig.yaml")
    result = run_cli("check", rig, GPT)
    assert result.exit_code == 2, result.out[-500:]
    line = _one_spec_error(result.err, rig, f"/nodes/0/storage/0/{field}")
    assert "greater than 0" in line


def test_zero_derived_rate_does_not_divide_by_zero(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    """A pd-ssd volume without its size: its per-GiB rates are unknown, not 0 MB/s."""
    text = re.sub(
        r"\{name: data, kind: nvme[^}]*\}",
        "{name: data, kind: cloud-volume, volume_type: pd-ssd}",
        Path(DESKTOP).read_text(encoding="utf-8"),
    )
    rig = write_spec(text, "rig.yaml")
    report = run_cli("check", rig, GPT, "-f", "json").json()
    assert [f["message"] for f in report["findings"] if f["code"] == "ENGINE001"] == []  # type: ignore[index]
    [sto001] = [f for f in report["findings"] if f["code"] == "STO001"]  # type: ignore[index]
    assert sto001["severity"] == "skip"


def test_checkers_guard_a_zero_rate(rigcheck_run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Rates the schema cannot see (defaults, derived figures) are guarded in the checkers too."""
    from dataclasses import replace

    import rigcheck.core.engine.workload_on_rig as checkpoints
    import rigcheck.plugins.storage.data_loading as data_loading

    real = data_loading.device_rates

    def zero(*args, **kwargs):  # type: ignore[no-untyped-def]
        return replace(real(*args, **kwargs), read_mb_s=0.0, write_mb_s=0.0, random_read_iops=0.0)

    monkeypatch.setattr(data_loading, "device_rates", zero)
    monkeypatch.setattr(checkpoints, "device_rates", zero)
    result = rigcheck_run(Path(DESKTOP).read_text(encoding="utf-8"), Path(GPT).read_text(encoding="utf-8"))
    result.assert_no("ENGINE001")
    for code in ("STO001", "STO002", "STO004", "REL003"):
        assert result.one(code).severity.value in ("fail", "skip"), result.describe()


# -- hf_config JSON ----------------------------------------------------------------------------------

GOOD_CONFIG = {
    "model_type": "gpt2",
    "n_layer": 12,
    "n_embd": 768,
    "n_head": 12,
    "vocab_size": 50257,
    "n_positions": 1024,
}


def _bad_configs() -> list[tuple[str, str, str]]:
    good = json.dumps(GOOD_CONFIG)
    return [
        ("deep", "[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ("deep-object", '{"a":' * 100_000 + "1" + "}" * 100_000, "nested deeper than"),
        ("nan", good.replace('"n_layer": 12', '"n_layer": NaN'), "NaN"),
        ("infinity", good.replace('"n_embd": 768', '"n_embd": -Infinity'), "-Infinity"),
        ("string", good.replace('"n_layer": 12', '"n_layer": "twelve"'), "'n_layer'"),
        ("float", good.replace('"n_head": 12', '"n_head": 12.5'), "'n_head'"),
        ("bool", good.replace('"n_head": 12', '"n_head": true'), "'n_head'"),
        ("huge", good.replace('"n_embd": 768', f'"n_embd": {HUGE}'), "'n_embd'"),
        ("big", good.replace('"n_embd": 768', f'"n_embd": {BIG}'), "'n_embd'"),
        ("overflow", good.replace('"n_embd": 768', '"n_embd": 1e400'), "'n_embd'"),
        ("zero", good.replace('"n_head": 12', '"n_head": 0'), "'n_head'"),
        ("list", "[1, 2, 3]", "a JSON object"),
        ("experts", good.replace("}", ', "num_local_experts": "eight"}'), "'num_local_experts'"),
    ]


@pytest.mark.parametrize(
    ("name", "config", "words"), _bad_configs(), ids=[case[0] for case in _bad_configs()]
)
def test_bad_hf_config_is_an_error_on_that_workload_only(
    run_cli, write_spec, tmp_path, name, config, words
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bad.json").write_text(config, encoding="utf-8")
    (tmp_path / "good.json").write_text(json.dumps(GOOD_CONFIG), encoding="utf-8")
    workload = (
        MINIMAL_WORKLOAD.replace("{preset: gpt2-124m}", "{hf_config: NAME.json}") + "runs_on: [rig.yaml]\n"
    )
    write_spec(MINIMAL_RIG, "rig.yaml")
    bad = write_spec(workload.replace("NAME", "bad").replace("test-workload", "bad"), "bad.yaml")
    write_spec(workload.replace("NAME", "good").replace("test-workload", "good"), "good.yaml")

    result = run_cli("check", str(tmp_path / "rig.yaml"), bad)
    assert result.exit_code == 2, result.out[-500:]
    line = _one_spec_error(result.err, bad, "/model/hf_config")
    assert "bad.json" in line and words in line, line

    result = run_cli("lint", str(tmp_path), "-f", "json")
    assert result.exit_code == 1, result.err
    report = _finite_json(result.out)
    [finding] = [f for f in report["findings"] if f["code"] == "SPEC010"]  # type: ignore[index]
    assert finding["location"]["file"].endswith("bad.yaml")
    assert finding["location"]["pointer"] == "/model/hf_config"
    assert "bad.json" in finding["message"] and words in finding["message"]
    subjects = [run["subject"] for run in report["runs"]]  # type: ignore[index]
    assert "test-rig + good" in subjects


def test_good_hf_config_still_reads(run_cli, write_spec, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.json").write_text(json.dumps(GOOD_CONFIG), encoding="utf-8")
    workload = write_spec(MINIMAL_WORKLOAD.replace("{preset: gpt2-124m}", "{hf_config: config.json}"))
    result = run_cli("estimate", workload, "-f", "json")
    assert result.exit_code == 0, result.err
    model = _finite_json(result.out)["model"]  # type: ignore[index]
    assert (model["layers"], model["hidden"], model["vocab"]) == (12, 768, 50257)
