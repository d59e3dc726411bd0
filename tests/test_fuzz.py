"""Robustness: random YAML, structurally valid specs with extreme values, hostile files, and 50
plugins of which some raise or hang. Whatever the input: no exception escapes, the exit code is
0, 1 or 2, and every error line names a file, line and column. Hypothesis runs a fixed number of
derandomised examples, so CI time is bounded and failures reproduce."""

from __future__ import annotations

import re
import time
import types
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rigcheck
from rigcheck.core.engine.findings import Severity

ERROR_LINE = re.compile(r"^[^:]+:\d+:\d+: error: .+ \[[A-Z]+\d{3}\]$")
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def check_file(run_cli, path: Path, *extra: str):  # type: ignore[no-untyped-def]
    result = run_cli("check", str(path), *extra, "--format", "json")
    assert result.exit_code in (0, 1, 2), result.err
    assert "internal error" not in result.err, result.err
    if result.exit_code == 2:
        lines = [line for line in result.err.splitlines() if line.strip()]
        assert lines and all(ERROR_LINE.match(line) for line in lines), result.err
    return result


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**40), 10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(
        ["NaN", "nan", ".inf", "-.inf", "1e30", "0x1F", "0755", "yes", "on", "~", "null", "", "- x"]
    ),
)
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@FUZZ
@given(text=st.text(max_size=400))
def test_random_text(run_cli, tmp_path, text: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    check_file(run_cli, path)


@FUZZ
@given(tree=trees)
def test_random_yaml_documents(run_cli, tmp_path, tree) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(tree), encoding="utf-8")
    check_file(run_cli, path)


extreme = st.one_of(
    st.integers(1, 100),  # ordinary values, so that most examples get past validation into the checkers
    st.floats(0.1, 5000),
    st.sampled_from(
        [
            0,
            -1,
            -(10**9),
            10**30,
            1e30,
            -1e30,
            1e-30,
            0.5,
            "NaN",
            "nan",
            "inf",
            "-inf",
            "lots",
            "",
            None,
            True,
            [],
            {},
            "1e400",
            2**63,
            "64 GiB",
            "-5 W",
            "1e30 kW",
        ]
    ),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)


def rig_spec(values: dict) -> dict:  # type: ignore[type-arg]
    return {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": "fuzz",
        "site": {"circuit": {"volts": values["volts"], "amps": values["amps"]}},
        "nodes": [
            {
                "name": "n",
                "count": values["count"],
                "gpus": {
                    "model": "RTX 4090",
                    "count": values["gpus"],
                    "power_limit_w": values["power"],
                    "memory_gib": values["memory"],
                },
                "cpu": {"cores": values["cores"], "tdp_w": values["power"]},
                "memory_gib": values["memory"],
                "psu": {"watts": values["watts"], "count": values["count"]},
                "storage": [{"kind": "nvme", "capacity_gb": values["memory"], "read_mb_s": values["watts"]}],
                "network": [{"kind": "infiniband", "gbps": values["watts"], "count": values["gpus"]}],
            }
        ],
    }


def workload_spec(values: dict) -> dict:  # type: ignore[type-arg]
    return {
        "apiVersion": "rigcheck/v1",
        "kind": "Workload",
        "name": "fuzzjob",
        "model": {"preset": "llama-2-7b"},
        "task": "full_finetune",
        "batch": {"micro": values["gpus"], "seq_len": values["cores"], "grad_accum": values["count"]},
        "parallelism": {"dp": values["count"], "tp": values["gpus"]},
        "data": {"tokens": values["memory"], "bytes_per_token": values["watts"]},
        "run": {"hours": values["power"], "checkpoint_interval_min": values["amps"]},
    }


FIELDS = ("volts", "amps", "count", "gpus", "power", "memory", "cores", "watts")


BASELINE = {
    "volts": 230,
    "amps": 16,
    "count": 2,
    "gpus": 4,
    "power": 300,
    "memory": 128,
    "cores": 2048,
    "watts": 1600,
}


@FUZZ
@given(changes=st.dictionaries(st.sampled_from(FIELDS), extreme, min_size=1, max_size=2))
def test_extreme_numbers_in_valid_structures(run_cli, tmp_path, changes) -> None:  # type: ignore[no-untyped-def]
    """One or two fields at a time take an extreme value, the others stay ordinary, so that most examples
    get through validation into the estimators and checkers."""
    values = {**BASELINE, **changes}
    rig, job = tmp_path / "rig.yaml", tmp_path / "job.yaml"
    rig.write_text(yaml.safe_dump(rig_spec(values)), encoding="utf-8")
    job.write_text(yaml.safe_dump(workload_spec(values)), encoding="utf-8")
    check_file(run_cli, rig, str(job))


def test_huge_lists_and_deep_nesting(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    many = {
        "apiVersion": "rigcheck/v1",
        "kind": "Rig",
        "name": "many",
        "nodes": [{"name": f"n{i}", "gpus": [{"model": "L40S"}] * 20} for i in range(300)],
    }
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(many), encoding="utf-8")
    assert check_file(run_cli, path).exit_code in (0, 1)
    deep = "apiVersion: rigcheck/v1\nkind: Rig\nname: deep\nlabels: " + "[" * 5000 + "]" * 5000 + "\n"
    path.write_text(deep, encoding="utf-8")
    assert check_file(run_cli, path).exit_code == 2


class TestHostileFiles:
    def one_line_error(self, run_cli, path: Path, code: str) -> str:  # type: ignore[no-untyped-def]
        result = check_file(run_cli, path)
        lines = result.err.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and lines[0].endswith(f"[{code}]"), result.err
        return lines[0]

    def test_billion_laughs(self, run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
        levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for index in range(1, 9):
            prev = chr(ord("a") + index - 1)
            here = chr(ord("a") + index)
            levels.append(
                f"{here}: &{here} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]"
            )
        path = tmp_path / "bomb.yaml"
        path.write_text(
            "apiVersion: rigcheck/v1\nkind: Rig\nname: x\n" + "\n".join(levels) + "\n", encoding="utf-8"
        )
        started = time.perf_counter()
        assert "alias bomb" in self.one_line_error(run_cli, path, "SPEC005")
        assert time.perf_counter() - started < 30  # a guard against hanging, not a speed target

    def test_100_mb_file(self, run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
        path = tmp_path / "huge.yaml"
        with open(path, "wb") as handle:
            handle.write(b"apiVersion: rigcheck/v1\nkind: Rig\nname: x\ncomment: '")
            handle.write(b"x" * (100 * 2**20))
            handle.write(b"'\n")
        assert "specs are limited to" in self.one_line_error(run_cli, path, "SPEC012")

    def test_binary_file(self, run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
        path = tmp_path / "binary.yaml"
        path.write_bytes(bytes(range(256)) * 64)
        self.one_line_error(run_cli, path, "SPEC012")

    def test_non_utf8(self, run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
        path = tmp_path / "latin1.yaml"
        path.write_bytes("apiVersion: rigcheck/v1\nkind: Rig\nname: café\n".encode("latin-1"))
        self.one_line_error(run_cli, path, "SPEC012")


def plugin(index: int, behaviour: str) -> types.ModuleType:
    module = types.ModuleType(f"load_plugin_{index:02d}")
    rule = rigcheck.Rule(
        code=f"LOAD{index:03d}",
        name=f"load-{index}",
        summary="A rule of a load-test plugin",
        severity="warn",
        docs=rigcheck.RuleDocs(
            what="w" * 30, why="w" * 30, example="w" * 30, fix="w" * 30, references=("x",)
        ),
    )

    class Probe(rigcheck.Checker):
        name = f"load.{index:02d}"
        rules = (rule,)
        timeout_s = 0.2

        def check(self, ctx):  # type: ignore[no-untyped-def]
            if behaviour == "raise":
                raise RuntimeError(f"plugin {index} broke")
            if behaviour == "hang":
                time.sleep(30)
            if behaviour == "garbage":
                yield {"not": "a finding"}
                return
            yield rule.passed(f"plugin {index} ran", location=ctx.rig_at(""))

    @rigcheck.hookimpl
    def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
        if behaviour == "register":
            raise ValueError(f"plugin {index} cannot register")
        register(Probe())

    module.rigcheck_checkers = rigcheck_checkers  # type: ignore[attr-defined]
    return module


def test_fifty_plugins_some_broken() -> None:
    from rigcheck.testing import run

    behaviours = ["ok"] * 35 + ["raise"] * 5 + ["hang"] * 5 + ["garbage"] * 3 + ["register"] * 2
    plugins = [plugin(index, behaviour) for index, behaviour in enumerate(behaviours)]
    started = time.perf_counter()
    result = run(
        {"nodes": [{"gpus": {"model": "L40S"}}]}, plugins=plugins, select=["LOAD", "ENGINE", "PLT001"]
    )
    elapsed = time.perf_counter() - started
    healthy = {f.code for f in result.findings if f.code.startswith("LOAD") and f.severity is Severity.PASS}
    assert healthy == {f"LOAD{i:03d}" for i, b in enumerate(behaviours) if b == "ok"}
    faults = sorted(f.code for f in result.findings if f.code.startswith("ENGINE"))
    assert faults == ["ENGINE001"] * 5 + ["ENGINE002"] * 5 + ["ENGINE003"] * 3 + ["ENGINE004"] * 2
    assert "plugin load_plugin_40" in next(f.message for f in result.findings if f.code == "ENGINE002")
    result.assert_finding("PLT001", "skip")  # the built-in checkers ran too (no RAM declared: not checked)
    assert elapsed < 30  # five hangs cut at 0.2 s each (a guard, not a speed target)
