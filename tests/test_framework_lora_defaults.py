"""Issue 46: a framework's default LoRA targets name the same layers in every model family.

``task: qlora`` on ``falcon-7b`` with ``framework: litgpt`` and no targets once stopped with an internal
error: litgpt's default was written as Llama module names (``q_proj``, ``v_proj``), which a Falcon
(fused ``query_key_value``) does not have. The defaults are roles now (specs/rules/frameworks.yaml), and
every shipped preset under every framework's LoRA defaults is estimated, with the roles the framework
adapts."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset, preset_ids
from rigcheck.core.estimate.estimate import memory_inputs
from rigcheck.core.spec.documents import parse_spec

FRAMEWORKS = load_rule_facts("frameworks")
WITH_TARGETS = sorted(
    name for name, section in FRAMEWORKS.items() if "lora_targets" in section.get("defaults", {})
)


def test_some_frameworks_have_default_targets() -> None:
    assert {"litgpt", "unsloth"} <= set(WITH_TARGETS)


@pytest.mark.parametrize("task", ["lora", "qlora"])
@pytest.mark.parametrize("framework", WITH_TARGETS)
def test_every_preset_gets_the_roles_of_the_frameworks_default_targets_it_has(
    framework: str, task: str
) -> None:
    """The estimator's inputs for a LoRA run that names a framework and no targets: the framework's
    default roles that the model has (PEFT adapts the modules that exist; a plain MLP has no gate)."""
    roles = [str(role) for role in FRAMEWORKS[framework]["defaults"]["lora_targets"]]
    failed = []
    for preset in preset_ids():
        text = (
            f"apiVersion: rigcheck/v1\nkind: Workload\nname: w\nmodel: {{preset: {preset}}}\n"
            f"task: {task}\nframework: {framework}\n"
        )
        document = parse_spec(text, "w.yaml", kind="Workload")
        arch = architecture_from_mapping(find_preset(preset), name=preset)
        try:
            inputs = memory_inputs(document.model, arch)
            adapted = arch.lora_roles(inputs.lora_targets)
        except ValueError as exc:
            failed.append(f"{preset}: {exc}")
            continue
        shapes = set(arch.linear_shapes())
        wanted = shapes if "all-linear" in roles else {role for role in roles if role in shapes}
        assert set(adapted) == wanted and {"q", "v"} <= wanted, (preset, adapted)
    assert not failed, "\n".join(failed)


def test_litgpt_adapts_the_query_and_value_of_a_fused_qkv(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The workload that once ended in an internal error: now an estimate (exit 0 or 1), with the
    adapter on Falcon's query and value."""
    path = tmp_path / "falcon.yaml"
    path.write_text(
        "apiVersion: rigcheck/v1\nkind: Workload\nname: falcon-qlora\nmodel: {preset: falcon-7b}\n"
        "task: qlora\nframework: litgpt\nprecision: bf16\nbatch: {micro: 1, seq_len: 2048}\n",
        encoding="utf-8",
    )
    result = run_cli("estimate", str(path))
    assert result.exit_code in (0, 1) and "internal error" not in result.err, result.err
    assert "lora_targets ['q', 'v']: the litgpt default" in result.out
    falcon = architecture_from_mapping(find_preset("falcon-7b"), name="falcon-7b")
    assert falcon.lora_roles(["q", "v"]) == ("q", "v")
