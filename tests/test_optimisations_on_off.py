"""Issue 45: an optimisation stays only if it cannot change a report. MEM001's search for fixes keeps its
estimates (:class:`rigcheck.core.estimate.fixes.SearchEstimates`: each estimate by its inputs, a
training step's parts by what they read); inside :func:`~rigcheck.core.estimate.fixes.search`
with ``None`` every estimate is made afresh. Every fix found, and the GPUs needed, are the same either way. (The
ceiling has its own test, test_estimate_components.py; lint workers, folding and the checker cache
theirs: test_lint_jobs.py, test_folding.py, test_lazy_checkers.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from rigcheck.core.catalog.facts import load_rule_facts
from rigcheck.core.estimate.architecture import architecture_from_mapping, find_preset
from rigcheck.core.estimate.estimate import fit_verdict, pass_ceiling
from rigcheck.core.estimate.fixes import Limits, find_fixes, gpus_needed, search
from rigcheck.core.estimate.memory import GIB, MemoryInputs, estimate_memory

FACTS = load_rule_facts("memory")
SHARE = float(FACTS["inference"]["vllm_gpu_memory_utilization"])
CASES = [
    ("llama-2-7b", {"task": "full_finetune", "micro_batch": 8, "seq_len": 4096}, 24),
    ("llama-2-7b", {"task": "lora", "micro_batch": 16, "seq_len": 4096}, 16),
    ("llama-2-13b", {"task": "full_finetune", "micro_batch": 4, "seq_len": 2048}, 40),
    ("llama-3-8b", {"task": "inference", "concurrency": 64, "context_len": 8192}, 16),
    ("qwen-1.8b", {"task": "full_finetune", "micro_batch": 32, "seq_len": 2048}, 10),
]


def _search(inputs: MemoryInputs, usable: float) -> tuple[list[Any], Any]:
    def fits(estimate: Any) -> bool:
        return fit_verdict(estimate, usable, FACTS).severity == "pass"

    def ceiling(changed: MemoryInputs) -> float | None:
        return pass_ceiling(changed, usable, FACTS)

    limits = Limits(gpus=2, gpus_per_node=2, host_gib_per_node=128, utilization=SHARE)
    fixes = find_fixes(inputs, fits, limits, facts=FACTS, ceiling=ceiling)
    needed = gpus_needed(inputs, fits, ceiling=ceiling)
    return [(fix.changes, fix.description, fix.cost, fix.estimate) for fix in fixes], needed


@pytest.mark.parametrize(("model", "settings", "usable_gib"), CASES)
def test_a_search_finds_the_same_fixes_with_its_estimates_kept_or_not(
    model: str, settings: dict[str, Any], usable_gib: int
) -> None:
    arch = architecture_from_mapping(find_preset(model), name=model)
    inputs = MemoryInputs(arch, **settings)
    usable = usable_gib * GIB
    assert fit_verdict(estimate_memory(inputs), usable, FACTS).severity != "pass"  # a search runs
    with search(None):
        off = _search(inputs, usable)
    on = _search(inputs, usable)  # the searches' kept estimates (KEPT), some kept by the cases before
    again = _search(inputs, usable)  # every estimate kept now
    assert on == off == again and (on[0] or on[1])
