"""The measuring loop train_memory.py and lora_memory.py share: warm up, reset the peak counters,
time the steps, read the peaks.

Warm-up steps come first so that the optimizer states exist and kernels are chosen before the
peak is counted: ``torch.cuda.max_memory_allocated`` and ``max_memory_reserved`` after
``reset_peak_memory_stats`` (PyTorch, "CUDA semantics: memory management"), and the device's used
memory from ``torch.cuda.mem_get_info`` (what nvidia-smi shows for this process and the context).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import yaml

GIB = 2**30
PRESETS = Path(__file__).resolve().parents[2] / "specs" / "models" / "presets.yaml"


def preset(model_id: str) -> dict[str, Any]:
    """A model's shape from specs/models/presets.yaml: the same numbers rigcheck estimates with."""
    models = yaml.safe_load(PRESETS.read_text(encoding="utf-8"))["models"]
    return next(model for model in models if model["id"] == model_id)


def llama_fields(model_id: str) -> dict[str, Any]:
    """LlamaConfig fields from a preset's shape (rope and norm settings change neither memory nor speed)."""
    shape = preset(model_id)
    return dict(
        num_hidden_layers=shape["layers"],
        hidden_size=shape["hidden"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        intermediate_size=shape["ffn"],
        vocab_size=shape["vocab"],
        tie_word_embeddings=shape.get("tied_embeddings", False),
        max_position_embeddings=shape.get("max_position", 4096),
    )


def measure_steps(step: Callable[[], float], steps: int, cuda: bool, warmup: int = 3) -> dict[str, object]:
    """Run ``step`` (one training step, returning its loss) ``warmup`` times, then ``steps`` timed
    times; the loss, seconds per step and, on CUDA, the peak memory of the timed steps."""
    for _ in range(warmup):
        loss = step()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    for _ in range(steps):
        loss = step()
    if cuda:
        torch.cuda.synchronize()
    seconds = (time.perf_counter() - started) / steps
    assert math.isfinite(loss), loss
    result: dict[str, object] = {
        "loss": round(loss, 4),
        "step_s": round(seconds, 5),
        "torch": torch.__version__,
    }
    if cuda:
        free, total = torch.cuda.mem_get_info()
        result.update(
            max_allocated_gib=round(torch.cuda.max_memory_allocated() / GIB, 3),
            max_reserved_gib=round(torch.cuda.max_memory_reserved() / GIB, 3),
            device_used_gib=round((total - free) / GIB, 3),
            gpu=torch.cuda.get_device_name(0),
        )
    return result
