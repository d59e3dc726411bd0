"""Measure a real LoRA training step's memory, to hold rigcheck's estimate against.

    python benchmarks/device/lora_memory.py [--runs 4:1024 8:1024 8:1024:ac] [--steps 10]

The model has Llama 3.2 1B's shape, read from the ``llama-3.2-1b`` preset that the estimate uses
(``specs/models/presets.yaml``: 16 layers, hidden 2048, 32 heads, 8 KV heads, SwiGLU 8192, vocab
128,256, tied embeddings), built from a ``LlamaConfig`` with random weights, so nothing is
downloaded. It is trained as the Hugging Face stack trains a LoRA: base
weights in bf16 (``torch_dtype=bfloat16``), PEFT LoRA rank 16, alpha 32, dropout 0.05 on every
linear of every block (PEFT keeps the adapters in fp32), SDPA attention, bf16 autocast (what
``Trainer(bf16=True)`` does), fused AdamW over the adapters, the model's own loss (transformers
upcasts the logits to fp32). A run ``MICRO:SEQ[:ac]`` adds gradient checkpointing
(``use_reentrant=False``). Each prints one JSON line with the peak of
``torch.cuda.max_memory_allocated`` / ``max_memory_reserved`` over the timed steps.

Needs torch, transformers and peft with a CUDA GPU; ``--device cpu --tiny`` runs a small model on
the CPU, to test the script.
"""

from __future__ import annotations

import argparse
import json

import torch
from steps import llama_fields, measure_steps  # benchmarks/device/steps.py, beside this script

TINY = dict(
    num_hidden_layers=2,
    hidden_size=64,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    vocab_size=1000,
    tie_word_embeddings=True,
    max_position_embeddings=2048,
)
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _llama_32_1b() -> dict[str, object]:
    """LlamaConfig fields from the llama-3.2-1b preset."""
    return llama_fields("llama-3.2-1b")


def run(micro: int, seq: int, checkpointing: bool, steps: int, device: str, tiny: bool) -> dict[str, object]:
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(**(TINY if tiny else _llama_32_1b()))
    config._attn_implementation = "sdpa"
    with torch.device(device):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.config.use_cache = False
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model = get_peft_model(
        model,
        LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=TARGETS, task_type="CAUSAL_LM"),
    )
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    cuda = device.startswith("cuda")
    optimizer = torch.optim.AdamW(trainable, lr=2e-4, fused=cuda)
    ids = torch.randint(0, config.vocab_size, (micro, seq), device=device)

    def step() -> float:
        with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    measured = measure_steps(step, steps, cuda)
    result: dict[str, object] = {
        "model": "tiny llama" if tiny else "Llama 3.2 1B shape, random weights",
        "params": sum(p.numel() for p in model.parameters()),
        "trainable": sum(p.numel() for p in trainable),
        "adapter_dtype": str(trainable[0].dtype),
        "micro": micro,
        "seq": seq,
        "gradient_checkpointing": checkpointing,
    }
    result.update(measured, tokens_per_s=round(micro * seq / float(measured["step_s"]), 1))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", default=["4:1024", "8:1024", "8:1024:ac"], help="MICRO:SEQ[:ac]")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model, for testing the script")
    args = parser.parse_args()
    for spec in args.runs:
        micro, seq, *flags = spec.split(":")
        result = run(int(micro), int(seq), "ac" in flags, args.steps, args.device, args.tiny)
        print(json.dumps(result), flush=True)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
