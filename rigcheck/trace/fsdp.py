"""FSDP for one rank of a traced job: PyTorch's FSDP2 ``fully_shard`` over a fake process group.

The fake process group (``torch.testing._internal.distributed.fake_pg``) answers every collective
at once without moving data, so rank 0 of an N-rank job runs alone: it holds 1/N of every
parameter, gathers each transformer block's parameters before using them and frees them after, and
reduce-scatters gradients, all with the tensor sizes of the real job.
``torch.distributed._tools.fsdp2_mem_tracker.FSDPMemTracker`` then sorts what it holds.

One adjustment: DTensor computes output shapes in a fake-tensor mode of its own, and reuses the
caller's when one is active; inside a fake-tensor trace its global-shape shadow tensors would be
counted as this rank's memory. While a trace runs, DTensor is given a fresh fake mode instead
(``torch/distributed/tensor/_sharding_prop.py``, ``detect_fake_mode() or FakeTensorMode()``), which
the tracker ignores, as it does in eager runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def fake_process_group(world: int) -> Iterator[Any]:
    """A one-dimensional CPU device mesh of ``world`` ranks on a fake process group (rank 0)."""
    import torch.distributed as dist
    import torch.distributed.tensor._sharding_prop as sharding_prop
    from torch.distributed.device_mesh import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise RuntimeError("a process group is already initialised in this process")
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    detect = sharding_prop.detect_fake_mode
    sharding_prop.detect_fake_mode = lambda *args, **kwargs: None
    try:
        yield init_device_mesh("cpu", (world,))
    finally:
        sharding_prop.detect_fake_mode = detect
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
