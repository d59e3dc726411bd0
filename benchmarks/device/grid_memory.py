"""Measure real steps of traced grid workloads on a GPU, to hold the trace (and the estimate) against.

    python benchmarks/device/grid_memory.py [--cases ID ...] [--steps 3]

Each case is a workload of tests/data/traced/grid.yaml. Its model is built from the same
transformers configuration the trace used (``rigcheck.trace.models.build_config``) with random
weights on the GPU, and trained as the trace ran it: the workload's precision (bf16-mixed: fp32
weights under bf16 autocast; bf16-true: bf16 weights), attention kernel, gradient checkpointing
(``use_reentrant=False``), PEFT LoRA where the task is ``lora``, foreach AdamW, the model's own loss.
After warm-up steps (the optimizer states exist, as in the trace's steady state) the peak of
``torch.cuda.max_memory_allocated`` over the timed steps is printed as one JSON line per case, beside
the trace's peak and the analytic estimate (both on the allocated basis).

Needs torch with CUDA, transformers and peft; ``--device cpu --tiny`` shrinks each model to one
small layer and runs on the CPU, to test the script.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import torch
from steps import measure_steps  # benchmarks/device/steps.py, beside this script

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: Three single-GPU workloads of different families and tasks (LoRA with checkpointing, full
#: fine-tuning with checkpointing, full fine-tuning without), small enough for one GPU in minutes.
DEFAULT_CASES = (
    "llama32-1b-lora-bf16-mixed-b4s1024-ac-all",
    "qwen25-05b-full-bf16-mixed-b2s2048-ac",
    "gpt2-full-bf16-mixed-b2s2048-noac",
)
GIB = 2**30


def _case(case_id: str) -> dict:  # type: ignore[type-arg]
    from tests.traced_grid import load_grid

    return next(case for case in load_grid()["cases"] if case["id"] == case_id)


def _tiny(arch):  # type: ignore[no-untyped-def]
    kv = 2 if arch.kv_heads < arch.heads else 4
    return replace(arch, layers=1, hidden=64, heads=4, kv_heads=kv, head_dim=16, ffn=128, vocab=1000)


def run(case_id: str, steps: int, device: str, tiny: bool) -> dict[str, object]:
    from rigcheck.core.estimate.memory import estimate_memory
    from rigcheck.trace.models import build_config
    from tests.traced_grid import inputs_of

    case = _case(case_id)
    inputs = inputs_of(case)
    if tiny:
        inputs = replace(inputs, arch=_tiny(inputs.arch), micro_batch=1, seq_len=32)
    if (
        not inputs.training
        or inputs.fsdp
        or inputs.task == "qlora"
        or inputs.precision not in ("bf16-mixed", "bf16-true")
    ):
        raise SystemExit(f"{case_id}: this script runs single-GPU bf16 full fine-tuning and LoRA cases only")
    import transformers

    torch.manual_seed(0)
    config = build_config(inputs.arch, attention=inputs.attention)
    mixed = inputs.precision == "bf16-mixed"
    frozen = inputs.task == "lora"
    dtype = torch.bfloat16 if (frozen or not mixed) else torch.float32  # a LoRA base loads in bf16
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.config.use_cache = False
    if inputs.activation_checkpointing != "none":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if frozen:
            model.enable_input_require_grads()
    if frozen:
        from peft import LoraConfig, get_peft_model

        targets = "all-linear" if "all-linear" in inputs.lora_targets else list(inputs.lora_targets)
        lora = LoraConfig(r=inputs.lora_rank, lora_dropout=inputs.lora_dropout, target_modules=targets)
        model = get_peft_model(model, lora)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    cuda = device.startswith("cuda")
    optimizer = torch.optim.AdamW(trainable, lr=1e-4, foreach=True)
    ids = torch.randint(0, config.vocab_size, (inputs.micro_batch, inputs.seq_len), device=device)

    def step() -> float:
        with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=torch.bfloat16, enabled=mixed):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    measured = measure_steps(step, steps, cuda, warmup=2)
    analytic = estimate_memory(inputs)
    result: dict[str, object] = {
        "case": case_id,
        "tiny": tiny,
        "params": sum(p.numel() for p in model.parameters()),
        "traced_gib": None if tiny else float(case["trace"]["peak_gib"]),
        "analytic_allocated_gib": round(analytic.allocated / GIB, 3),
    }
    result.update(measured)
    if cuda and not tiny:
        result["measured_vs_trace"] = round(
            float(measured["max_allocated_gib"]) / float(case["trace"]["peak_gib"]) - 1, 4
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="one small layer, for testing the script")
    args = parser.parse_args()
    for case_id in args.cases:
        print(json.dumps(run(case_id, args.steps, args.device, args.tiny)), flush=True)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
