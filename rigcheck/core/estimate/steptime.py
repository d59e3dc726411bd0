"""One training step's time: compute, pipeline bubble and the communication compute does not hide.

Compute (PaLM, arXiv:2204.02311 appendix B; Korthikanti et al., arXiv:2205.05198 for recomputation)::

    model FLOPs per token     6 P + 12 L q s        (4 P for LoRA/QLoRA: frozen weights need no weight gradients)
    executed FLOPs per token  model FLOPs + the recomputed forward (full checkpointing: 2 P + 4 L q s;
                              selective: the attention core, 4 L q s)
    compute                   tokens per step x executed FLOPs / (GPUs x peak x HFU)

HFU is the hardware FLOPs utilisation of the framework that runs the step (executed FLOPs over peak;
``specs/rules/throughput.yaml`` ``training_hfu``); a framework's published MFU with recomputation is
HFU x model/executed FLOPs.

Pipeline parallelism (1F1B, Narayanan et al., arXiv:2104.04473 section 2.2): a bubble of
``(p - 1) / m`` of the compute, ``m`` micro-batches per step.

Communication per optimizer step, each call timed by :mod:`rigcheck.core.estimate.collectives` over
the path :mod:`rigcheck.core.estimate.topology` gives its group:

- DDP: one all-reduce of the gradients per step (accumulation under ``no_sync``), hidden behind the
  last micro-batch's backward (PyTorch DDP, Li et al., arXiv:2006.15704);
- ZeRO-1: reduce-scatter of the gradients and all-gather of the 16-bit parameters once per step;
  ZeRO-2 reduce-scatters every micro-batch (its gradient partitions hold one shard only); the
  reductions overlap the backward only with ``overlap_comm`` (DeepSpeed's default: off below stage 3),
  and the all-gather of the updated parameters runs inside ``step()``, after the optimizer, exposed
  (deepspeed/runtime/zero/stage_1_and_2.py ``step``: ``all_gather_dp_groups``);
- ZeRO-3 / FSDP full_shard: per micro-batch an all-gather of the 16-bit parameters in the forward,
  another in the backward, and a reduce-scatter of the gradients (ZeRO, arXiv:1910.02054 section
  5.2: 3 x the parameters per step; FSDP, arXiv:2304.11277); hybrid_shard shards within a node and
  all-reduces the shards across nodes; shard_grad_op keeps the parameters through the backward;
- tensor parallelism: 4 all-reduces of ``b x s x h`` activations per layer per micro-batch (2 with the
  forward, 2 with the backward; 2 more when the forward is recomputed), on the critical path
  (Megatron-LM, arXiv:1909.08053);
- pipeline stages send activations forward and gradients back (``b x s x h`` per micro-batch, at
  each of ``virtual_stages`` chunk boundaries when interleaved);
- context parallelism passes K and V around the ring (overlapped with attention); expert
  parallelism all-to-alls the routed tokens in and out of every MoE layer, twice more in backward.

Communication marked overlappable hides behind its compute window up to ``overlap`` of it; the rest
is exposed. Step time = compute + bubble + exposed communication; the range runs from the low HFU and
low overlap to the high ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rigcheck.core.estimate.collectives import Collective
from rigcheck.core.estimate.memory import MemoryInputs, Shards
from rigcheck.core.estimate.topology import Topology


class Efficiency(NamedTuple):
    """A factor at its default and at the pessimistic and optimistic ends, with where it came from."""

    default: float
    low: float
    high: float
    basis: str


class Flops(NamedTuple):
    """FLOPs per token: what the model needs, what runs (with the recomputed forward), the forward."""

    model: float
    executed: float
    forward: float

    @property
    def backward_share(self) -> float:
        """The share of a micro-batch's compute that is backward (where DDP's all-reduce hides)."""
        return max(0.0, 1 - self.forward / self.executed) if self.executed else 0.0


class StepTime(NamedTuple):
    """A training step's time: compute at the achievable FLOP rate, pipeline bubble and communication."""

    flops: Flops
    tokens_per_step: float  # the whole job's, per optimizer step
    gpus: int
    peak_tflops: float
    hfu: Efficiency
    overlap: Efficiency
    compute_seconds: float  # at the default HFU
    bubble_seconds: float
    collectives: tuple[Collective, ...]
    exposed: tuple[float, float, float]  # exposed communication: default, pessimistic, optimistic
    steps: tuple[float, float, float]  # step seconds: default, pessimistic, optimistic
    topology_known: bool
    micro_batches: int

    @property
    def model_flops_per_token(self) -> float:
        return self.flops.model

    @property
    def executed_flops_per_token(self) -> float:
        return self.flops.executed

    @property
    def step_seconds(self) -> float:
        return self.steps[0]

    @property
    def untimed(self) -> list[Collective]:
        """Collectives over a path the rig gives no bandwidth for (not in the step's time)."""
        return [item for item in self.collectives if not item.known]

    def tokens_per_second(self, which: int = 0) -> float:
        return self.tokens_per_step / self.steps[which]

    def exposed_for(self, chosen: Callable[[Collective], bool]) -> float:
        """The exposed seconds of the collectives ``chosen`` picks, as if they were the only ones."""
        items = [item for item in self.collectives if chosen(item)]
        return exposed_seconds(
            items, self.compute_seconds, self.micro_batches, self.flops.backward_share, self.overlap.default
        )

    @property
    def comm_share(self) -> float:
        """Exposed communication as a share of the compute (and bubble) it adds to."""
        return self.exposed[0] / max(1e-12, self.compute_seconds + self.bubble_seconds)

    @property
    def binds(self) -> str:
        if self.exposed[0] <= self.compute_seconds + self.bubble_seconds:
            return "compute"
        worst = max(self.collectives, key=lambda item: item.seconds)
        return f"communication ({worst.what} over {worst.over})"

    def parts(self) -> list[tuple[str, float]]:
        out = [("compute", self.compute_seconds)]
        if self.bubble_seconds:
            out.append(("pipeline bubble", self.bubble_seconds))
        if self.collectives and not self.untimed:  # a collective over no known path is not timed at 0 s
            out.append(("exposed communication", self.exposed[0]))
        return out


def flops_per_token(inputs: MemoryInputs, matmul: float, facts: Mapping[str, Any]) -> Flops:
    """Model FLOPs and executed FLOPs (with the recomputed forward) per token."""
    arch = inputs.arch
    passes = 4 if inputs.frozen_base else 6
    attention = 12 * arch.layers * arch.q_dim * inputs.seq_len
    model = passes * matmul + attention
    forward = 2 * matmul + attention / 3
    executed = model
    if inputs.activation_checkpointing == "full":
        executed += float(facts["recompute"]["full_extra_forward"]) * forward
    elif inputs.activation_checkpointing == "selective":
        executed += attention / 3
    return Flops(model, executed, forward)


def hfu_for(
    framework: str | None, facts: Mapping[str, Any], *, architecture: str = "", precision: str = ""
) -> Efficiency:
    """The framework's HFU (specs/rules/throughput.yaml ``training_hfu``), for this GPU generation
    and precision."""
    table = facts["training_hfu"]
    frameworks = table["frameworks"]
    key = framework if framework in frameworks else "default"
    generations = table["architectures"]
    generation = next(
        (name for name in generations if name != "default" and name.lower() in architecture.lower()),
        "default",
    )
    factor = float(generations[generation]) * float(table["precision"].get(precision, 1.0))
    default = float(frameworks[key]) * factor
    ranges = table["range_factors"]
    basis = f"framework {framework}" if key != "default" else "no framework named"
    if factor != 1.0:
        basis += f", x {factor:g} for {generation}" + (" at fp8" if precision in table["precision"] else "")
    return Efficiency(default, default * float(ranges["low"]), default * float(ranges["high"]), basis)


def _bytes(precision: str) -> int:
    return 4 if precision == "32-true" else 2


@dataclass
class _Calls:
    """Collects a step's collectives, each with the path its group takes."""

    topology: Topology
    out: list[Collective] = field(default_factory=list)

    def add(
        self, kind: str, ranks: int, stride: int, size: float, calls: float, what: str, **how: Any
    ) -> None:
        if ranks <= 1 and kind != "send":
            return
        path = self.topology.path(ranks, stride)
        self.out.append(
            Collective(
                kind,
                ranks,
                size,
                calls,
                path.busbw_gbps,
                path.latency_us,
                what,
                path.description,
                how.get("hidden", True),
                how.get("group", "data"),
                path.inter_node,
                how.get("every_micro_batch", True),
            )
        )


def collectives(inputs: MemoryInputs, topology: Topology) -> list[Collective]:
    """The collectives of one optimizer step, per GPU."""
    i, arch = inputs, inputs.arch
    shards = Shards(inputs)
    t, p, d = max(1, i.tp), max(1, i.pp), max(1, i.dp)
    micro = max(1, i.grad_accum)
    mp = t * p * max(1, i.cp)  # ranks of one model replica, innermost
    params16 = shards.params * _bytes(i.precision)  # this rank's model shard in 16 bits
    trainable: float
    if i.frozen_base:
        trainable = (
            arch.lora_params_per_layer(i.lora_rank, arch.lora_roles(i.lora_targets)) * shards.layers_local
        )
    else:
        trainable = shards.params
    grads = trainable * (
        4 if (i.precision == "32-true" or (i.precision.endswith("mixed") and not i.sharded)) else 2
    )
    calls = _Calls(topology)
    gather_fwd, gather_bwd = (
        "all-gather of the 16-bit parameters (forward)",
        "all-gather of the 16-bit parameters (backward)",
    )
    if d > 1:
        fsdp = i.fsdp if i.fsdp != "no_shard" else None
        if i.zero >= 3 or fsdp == "full_shard":
            calls.add("all-gather", d, mp, params16, micro, gather_fwd)
            calls.add("all-gather", d, mp, params16, micro, gather_bwd)
            calls.add("reduce-scatter", d, mp, grads, micro, "reduce-scatter of the gradients")
        elif fsdp == "hybrid_shard":
            group = max(1, min(d, topology.gpus_per_node // mp))
            calls.add("all-gather", group, mp, params16, micro, gather_fwd)
            calls.add("all-gather", group, mp, params16, micro, gather_bwd)
            calls.add("reduce-scatter", group, mp, grads, micro, "reduce-scatter of the gradients")
            calls.add(
                "all-reduce",
                d // group,
                mp * group,
                grads / group,
                micro,
                "all-reduce of the gradient shards across nodes",
            )
        elif fsdp == "shard_grad_op":
            calls.add("all-gather", d, mp, params16, micro, "all-gather of the 16-bit parameters")
            calls.add("reduce-scatter", d, mp, grads, micro, "reduce-scatter of the gradients")
        elif i.zero in (1, 2):
            # DeepSpeed ZeRO-1/2: the gradients are reduce-scattered in the backward (every micro-batch for
            # ZeRO-2, whose partitions hold one shard), on the compute stream unless overlap_comm (off by
            # default below stage 3); the updated 16-bit partitions are all-gathered inside step(), after
            # the optimizer, with nothing left to hide behind (stage_1_and_2.py step: all_gather_dp_groups)
            overlap = bool(i.deepspeed_overlap_comm)
            every = i.zero == 2
            calls.add(
                "reduce-scatter",
                d,
                mp,
                grads,
                micro if every else 1,
                "reduce-scatter of the gradients" + ("" if overlap else " (overlap_comm off)"),
                every_micro_batch=every,
                hidden=overlap,
            )
            gathered_ahead = i.param_gather_overlap  # Megatron's overlap_param_gather: in the next forward
            calls.add(
                "all-gather",
                d,
                mp,
                params16,
                1,
                "all-gather of the updated 16-bit parameters"
                + (" (overlapping the next forward)" if gathered_ahead else " (after the optimizer step)"),
                every_micro_batch=gathered_ahead,
                hidden=gathered_ahead,
            )
        else:
            calls.add(
                "all-reduce", d, mp, grads, 1, "all-reduce of the gradients (DDP)", every_micro_batch=False
            )
    activation = i.micro_batch * i.seq_len / max(1, i.cp) * arch.hidden * _bytes(i.precision)
    if t > 1:
        per_layer = 4 + (2 if i.activation_checkpointing == "full" else 0)
        calls.add(
            "all-reduce", t, 1, activation, per_layer * shards.layers_local * micro,
            f"tensor-parallel all-reduces ({per_layer} per layer)", hidden=False, group="tensor",
        )  # fmt: skip
    if p > 1:
        chunks = max(1, i.virtual_stages)  # interleaving sends at every chunk boundary
        calls.add(
            "send", 2, t, activation / t if i.sp else activation, 2 * micro * chunks,
            "pipeline sends (activations and their gradients)", hidden=False, group="pipeline",
        )  # fmt: skip
    if i.cp > 1:
        kv = 2 * i.micro_batch * i.seq_len / i.cp * arch.kv_dim * _bytes(i.precision)
        calls.add(
            "all-gather", i.cp, t, kv * i.cp, 3 * shards.layers_local * micro, "context-parallel K/V exchange",
            group="context",
        )  # fmt: skip
    if arch.experts > 1 and i.ep > 1:
        routed = i.micro_batch * i.seq_len * arch.top_k * arch.hidden * _bytes(i.precision)
        calls.add(
            "all-to-all", i.ep, mp, routed, 6 * shards.layers_local * micro, "expert-parallel all-to-all",
            hidden=False, group="expert",
        )  # fmt: skip
    return calls.out


def exposed_seconds(
    items: list[Collective], compute: float, micro_batches: int, backward_share: float, hide: float
) -> float:
    """What compute does not hide: collectives made once per step hide in the last micro-batch's
    backward, those made every micro-batch in all of the compute, each up to ``hide`` of its window;
    collectives on the critical path (tensor parallel, pipeline sends, expert all-to-alls) are all
    exposed."""
    once_window = compute / max(1, micro_batches) * backward_share
    once = sum(item.seconds for item in items if item.overlappable and not item.every_micro_batch)
    every = sum(item.seconds for item in items if item.overlappable and item.every_micro_batch)
    critical = sum(item.seconds for item in items if not item.overlappable)
    return critical + max(0.0, once - hide * once_window) + max(0.0, every - hide * compute)


def step_time(
    inputs: MemoryInputs,
    *,
    matmul: float,
    peak_tflops: float,
    facts: Mapping[str, Any],
    topology: Topology | None,
    architecture: str = "",
) -> StepTime:
    """The step of ``inputs`` on GPUs of ``peak_tflops`` (dense, at the workload's precision) and
    ``architecture`` (the catalog's: Ampere, Hopper, ...)."""
    flops = flops_per_token(inputs, matmul, facts)
    hfu = hfu_for(inputs.framework, facts, architecture=architecture, precision=inputs.precision)
    world = max(1, inputs.world)
    micro = max(1, inputs.grad_accum)
    tokens = inputs.micro_batch * inputs.seq_len * micro * max(1, inputs.dp)
    row = facts["communication"]["overlap"]
    overlap = Efficiency(float(row["default"]), float(row["low"]), float(row["high"]), "")
    # 1F1B: (p - 1) / m of the compute; interleaved over v chunks per stage: (p - 1) / (v m)
    # (Narayanan et al., arXiv:2104.04473 section 2.2)
    bubble = (inputs.pp - 1) / (micro * max(1, inputs.virtual_stages)) if inputs.pp > 1 else 0.0
    items = collectives(inputs, topology) if topology is not None else []
    results = []
    for efficiency, hide in (
        (hfu.default, overlap.default),
        (hfu.low, overlap.low),
        (hfu.high, overlap.high),
    ):
        compute = tokens * flops.executed / (world * peak_tflops * 1e12 * efficiency)
        exposed = exposed_seconds(items, compute, micro, flops.backward_share, hide)
        results.append((compute, exposed, compute * (1 + bubble) + exposed))
    return StepTime(
        flops,
        tokens,
        world,
        peak_tflops,
        hfu,
        overlap,
        results[0][0],
        results[0][0] * bubble,
        tuple(items),
        (results[0][1], results[1][1], results[2][1]),
        (results[0][2], results[1][2], results[2][2]),
        topology is not None and all(item.known for item in items),
        micro,
    )
