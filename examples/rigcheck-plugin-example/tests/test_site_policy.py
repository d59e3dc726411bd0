"""The example plugin's rules, written with rigcheck's test kit (the ``rigcheck_run`` fixture comes
from the ``rigcheck.testing`` pytest plugin that rigcheck installs)."""

from __future__ import annotations

import pytest

rigcheck_site_policy = pytest.importorskip(
    "rigcheck_site_policy",
    reason="install the example first: pip install -e examples/rigcheck-plugin-example",
)

DGX = {"model": "H100 SXM", "count": 8}


def rack(limit_kw: float, *, count: int = 4, per_rack: str = "4", max_power_w: int = 10200) -> dict:
    return {
        "site": {"rack_power_limit_kw": limit_kw},
        "nodes": [
            {
                "name": "dgx",
                "count": count,
                "gpus": DGX,
                "max_power_w": max_power_w,
                "labels": {"nodes-per-rack": per_rack},
            }
        ],
    }


@pytest.mark.parametrize(
    ("limit_kw", "severity"),
    # 4 x 10,200 W = 40.8 kW; warn above 90% of the limit (45.33 kW), fail above it
    [(40.7, "fail"), (40.8, "warn"), (45.3, "warn"), (45.34, "pass")],
)
def test_rack_power_thresholds(rigcheck_run, limit_kw: float, severity: str) -> None:  # type: ignore[no-untyped-def]
    result = rigcheck_run(rack(limit_kw), plugins=[rigcheck_site_policy], select=["RACK"])
    finding = result.one("RACK001", severity, pointer="/site/rack_power_limit_kw")
    assert finding.evidence["rack_kw"] == 40.8


def test_rack_power_from_parts_and_rack_units(rigcheck_run) -> None:  # type: ignore[no-untyped-def]
    """2 x 350 W RTX 3090 + 280 W CPU + 100 W platform = 1,080 W; 42 U / 4 U = 10 per rack, count 12."""
    rig = {
        "site": {"rack_power_limit_kw": 10},
        "nodes": [
            {
                "count": 12,
                "gpus": {"model": "RTX 3090", "count": 2},
                "cpu": {"tdp_w": 280},
                "chassis": {"form_factor": "rackmount", "rack_units": 4},
            }
        ],
    }
    result = rigcheck_run(rig, plugins=[rigcheck_site_policy], select=["RACK"])
    finding = result.one("RACK001", "fail")
    assert finding.evidence["node_w"] == 1080 and finding.evidence["nodes_per_rack"] == 10
    assert "10.8 kW against 10 kW" in finding.message and finding.fix.startswith("at most 9 node(s)")


def test_no_limit_is_not_checked(rigcheck_run) -> None:  # type: ignore[no-untyped-def]
    result = rigcheck_run({"nodes": [{"gpus": DGX}]}, plugins=[rigcheck_site_policy], select=["RACK"])
    result.one("RACK001", "skip")


YAML_RIG = """\
apiVersion: rigcheck/v1
kind: Rig
name: prod-inference
labels: {env: production}
nodes:
  - name: a
    gpus: {model: RTX 5060 Ti}
  - name: b
    gpus: {model: L40S}
"""


def test_consumer_gpus_in_production_by_line(rigcheck_run, rigcheck_plugins) -> None:  # type: ignore[no-untyped-def]
    rigcheck_plugins.add(rigcheck_site_policy)  # every run of this test uses it
    result = rigcheck_run(YAML_RIG, select=["SITE"])
    result.assert_finding("SITE001", "fail", line=7, message="is a consumer GPU")
    result.assert_finding("SITE001", "pass", line=9)
    assert result.exit_code == 1
    lab = rigcheck_run(YAML_RIG.replace("env: production", "env: lab"), select=["SITE"])
    lab.one("SITE001", "skip")


def test_catalog_entry_feeds_rigcheck_checkers(rigcheck_run) -> None:  # type: ignore[no-untyped-def]
    """rigcheck's own CUDA rules use the plugin's entry: sm_120 needs a CUDA 12.8 wheel."""
    rig = {
        "nodes": [
            {
                "gpus": {"model": "RTX 5060 Ti"},
                "software": {"os": "linux", "driver": "570.124.06", "torch": "2.5.1+cu121"},
            }
        ]
    }
    result = rigcheck_run(rig, plugins=[rigcheck_site_policy], select=["CUDA004", "CUDA001"])
    result.assert_finding("CUDA004", "fail", message="no kernel image")
    result.assert_finding("CUDA001", "pass")


def test_without_the_plugin_the_gpu_is_unknown() -> None:
    from rigcheck import SpecError
    from rigcheck.testing import run

    with pytest.raises(SpecError, match="RTX 5060 Ti"):
        run({"nodes": [{"gpus": {"model": "RTX 5060 Ti"}}]})


@pytest.mark.parametrize("value", ["four", "2.5", "0", "-1", ""])
def test_a_bad_nodes_per_rack_label_is_a_finding_at_the_label(rigcheck_run, value: str) -> None:  # type: ignore[no-untyped-def]
    """int(label) used to crash the checker (ENGINE001); now RACK002 fails at the label and RACK001 is skipped."""
    text = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nsite: {rack_power_limit_kw: 20}\nnodes:\n"
        "  - name: dgx\n    count: 4\n    max_power_w: 10200\n    gpus: {model: H100 SXM, count: 8}\n"
        f"    labels:\n      nodes-per-rack: '{value}'\n"
    )
    result = rigcheck_run(text, plugins=[rigcheck_site_policy], select=["RACK", "ENGINE"])
    bad = result.one("RACK002", "fail", line=11, pointer="/nodes/0/labels/nodes-per-rack")
    assert repr(value) in bad.message and bad.fix.startswith(
        "write the number of nodes in one rack as digits"
    )
    result.one("RACK001", "skip", message="nodes per rack unknown")
    result.assert_no("ENGINE001")


def test_the_snake_case_label_is_read_too(rigcheck_run) -> None:  # type: ignore[no-untyped-def]
    rig = rack(40.7)
    rig["nodes"][0]["labels"] = {"nodes_per_rack": "4"}
    result = rigcheck_run(rig, plugins=[rigcheck_site_policy], select=["RACK"])
    finding = result.one("RACK001", "fail")
    assert finding.evidence["nodes_per_rack_from"] == "label nodes_per_rack"
    bad = rack(20)
    bad["nodes"][0]["labels"] = {"nodes_per_rack": "x"}
    rigcheck_run(bad, plugins=[rigcheck_site_policy], select=["RACK"]).one(
        "RACK002", "fail", pointer="/nodes/0/labels/nodes_per_rack"
    )


def test_settings_from_the_project_config(rigcheck_run) -> None:  # type: ignore[no-untyped-def]
    """warn_fraction 0.95: 40.8 kW against 42.8 kW (95.3%) warns; at 0.96 it passes; rack_units: 47 U / 4 U."""
    config = {"plugins-config": {"site_policy": {"warn_fraction": 0.95}}}
    result = rigcheck_run(rack(42.8), plugins=[rigcheck_site_policy], select=["RACK"], config=config)
    result.one("RACK001", "warn", message="(over 95%)")
    config = {"plugins-config": {"site_policy": {"warn_fraction": 0.96}}}
    rigcheck_run(rack(42.8), plugins=[rigcheck_site_policy], select=["RACK"], config=config).one(
        "RACK001", "pass"
    )
    rig = {
        "site": {"rack_power_limit_kw": 100},
        "nodes": [
            {"count": 20, "max_power_w": 1000, "chassis": {"form_factor": "rackmount", "rack_units": 4}}
        ],
    }
    result = rigcheck_run(
        rig,
        plugins=[rigcheck_site_policy],
        select=["RACK"],
        config={"thresholds": {"site_policy.rack_units": 47}},
    )
    assert result.one("RACK001", "pass").evidence["nodes_per_rack"] == 11


def test_a_bad_setting_is_a_config_error_at_its_line() -> None:
    from rigcheck import SpecError
    from rigcheck.testing import run

    config = "plugins-config:\n  site_policy:\n    warn_fraction: 1.5\n"
    with pytest.raises(SpecError) as excinfo:
        run(rack(20), plugins=[rigcheck_site_policy], config=config)
    [problem] = excinfo.value.problems
    assert (problem.line, problem.pointer) == (3, "/plugins-config/site_policy/warn_fraction")
    assert "less than or equal to 1" in problem.message
