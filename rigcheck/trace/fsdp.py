"""FSDP for one rank of a traced job: PyTorch's FSDP2 ``fully_shard`` over a fake process group.

The fake process group (``torch.testing._internal.distributed.fake_pg``) answers every collective
at once without moving data, so rank 0 of an N-rank job runs alone: it holds 1/N of every
parameter, gathers each transformer block's parameters before using them and frees them after, and
reduce-scatters gradients, all with the tensor sizes of the real job.
``torch.distributed._tools.fsdp2_mem_tracker.FSDPMemTracker`` then sorts what it holds.

DTensor computes its output shapes on fake tensors of the caller's fake mode
(``torch/distributed/tensor/_sharding_prop.py``). On torch 2.13 none of them shows in the trace: peaks,
breakdowns and phase peaks are the same as when DTensor is given a fake mode of its own (measured on
full_shard, shard_grad_op and LoRA + FSDP; tests/test_trace.py holds the FSDP shard sizes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def fake_process_group(world: int) -> Iterator[Any]:
    """A one-dimensional CPU device mesh of ``world`` ranks on a fake process group (rank 0)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise RuntimeError("a process group is already initialised in this process")
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    try:
        yield init_device_mesh("cpu", (world,))
    finally:
        dist.destroy_process_group()


def shard(model: Any, mesh: Any, *, param_dtype: Any, reduce_dtype: Any, reshard_after_forward: bool) -> None:
    """``fully_shard`` each transformer block, then the whole model (torchtitan's and torchtune's
    wrapping: one FSDP unit per block; embeddings, final norm and head in the root unit)."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    from rigcheck.trace.models import transformer_blocks

    policy = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype)
    for block in transformer_blocks(model):
        fully_shard(block, mesh=mesh, mp_policy=policy, reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh, mp_policy=policy, reshard_after_forward=reshard_after_forward)
