"""How the model is split over GPUs: tensor and pipeline parallel shards, expert parallelism, and the
ZeRO / FSDP sharding degree (docs/research/vram.md section 7; ZeRO paper, arXiv:1910.02054)."""

from __future__ import annotations

import math

from rigcheck.core.estimate.memory.inputs import MemoryInputs


class Shards:
    """Parameters on one GPU before ZeRO/FSDP sharding, and the sharding degree ``shard``.

    ``blocks`` and ``outer`` (embeddings, head, final norm) are this rank's parameters after TP, PP
    and EP; ``linear`` the block linears among them (what QLoRA and GPTQ quantise); ``shard`` the
    number of ranks that split every state (ZeRO, FSDP), ``unit`` the largest FSDP/ZeRO-3 unit that
    is gathered whole (one transformer block) and ``root`` the parameters outside the blocks, which
    FSDP keeps gathered from the forward to the end of backward (FSDP2's root module).
    """

    def __init__(self, inputs: MemoryInputs) -> None:
        arch = inputs.arch
        self.layers_local = stage_layers(arch.layers, inputs.pp, inputs.stage)
        layer_share = self.layers_local / arch.layers
        experts_local = arch.experts / max(1, inputs.ep)
        mlp = arch.mlp_params_per_expert * (experts_local + arch.shared_experts)
        router = arch.hidden * arch.experts if arch.experts > 1 else 0
        # tensor parallelism splits the linears; every rank holds the norm weights and the router whole
        # (Megatron-LM: LayerNorm and router parameters are replicated across the TP group)
        self.per_layer = (arch.attention_params + mlp) / inputs.tp + arch.norm_params + router
        self.mlp_per_layer = mlp / inputs.tp  # one block's MLP linears on this rank (its local experts)
        cross = arch.decoder_layers * (arch.attention_params + arch.hidden)
        self.blocks = (arch.layers * self.per_layer + cross / inputs.tp) * layer_share
        embedding, head = arch.embedding_params / inputs.tp, arch.head_params / inputs.tp
        if inputs.pp == 1:
            self.outer = embedding + head + arch.hidden
        elif inputs.stage is None:  # the worst stage: the first holds the embedding, the last the head
            self.outer = max(embedding, head if head else embedding) + arch.hidden
        else:  # a tied head is a copy of the embedding on the last stage (Megatron-LM's shared embedding)
            first = embedding if inputs.holds_embedding else 0.0
            last = (head if head else embedding) + arch.hidden if inputs.holds_head else 0.0
            self.outer = first + last
        self.params = self.blocks + self.outer
        experts_share = (experts_local + arch.shared_experts) / (arch.experts + arch.shared_experts)
        linear = arch.linear_params - arch.layers * arch.mlp_params_per_expert * (
            arch.experts + arch.shared_experts
        ) * (1 - experts_share)
        self.linear = linear * layer_share / inputs.tp
        self.shard = shard_count(inputs)
        self.unit = self.per_layer
        self.root = self.outer

    @property
    def block_linear_per_layer(self) -> float:
        return self.linear / max(1, self.layers_local)


def stage_layers(layers: int, pp: int, stage: int | None) -> int:
    """Transformer blocks on pipeline stage ``stage`` of ``pp``: an even split, the remainder one more on
    each of the first stages (``torch.distributed.pipelining``'s and torchtitan's even split of the layer
    list; Megatron-LM asks that they divide); None: the most any stage holds."""
    if stage is None:
        return math.ceil(layers / pp)
    base, extra = divmod(layers, pp)
    return base + (1 if stage < extra else 0)


def shard_count(inputs: MemoryInputs) -> int:
    """Ranks that split the states: dp for ZeRO and FSDP full/grad-op sharding, the GPUs of a node for
    hybrid sharding (FSDP HYBRID_SHARD shards within a node, replicates across nodes)."""
    if inputs.fsdp == "hybrid_shard":
        return max(1, min(inputs.dp, inputs.gpus_per_node))
    if inputs.zero or inputs.fsdp in ("full_shard", "shard_grad_op"):
        return max(1, inputs.dp)
    return 1
