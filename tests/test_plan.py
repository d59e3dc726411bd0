"""``rigcheck plan`` (issue 18): the seed's reasoning reproduced from the data, costs worked out by hand
from the formula, and no price that the data does not source."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import jsonschema
import pytest

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.plan.prices import price_book

from .conftest import REPO

HEAD = "apiVersion: rigcheck/v1\nkind: Workload\n"
LORA_7B = HEAD + textwrap.dedent(
    """\
    name: llama-2-7b-lora
    model: {preset: llama-2-7b}
    task: lora
    precision: bf16
    optimizer: adamw
    attention: flash
    activation_checkpointing: true
    batch: {micro: 2, grad_accum: 8, seq_len: 2048}
    lora: {rank: 16, targets: [q_proj, k_proj, v_proj, o_proj]}
    data: {tokens: 20000000}
    """
)
LORA_13B_SHARDED = HEAD + textwrap.dedent(
    """\
    name: llama-2-13b-lora-fsdp
    model: {preset: llama-2-13b}
    task: lora
    precision: bf16
    optimizer: adamw
    attention: flash
    activation_checkpointing: true
    batch: {micro: 1, grad_accum: 8, seq_len: 2048}
    lora: {rank: 16, targets: [q_proj, v_proj]}
    parallelism: {fsdp: full_shard}
    data: {tokens: 20000000}
    """
)
FULL_FT_70B = HEAD + textwrap.dedent(
    """\
    name: llama-2-70b-full-ft
    model: {preset: llama-2-70b}
    task: full_finetune
    precision: bf16
    optimizer: adamw
    attention: flash
    activation_checkpointing: true
    batch: {micro: 1, grad_accum: 4, seq_len: 4096}
    parallelism: {zero: 3}
    data: {tokens: 1000000000}
    """
)
SERVE_13B = HEAD + textwrap.dedent(
    """\
    name: llama-2-13b-serving
    model: {preset: llama-2-13b}
    task: inference
    precision: fp16
    inference: {engine: vllm, concurrency: 8, prompt_len: 1024, output_len: 256}
    """
)


def _plan(run_cli, write_spec, workload: str, *args: str) -> dict:  # type: ignore[no-untyped-def]
    path = write_spec(workload, "workload.yaml")
    result = run_cli("plan", path, "-f", "json", "--no-references", *args)
    assert result.exit_code in (0, 1), result.err
    return json.loads(result.out)


#: Owned rigs of one or two RTX 3090s or 4090s: the seed's comparison.
THREE_OR_FOUR = ("--buy", "--gpus", "RTX 3090,RTX 4090")


def _row(plan: dict, name: str) -> dict:
    [row] = [row for row in plan["rows"] if row["candidate"] == name]
    return row


def test_a_7b_lora_puts_a_single_24_gb_card_first_among_owned_rigs(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B, "--buy")
    first = next(row for row in plan["rows"] if row["rank"] == 1 and row["kind"] == "buy")
    assert first["gpu_count"] == 1 and first["gpus"] == "1x NVIDIA GeForce RTX 3090"
    cheaper = [
        row
        for row in plan["rows"]
        if row["kind"] == "buy"
        and row["cost"]["purchase"] is not None
        and row["cost"]["purchase"] < first["cost"]["purchase"]
    ]
    assert cheaper and all(row["why_not"].startswith("MEM001") for row in cheaper)  # the 12 and 16 GB cards


def test_dual_3090s_beat_one_4090_where_memory_decides(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(
        run_cli, write_spec, LORA_13B_SHARDED, "--buy", "--gpus", "RTX 3090,RTX 4090", "--max-gpus", "2"
    )
    dual, single = (
        _row(plan, "build 2x NVIDIA GeForce RTX 3090 (desktop)"),
        _row(plan, "build 1x NVIDIA GeForce RTX 4090 (desktop)"),
    )
    assert dual["passes"] and dual["rank"] == 1 and dual["data_parallel"] == 2
    assert not single["passes"] and single["why_not"].startswith("MEM001: 32.8 GiB per GPU")


def test_dual_3090s_lose_to_one_4090_where_speed_decides(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B, *THREE_OR_FOUR, "--max-gpus", "2", "--deadline", "3.1")
    dual, single = (
        _row(plan, "build 2x NVIDIA GeForce RTX 3090 (desktop)"),
        _row(plan, "build 1x NVIDIA GeForce RTX 4090 (desktop)"),
    )
    # BW003 fails a run whose whole time range is past the deadline: the 4090's low end (2.7 h) is inside it
    assert single["rank"] == 1 and single["passes"] and single["hours"]["low"] < 3.1
    assert not dual["passes"] and dual["why_not"].startswith("BW003") and dual["hours"]["low"] > 3.1


def test_a_70b_full_fine_tune_needs_more_than_one_8x80gb_node(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, FULL_FT_70B, "--rent", "--gpus", "H100 SXM")
    one = _row(plan, "aws p5.48xlarge")
    assert not one["passes"] and one["why_not"].startswith("MEM001: ")
    need = float(re.match(r"MEM001: ([\d.]+) GiB per GPU", one["why_not"]).group(1))  # type: ignore[union-attr]
    assert need > 79.7  # more than the H100's usable memory
    passing = [row for row in plan["rows"] if row["passes"]]
    assert passing and all(row["nodes"] >= 2 for row in passing)
    assert plan["answer"].startswith("cheapest to rent that passes: 4 x aws p5.48xlarge")


def test_13b_fp16_serving_rejects_g5_xlarge_on_memory_and_names_a_bigger_instance(
    run_cli, write_spec
) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, SERVE_13B, "--rent")
    small = _row(plan, "aws g5.xlarge")
    assert not small["passes"] and small["why_not"].startswith("MEM001: 50.5 GiB per GPU")
    best = next(row for row in plan["rows"] if row["rank"] == 1)
    assert best["passes"] and best["cost"]["hourly"] > small["cost"]["hourly"]
    assert (
        plan["answer"]
        == f"cheapest to rent that passes: {best['candidate']} ({best['cost']['hourly']:,.2f} USD/h)"
    )


def test_rent_cost_is_hours_times_the_hourly_price(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B, "--rent", "--gpus", "A10G")
    row = _row(plan, "aws g5.xlarge")
    [offer] = [o for o in price_book().instances if o.name == "g5.xlarge"]
    assert row["cost"]["hourly"] == pytest.approx(offer.price.amount)  # type: ignore[union-attr]
    for end in ("default", "low", "high"):
        assert row["cost"]["total"][end] == pytest.approx(row["hours"][end] * offer.price.amount)  # type: ignore[union-attr]
    assert row["cost"]["per_million_tokens"] == pytest.approx(row["cost"]["total"]["default"] / 2e7 * 1e6)


def test_buy_cost_is_the_parts_plus_energy(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(
        run_cli, write_spec, LORA_7B, "--buy", "--gpus", "RTX 3090", "--max-gpus", "1", "--electricity", "0.2"
    )
    row = _row(plan, "build 1x NVIDIA GeForce RTX 3090 (desktop)")
    parts = sum(price["amount"] for price in row["prices"])
    assert row["cost"]["purchase"] == pytest.approx(parts)
    efficiency = load_rule_facts("power")["efficiency_80plus"]["80plus-gold"][
        1
    ]  # the chosen 1000 W Gold unit
    kw = 350 + 65 + 100  # GPU TDP + the Ryzen 7 9700X + platform: PWR001's sustained load, W
    energy = kw / efficiency / 1000 * row["hours"]["default"] * 0.2
    assert row["cost"]["energy"]["default"] == pytest.approx(energy, rel=1e-6)
    assert row["cost"]["total"]["default"] == pytest.approx(parts + energy)


def test_prices_convert_at_the_recorded_rate(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    usd = _row(_plan(run_cli, write_spec, LORA_7B, "--rent", "--gpus", "A10G"), "aws g5.xlarge")
    cny_plan = _plan(run_cli, write_spec, LORA_7B, "--rent", "--gpus", "A10G", "--currency", "CNY")
    cny = _row(cny_plan, "aws g5.xlarge")
    assert cny["cost"]["hourly"] == pytest.approx(usd["cost"]["hourly"] * 6.9858)
    assert cny_plan["fx"] and cny_plan["fx"][0]["as_of"] == "2026-01-27"


def test_no_price_is_invented(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B)
    unpriced = [row for row in plan["rows"] if any(p["amount"] is None for p in row["prices"])]
    assert unpriced  # the workstation and HGX templates, instances without an on-demand price
    for row in unpriced:
        assert row["cost"]["total"] is None and row["cost"]["purchase"] is None
    for row in plan["rows"]:
        for price in row["prices"]:
            if price["amount"] is not None:
                assert price["source"] and price["as_of"]
    assert plan["prices_as_of"]["oldest"] <= plan["prices_as_of"]["newest"]


def test_the_pareto_front_is_what_nothing_beats_on_cost_and_time(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B, "--rent")
    rows = [r for r in plan["rows"] if r["passes"] and r["cost"]["total"] and r["hours"]]
    point = {r["candidate"]: (r["cost"]["total"]["default"], r["hours"]["default"]) for r in rows}
    for row in rows:
        cost, time = point[row["candidate"]]
        beaten = any(c <= cost and t <= time and (c, t) != (cost, time) for c, t in point.values())
        assert row["pareto"] is not beaten, row["candidate"]


def test_json_matches_the_published_schema(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, SERVE_13B, "--rent")
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(plan)


def test_nothing_passing_exits_1_and_says_the_closest(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(FULL_FT_70B, "workload.yaml")
    result = run_cli("plan", path, "--buy", "--gpus", "RTX 3060 12GB", "--no-references")
    assert result.exit_code == 1
    assert (
        "answer: nothing passes; the closest, build 1x NVIDIA GeForce RTX 3060 12GB (desktop), fails: MEM001"
        in result.out
    )


def test_text_and_markdown_put_the_answer_first(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(LORA_7B, "workload.yaml")
    text = run_cli("plan", path, "--buy", "--gpus", "RTX 3090", "--no-references").out.splitlines()
    assert text[1].startswith(
        "answer: cheapest to buy that passes: build 1x NVIDIA GeForce RTX 3090 (desktop)"
    )
    markdown = run_cli("plan", path, "--buy", "--gpus", "RTX 3090", "--no-references", "-f", "markdown").out
    assert markdown.startswith("### rigcheck plan: llama-2-7b-lora (lora)\n\n**cheapest to buy that passes: ")
    assert "| # | candidate | GPUs | verdict | time | cost | per M tok | why not |" in markdown


def test_a_given_rig_is_checked_and_listed(run_cli, write_spec, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(LORA_7B, "workload.yaml")
    rig = REPO / "specs" / "rigs" / "home-2x3090.yaml"
    plan = json.loads(
        run_cli(
            "plan", path, "--buy", "--gpus", "RTX 3090", "--no-references", "--rig", str(rig), "-f", "json"
        ).out
    )
    [mine] = [row for row in plan["rows"] if row["kind"] == "given"]
    assert mine["gpus"] == "2x RTX 3090" and mine["passes"] and mine["cost"]["total"] is None


@pytest.mark.parametrize("mode", ["--buy", "--rent"])
def test_the_worked_example_in_docs_plan_md_is_what_the_command_prints(run_cli, mode: str) -> None:  # type: ignore[no-untyped-def]
    page = (REPO / "docs" / "plan.md").read_text(encoding="utf-8")
    command = f"$ rigcheck plan llama-2-7b-sft-lora {mode} --no-references\n"
    shown = page.split(command, 1)[1].split("```", 1)[0].rstrip("\n").splitlines()
    printed = run_cli("plan", "llama-2-7b-sft-lora", mode, "--no-references").out.splitlines()
    assert shown == printed[: len(shown)]


def test_a_budget_fails_what_costs_more_and_says_so(run_cli, write_spec) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(run_cli, write_spec, LORA_7B, *THREE_OR_FOUR, "--max-gpus", "1", "--budget", "3000")
    cheap, dear = (
        _row(plan, "build 1x NVIDIA GeForce RTX 3090 (desktop)"),
        _row(plan, "build 1x NVIDIA GeForce RTX 4090 (desktop)"),
    )
    assert cheap["passes"] and not cheap["over_budget"] and cheap["cost"]["total"]["default"] <= 3000
    assert dear["over_budget"] and not dear["passes"] and dear["rank"] is None
    assert dear["why_not"] == f"over the budget: {dear['cost']['total']['default']:,.0f} USD > 3,000"
    assert "fastest under budget: build 1x NVIDIA GeForce RTX 3090 (desktop)" in plan["answer"]


def test_text_escapes_what_a_given_rig_names(run_cli, write_spec, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_spec(LORA_7B, "workload.yaml")
    rig = tmp_path / "odd.yaml"
    rig.write_text(
        'apiVersion: rigcheck/v1\nkind: Rig\nname: odd\nnodes:\n  - gpus: {model: "RTX 3090\\u001b[2J"}\n',
        encoding="utf-8",
    )
    result = run_cli(
        "plan", path, "--buy", "--gpus", "RTX 3090", "--max-gpus", "1", "--no-references", "--rig", str(rig)
    )
    assert "\x1b" not in result.out
    assert "1x RTX 3090\\x1b[2J" in result.out and "not a valid rig: " in result.out
