"""The GPU-machine scripts (benchmarks/device/) on the CPU with a tiny model, so that they do not rot
between the rare runs on a lent GPU. The numbers they measure there are in docs/estimates.md."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import REPO

DEVICE = REPO / "benchmarks" / "device"


def _run(script: str, *args: str) -> list[dict[str, object]]:
    result = subprocess.run(
        [sys.executable, str(DEVICE / script), "--device", "cpu", "--tiny", "--steps", "2", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def test_train_memory_script_runs_on_the_cpu() -> None:
    pytest.importorskip("torch", reason="needs torch: pip install torch==2.13.0 (CI does)")
    small, large = _run("train_memory.py", "--micro", "2", "4", "--seq", "32")
    assert (small["micro"], large["micro"], small["seq"]) == (2, 4, 32)
    assert small["params"] == large["params"] == 166_144  # 2 layers, d=64, vocab 1,000, 32 positions, tied
    assert small["step_s"] > 0 and small["tokens_per_s"] == pytest.approx(2 * 32 / small["step_s"], rel=1e-3)
    assert "max_allocated_gib" not in small  # memory peaks are read on CUDA only


def test_lora_memory_script_runs_on_the_cpu() -> None:
    pytest.importorskip("torch", reason="needs torch")
    pytest.importorskip("peft", reason="needs transformers and peft (present on the GPU machine)")
    (result,) = _run("lora_memory.py", "--runs", "2:64:ac")
    assert result["gradient_checkpointing"] is True and result["adapter_dtype"] == "torch.float32"
    assert result["trainable"] == 32_768  # rank 16 on 7 linears of 2 tiny layers: 16 x (sum of d_in + d_out)


def test_grid_memory_script_runs_on_the_cpu() -> None:
    pytest.importorskip("torch", reason="needs torch")
    pytest.importorskip("peft", reason="needs transformers and peft (extra trace)")
    lora, qwen, gpt2 = _run("grid_memory.py")
    assert [r["case"] for r in (lora, qwen, gpt2)] == [
        "llama32-1b-lora-bf16-mixed-b4s1024-ac-all",
        "qwen25-05b-full-bf16-mixed-b2s2048-ac",
        "gpt2-full-bf16-mixed-b2s2048-noac",
    ]
    # the tiny GPT-2: one block at d=64, f=128 (LayerNorms 2 x 128, c_attn 64 x 192 + 192, c_proj 64 x 64 + 64,
    # c_fc 64 x 128 + 128, mlp c_proj 128 x 64 + 64), tied wte 1,000 x 64, wpe 1,024 x 64, ln_f 128
    block = 2 * 128 + (64 * 192 + 192) + (64 * 64 + 64) + (64 * 128 + 128) + (128 * 64 + 64)
    assert gpt2["params"] == 1000 * 64 + 1024 * 64 + block + 128 == 163_136
    assert all(r["tiny"] and r["traced_gib"] is None and r["step_s"] > 0 for r in (lora, qwen, gpt2))


def test_decode_speed_script_runs_on_the_cpu() -> None:
    pytest.importorskip("torch", reason="needs torch")
    pytest.importorskip("transformers", reason="needs transformers (extra trace)")
    result = subprocess.run(
        [
            sys.executable,
            str(DEVICE / "decode_speed.py"),
            "--device",
            "cpu",
            "--tiny",
            "--new",
            "4",
            "--prompt",
            "8",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    one, many = (json.loads(line) for line in result.stdout.splitlines() if line.startswith("{"))
    assert (one["batch"], many["batch"]) == (1, 32)
    assert many["tokens_per_s_total"] == pytest.approx(32 * many["tokens_per_s_per_seq"], rel=0.01)
    assert "estimate" not in one  # estimated on CUDA only
