"""Changes that make a workload fit a GPU, each re-estimated before it is offered (MEM001's fix).

A fix is a set of changes to the estimator's inputs. Every candidate is estimated again and kept only
when its verdict passes (the high end of its range fits). Settings with many values appear once, at
their best value: the largest micro-batch (or concurrency, or context) that fits. Single changes come
first, cheapest first; when none fits, combinations of two and three. Constraints hold: tensor
parallelism divides the attention heads and the KV heads (or is a multiple of the KV heads, which are
then replicated) and stays within a node; the rig's GPU count is not exceeded; a cloud instance gets
no more GPUs; offload needs host memory for what it moves there. When nothing fits the GPUs the rig
has, :func:`gpus_needed` says how many of this kind would.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from rigcheck.core.estimate.largest import largest_fitting
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, MemoryInputs, Parts, estimate_memory_below


@dataclass(frozen=True)
class Limits:
    """What the rig allows: GPUs in all, per node, whether it can grow, host memory per node."""

    gpus: int
    gpus_per_node: int
    fixed_gpus: bool = False  # a cloud instance: its GPU count is what it is
    host_gib_per_node: float | None = None
    usable: float = 0.0  # bytes of the GPU (vLLM's share is taken of it)
    outside: float = 0.0  # vLLM: bytes beside its share (context, CUDA graphs)
    #: vLLM's share of the GPU when the workload does not set one (memory.yaml's
    #: inference.vllm_gpu_memory_utilization)
    utilization: float = field(kw_only=True)


@dataclass(frozen=True)
class Fix:
    """A change (or a combination), re-estimated: ``estimate`` fits with ``verdict`` (pass)."""

    changes: dict[str, Any]
    description: str
    estimate: MemoryEstimate
    cost: int = field(default=0)  # how much the change alters the run (lower first)

    @property
    def device_gib(self) -> float:
        return self.estimate.device / GIB


Fits = Callable[[MemoryEstimate], bool]

#: Device bytes from which no estimate of these inputs fits, or None (see :func:`find_fixes`).
Ceiling = Callable[[MemoryInputs], float | None]


@dataclass(frozen=True)
class _Setting:
    """An integer setting a fix gives the largest value that fits: a multiple of ``step`` from ``least``
    up to ``upper``; ``changes`` gives what a value changes and its description."""

    least: int
    upper: int
    step: int
    changes: Callable[[int], tuple[dict[str, Any], str]]


@dataclass(frozen=True)
class _Candidate:
    """A change to try on the workload, and how costly it is to make. With ``setting``, an integer
    setting that fits at no value on its own: combined with other changes, it takes the largest value
    that fits with them (``changes`` and ``description`` are those of its least value)."""

    name: str
    changes: dict[str, Any]
    description: str
    cost: int
    setting: _Setting | None = None


def _heads_allow(inputs: MemoryInputs, tp: int) -> bool:
    arch = inputs.arch
    kv = arch.kv_heads
    return arch.heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


def _largest(
    inputs: MemoryInputs,
    setting: _Setting,
    fits: Fits,
    *,
    facts: Any = None,
    ceiling: Ceiling | None = None,
) -> int:
    """The largest value of ``setting`` that fits ``inputs`` (each value estimated with every change it
    makes: a smaller micro-batch with its gradient accumulation); 0 if none from its least value up.
    Predicted from the device totals at the least value and the next against the pass ceiling, then
    verified (:func:`~rigcheck.core.estimate.largest.largest_fitting`; stepping up from the least
    value where there is no ceiling)."""
    step = setting.step
    low, high = -(-setting.least // step), setting.upper // step
    device: dict[int, float] = {}

    def ok(k: int) -> bool:  # k x step fits
        estimate = _estimate(inputs, setting.changes(k * step)[0], facts, ceiling)
        if estimate is None or not fits(estimate):
            return False
        device[k] = estimate.device
        return True

    limit = ceiling(inputs.changed(**setting.changes(low * step)[0])) if ceiling and low <= high else None
    best = largest_fitting(ok, device.__getitem__, low, high, limit)
    return 0 if best is None else best * step


def _integer(
    name: str, setting: _Setting, cost: int, inputs: MemoryInputs, fits: Fits, ceiling: Ceiling | None
) -> _Candidate:
    """The candidate of an integer setting: at the largest value that fits on its own, or, where none
    does, one left to solve with the changes it is combined with (:func:`_combined`)."""
    best = _largest(inputs, setting, fits, ceiling=ceiling)
    if best:
        changes, description = setting.changes(best)
        return _Candidate(name, changes, description, cost)
    changes, description = setting.changes(setting.least)
    return _Candidate(name, changes, description, cost, setting)


def host_fits(estimate: MemoryEstimate, limits: Limits) -> bool:
    """Offloaded states fit the node's host memory (every rank on the node offloads its share)."""
    if not estimate.host:
        return True
    if limits.host_gib_per_node is None:
        return True
    ranks = min(estimate.inputs.world, limits.gpus_per_node)
    return estimate.host * ranks <= limits.host_gib_per_node * GIB


def _micro_batches(inputs: MemoryInputs) -> _Setting:
    """Smaller micro-batches, each with the gradient accumulation that keeps the global batch (about)
    the same: ``grad_accum`` x ceil(micro / value)."""

    def changes(value: int) -> tuple[dict[str, Any], str]:
        accum = inputs.grad_accum * -(-inputs.micro_batch // value)
        same = "the same" if value * accum == inputs.micro_batch * inputs.grad_accum else "about the same"
        return (
            {"micro_batch": value, "grad_accum": accum},
            f"batch.micro {value} with batch.grad_accum {accum} ({same} global batch)",
        )

    return _Setting(1, inputs.micro_batch - 1, 1, changes)


def fix_candidates(
    inputs: MemoryInputs, limits: Limits, fits: Fits, ceiling: Ceiling | None = None
) -> list[_Candidate]:
    out: list[_Candidate] = []
    if inputs.training:
        if inputs.micro_batch > 1:
            out.append(_integer("micro-batch", _micro_batches(inputs), 1, inputs, fits, ceiling))
        if inputs.seq_len > 1024:
            sequence = _Setting(
                1024,
                inputs.seq_len - 1,
                256,
                lambda value: ({"seq_len": value}, f"batch.seq_len {value:,} (shorter sequences)"),
            )
            out.append(_integer("sequence", sequence, 2, inputs, fits, ceiling))
        if inputs.loss == "standard":
            out.append(
                _Candidate("chunked loss", {"loss": "chunked"}, "loss: chunked (per-chunk cross-entropy)", 1)
            )
            out.append(
                _Candidate(
                    "fused loss",
                    {"loss": "fused"},
                    "loss: fused (Liger / cut-cross-entropy: no full logits)",
                    2,
                )
            )
        if inputs.attention == "eager":
            out.append(
                _Candidate("flash attention", {"attention": "flash"}, "attention: flash (no s x s scores)", 1)
            )
        if inputs.activation_checkpointing != "full":
            out.append(
                _Candidate(
                    "checkpointing",
                    {"activation_checkpointing": "full"},
                    "activation_checkpointing: true (about a third more compute)",
                    2,
                )
            )
        if not inputs.activation_offloading:
            out.append(
                _Candidate(
                    "activation offloading",
                    {"activation_offloading": True, "activation_checkpointing": "full"},
                    "activation_checkpointing: true with activation_offloading: true (host copies)",
                    4,
                )
            )
        if inputs.optimizer in ("adamw", "adam") and not inputs.frozen_base:
            out.append(
                _Candidate(
                    "8-bit optimizer", {"optimizer": "adamw-8bit"}, "optimizer: adamw-8bit (bitsandbytes)", 3
                )
            )
        if inputs.optimizer_implementation == "foreach":
            out.append(
                _Candidate(
                    "fused optimizer",
                    {"optimizer_implementation": "fused"},
                    "optimizer_implementation: fused",
                    1,
                )
            )
        if inputs.dp > 1 and not inputs.sharded_params:
            if inputs.zero:
                out.append(
                    _Candidate(
                        "ZeRO-3",
                        {"zero": 3},
                        f"parallelism.zero: 3 (shard every state over {inputs.dp} GPUs)",
                        3,
                    )
                )
            else:
                out.append(
                    _Candidate(
                        "FSDP",
                        {"fsdp": "full_shard", "zero": 0},
                        f"parallelism.fsdp: full_shard (shard every state over {inputs.dp} GPUs)",
                        3,
                    )
                )
        if inputs.offload == "none" and not inputs.frozen_base:
            out.append(
                _Candidate(
                    "optimizer offload",
                    {"offload": "cpu", **({} if inputs.sharded else {"zero": 2})},
                    "parallelism.offload: cpu (optimizer states in host memory; slower steps)",
                    5,
                )
            )
        if inputs.sharded_params and not inputs.offload_params:
            out.append(
                _Candidate(
                    "parameter offload",
                    {"offload": "cpu", "offload_params": True},
                    "parallelism.offload: cpu with offload_params: true (the GPU keeps the gathered blocks only)",
                    6,
                )
            )
        if inputs.task in ("pretrain", "full_finetune"):
            out.append(
                _Candidate(
                    "LoRA",
                    {"task": "lora", "lora_rank": 16, "lora_targets": ("all-linear",)},
                    "task: lora (rank 16 on all linear layers)",
                    7,
                )
            )
        if inputs.task in ("pretrain", "full_finetune", "lora"):
            out.append(
                _Candidate(
                    "QLoRA",
                    {
                        "task": "qlora",
                        "lora_rank": inputs.lora_rank or 16,
                        "lora_targets": inputs.lora_targets or ("all-linear",),
                    },
                    "task: qlora (NF4 base)",
                    8,
                )
            )
    else:
        if inputs.concurrency > 1:
            concurrency = _Setting(
                1,
                inputs.concurrency - 1,
                1,
                lambda value: ({"concurrency": value}, f"inference.concurrency {value}"),
            )
            out.append(_integer("concurrency", concurrency, 1, inputs, fits, None))
        context = inputs.context_len or inputs.seq_len
        if context > 1024:
            shorter = _Setting(
                1024,
                context - 1,
                256,
                lambda value: (
                    {"context_len": value},
                    f"inference.context_len {value:,} (shorter sequences)",
                ),
            )
            out.append(_integer("context", shorter, 2, inputs, fits, None))
        if inputs.engine == "vllm" and limits.usable and limits.outside:
            # vLLM's share must leave room beside it for the context and CUDA graphs
            highest = int((1 - limits.outside / limits.usable) * 100) / 100
            current = inputs.gpu_memory_utilization or limits.utilization
            if 0.5 <= highest < current:
                out.append(
                    _Candidate(
                        "utilization",
                        {"gpu_memory_utilization": highest},
                        f"inference.gpu_memory_utilization {highest:.2f} (room for CUDA graphs and the context)",
                        1,
                    )
                )
        if (inputs.kv_cache_dtype or "bf16") not in ("fp8", "int8", "int4"):
            out.append(
                _Candidate("fp8 KV cache", {"kv_cache_dtype": "fp8"}, "inference.kv_cache_dtype: fp8", 1)
            )
        if not inputs.quantization or inputs.quantization == "none":
            out.append(_Candidate("fp8 weights", {"quantization": "fp8"}, "quantization: fp8", 3))
            out.append(
                _Candidate(
                    "4-bit weights", {"quantization": "awq"}, "quantization: awq (4-bit, group 128)", 4
                )
            )
    # every tensor-parallel degree the heads allow within a node and the rig's GPUs, the smaller the
    # cheaper: the search keeps the smallest that fits (a 4-bit 70B serve on 4x RTX 4090 needs tp 4;
    # only tp 2 was tried before, so nothing was offered)
    tp, extra = inputs.tp * 2, 0
    while tp <= limits.gpus_per_node:
        world = inputs.world // inputs.tp * tp
        if world > limits.gpus:
            break
        if _heads_allow(inputs, tp):
            out.append(
                _Candidate(
                    f"tensor parallel {tp}",
                    {"tp": tp},
                    f"parallelism.tp: {tp} ({world} GPUs; needs NVLink-class links)",
                    4 + extra,
                )
            )
            extra += 1
        tp *= 2
    if not inputs.training:
        # a serve split into pipeline stages over the rig's GPUs, across nodes where tensor parallelism
        # stops at one (vLLM's --pipeline-parallel-size; each stage estimated on its own)
        pp = inputs.pp * 2
        while inputs.world // inputs.pp * pp <= limits.gpus and pp <= inputs.arch.layers:
            world = inputs.world // inputs.pp * pp
            out.append(
                _Candidate(
                    f"pipeline parallel {pp}",
                    {"pp": pp},
                    f"parallelism.pp: {pp} ({world} GPUs; stages may span nodes)",
                    5 + extra,
                )
            )
            extra += 1
            pp *= 2
    return out


def find_fixes(
    inputs: MemoryInputs,
    fits: Fits,
    limits: Limits,
    *,
    facts: Any = None,
    limit: int = 3,
    ceiling: Ceiling | None = None,
) -> list[Fix]:
    """The ``limit`` cheapest changes (or combinations) whose re-estimated verdict passes: by cost,
    then fewer settings changed, then less memory, one per set of settings (:func:`best_fixes`). Every
    single change is tried; combinations of two when fewer than ``limit`` singles fit, taken
    cheapest first and only while one could still be among the ``limit`` cheapest; of three when
    neither a single change nor a pair fits. An integer setting that fits at no value on its own (a
    micro-batch, when even 1 does not fit as the workload stands) takes, in a combination, the largest
    value that fits with the other changes: checkpointing with micro-batch 2 fits where neither does.

    A fix, or a combination, needs no more GPUs than the rig has (tensor parallelism 2 with pipeline
    stages 2 is four GPUs).

    ``ceiling``: for a candidate's inputs, the device bytes from which ``fits`` cannot pass it (MEM001:
    :func:`rigcheck.core.estimate.estimate.pass_ceiling`); a candidate whose states and saved activations alone
    reach it is not estimated further (:func:`estimate_memory_below`), which changes nothing but the
    time the search takes."""

    most_gpus = max(limits.gpus, inputs.world)  # a fix asks for no more GPUs than the rig (or the job) has

    def ok(estimate: MemoryEstimate) -> bool:
        return estimate.inputs.world <= most_gpus and fits(estimate) and host_fits(estimate, limits)

    candidates = sorted(fix_candidates(inputs, limits, ok, ceiling), key=lambda c: c.cost)
    found: list[Fix] = []
    for candidate in candidates:
        if candidate.setting is not None:  # fits at no value on its own
            continue
        estimate = _estimate(inputs, candidate.changes, facts, ceiling)
        if estimate is not None and ok(estimate):
            found.append(Fix(candidate.changes, candidate.description, estimate, candidate.cost))
    if len(best_fixes(found, limit)) < limit:
        single = {fix.description for fix in found}
        for size in (2, 3):
            combos = [
                combo
                for combo in itertools.combinations(candidates, size)
                if not any(c.description in single for c in combo) and not _conflict(combo)
            ]
            combos.sort(key=lambda combo: sum(c.cost for c in combo))  # cheapest first (stable)
            best = best_fixes(found, limit)
            for combo in combos:
                cost = sum(c.cost for c in combo)
                if len(best) == limit and cost > best[-1].cost:
                    break  # every fix left costs more than the ones kept
                fix = _combined(inputs, combo, ok, facts, ceiling)
                if fix is not None:
                    found.append(fix)
                    best = best_fixes(found, limit)
            if found:
                break
    return best_fixes(found, limit)


def _combined(
    inputs: MemoryInputs, combo: tuple[_Candidate, ...], ok: Fits, facts: Any, ceiling: Ceiling | None
) -> Fix | None:
    """The combination as a fix, or None where it does not fit. Its last integer setting left to
    solve takes the largest value that fits with the other changes; any before it, their least."""
    changes: dict[str, Any] = {}
    for candidate in combo:
        changes.update(candidate.changes)
    descriptions = [candidate.description for candidate in combo]
    solve = [index for index, candidate in enumerate(combo) if candidate.setting is not None]
    if solve:
        last = combo[solve[-1]]
        assert last.setting is not None
        estimate = _estimate(inputs, changes, facts, ceiling)  # at its least value
        if estimate is None or not ok(estimate):
            return None
        others = {key: value for key, value in changes.items() if key not in last.changes}
        try:
            base = inputs.changed(**others)
        except ValueError:
            return None
        value = _largest(base, last.setting, ok, facts=facts, ceiling=ceiling)  # its least fits
        solved, descriptions[solve[-1]] = last.setting.changes(value)
        if value != last.setting.least:
            changes.update(solved)
            estimate = _estimate(inputs, changes, facts, ceiling)
    else:
        estimate = _estimate(inputs, changes, facts, ceiling)
    if estimate is None or not ok(estimate):
        return None
    return Fix(changes, " + ".join(descriptions), estimate, sum(c.cost for c in combo))


def best_fixes(fixes: list[Fix], limit: int) -> list[Fix]:
    """The ``limit`` cheapest distinct fixes: by cost, then fewer settings changed, then less memory."""
    ordered = sorted(fixes, key=lambda fix: (fix.cost, len(fix.changes), fix.estimate.device))
    return _distinct(ordered)[:limit]


def _distinct(fixes: list[Fix]) -> list[Fix]:
    """One fix per set of settings changed (the cheapest value of a setting), none that only adds
    changes to a fix already listed."""
    kept: list[Fix] = []
    for fix in fixes:
        keys = frozenset(fix.changes)
        if any(frozenset(other.changes) <= keys for other in kept):
            continue
        kept.append(fix)
    return kept


def _conflict(combo: Iterable[_Candidate]) -> bool:
    keys: set[str] = set()
    for candidate in combo:
        if keys & set(candidate.changes):
            return True
        keys |= set(candidate.changes)
    return False


class SearchEstimates:
    """The estimates the searches for fixes make, kept: each by its inputs (frozen; a search meets the
    same configuration again from several candidates, and a lint meets it again in other pairs), and a
    training step's parts by what they read (:class:`~rigcheck.core.estimate.memory.reads.ReadMemo`:
    candidates that change one setting share the parts that do not read it). The estimator itself keeps
    nothing. At most ``most`` estimates, then it starts again; a new facts mapping starts it again too.
    An estimate from here is the estimate made afresh (tests/test_optimisations_on_off.py)."""

    def __init__(self, parts: Parts | None = None, most: int = 4096) -> None:
        self._given = parts
        self.most = most
        self.clear()

    def clear(self) -> None:
        """Forget every estimate and part (a test that records which data values are read clears it
        first, so that every read happens)."""
        from rigcheck.core.estimate.memory import training
        from rigcheck.core.estimate.memory.reads import ReadMemo

        self.parts: Parts = self._given or (
            ReadMemo(training.states_of),
            ReadMemo(training.saved_of),
            ReadMemo(training.extras_apart_of),
        )
        self.made: dict[tuple[Any, ...], MemoryEstimate] = {}
        self.facts: Any = None

    def below(self, inputs: MemoryInputs, ceiling: float | None, facts: Any) -> MemoryEstimate | None:
        """:func:`estimate_memory_below` of ``inputs``; one made already is returned whatever its size."""
        if facts is not self.facts:
            self.made.clear()
            self.facts = facts
        try:
            # the types too: 1 == 1.0 == True, but a formula may print them differently
            key = (inputs, tuple(map(type, vars(inputs).values())))
            made = self.made.get(key)
        except TypeError:  # an input that cannot be hashed (a list where a tuple belongs): not kept
            return estimate_memory_below(inputs, ceiling, facts, parts=self.parts)
        if made is not None:
            return made
        estimate = estimate_memory_below(inputs, ceiling, facts, parts=self.parts)
        if estimate is not None:
            if len(self.made) >= self.most:
                self.made.clear()
            self.made[key] = estimate
        return estimate


#: The estimates every search keeps by default (one process's: each lint worker has its own copy).
KEPT = SearchEstimates()
#: The estimates the search under way keeps (:func:`search`); None: none kept, each made afresh.
_SEARCH: ContextVar[SearchEstimates | None] = ContextVar("rigcheck_fix_search", default=KEPT)


@contextmanager
def search(estimates: SearchEstimates | None) -> Iterator[None]:
    """Run the searches inside with ``estimates`` kept (None: none kept, every estimate made afresh)."""
    token = _SEARCH.set(estimates)
    try:
        yield
    finally:
        _SEARCH.reset(token)


def _estimate(
    inputs: MemoryInputs, changes: dict[str, Any], facts: Any, ceiling: Ceiling | None = None
) -> MemoryEstimate | None:
    """The estimate with ``changes``; None where they are not a valid configuration, or where it
    cannot fit below its ``ceiling`` (:func:`estimate_memory_below`). Kept by the search under way."""
    try:
        changed = inputs.changed(**changes)
        limit = ceiling(changed) if ceiling else None
        current = _SEARCH.get()
        if current is None:
            return estimate_memory_below(changed, limit, facts)
        return current.below(changed, limit, facts)
    except ValueError:
        return None


def gpus_needed(
    inputs: MemoryInputs, fits: Fits, *, most: int = 4096, ceiling: Ceiling | None = None
) -> tuple[int, dict[str, Any]] | None:
    """How many GPUs of this kind the workload needs: training sharded with FSDP over more ranks
    (tp kept), inference split with tensor then pipeline parallelism; ``None`` past ``most``.
    ``ceiling`` as for :func:`find_fixes`."""
    if inputs.training:
        dp = max(2, inputs.dp)
        while dp * inputs.tp * inputs.pp <= most:
            changes = {"dp": dp, "fsdp": "full_shard", "zero": 0}
            estimate = _estimate(inputs, changes, None, ceiling)
            if estimate is not None and fits(estimate):
                return dp * inputs.tp * inputs.pp * inputs.cp, changes
            dp *= 2
        return None
    tp = inputs.tp
    for candidate_tp in (2, 4, 8):
        if candidate_tp <= tp or not _heads_allow(inputs, candidate_tp):
            continue
        estimate = _estimate(inputs, {"tp": candidate_tp}, None)
        if estimate is not None and fits(estimate):
            return candidate_tp * inputs.pp, {"tp": candidate_tp}
        tp = candidate_tp
    pp = max(2, inputs.pp * 2)
    while tp * pp <= most:
        estimate = _estimate(inputs, {"tp": tp, "pp": pp}, None)
        if estimate is not None and fits(estimate):
            return tp * pp, {"tp": tp, "pp": pp}
        pp *= 2
    return None
