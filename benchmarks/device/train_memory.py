"""Measure a real training step's memory and speed, to hold rigcheck's estimate against.

    python benchmarks/device/train_memory.py [--micro 8 16] [--seq 1024] [--steps 10]

The model is GPT-2 124M written as nanoGPT writes it (Karpathy, nanoGPT ``model.py``: 12 layers,
12 heads, d=768, vocab 50,257, tied embeddings, ``F.scaled_dot_product_attention`` with the causal
flag, so the flash kernel), trained as nanoGPT's ``train.py`` trains it: fp32 weights under bf16
autocast, fused AdamW, ``zero_grad(set_to_none=True)``. Random tokens stand in for data (memory and
speed do not depend on them). For each micro-batch it prints one JSON line: the peak of
``torch.cuda.max_memory_allocated`` / ``max_memory_reserved`` over the timed steps (the optimizer
states already exist), and tokens per second. ``benchmarks/device/proof.sh`` runs it beside
``rigcheck estimate`` of the same workload (``specs/workloads/gpt-125m-pretrain.yaml``).

Needs torch and a CUDA GPU; ``--device cpu --tiny`` runs a small model on the CPU, to test the script.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
from steps import measure_steps, preset  # benchmarks/device/steps.py, beside this script
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        x = x + self.drop(self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d)))
        return x + self.drop(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")))


class GPT(nn.Module):
    def __init__(self, layers: int, heads: int, d: int, vocab: int, block: int, dropout: float) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as GPT-2
        for module in self.modules():  # nanoGPT's initialisation: N(0, 0.02), zero biases
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(positions))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def _gpt2_124m(seq: int) -> dict[str, int]:
    shape = preset("gpt2-124m")
    return dict(
        layers=shape["layers"], heads=shape["heads"], d=shape["hidden"], vocab=shape["vocab"], block=seq
    )


def run(micro: int, seq: int, steps: int, device: str, tiny: bool, dropout: float) -> dict[str, object]:
    shape = dict(layers=2, heads=2, d=64, vocab=1000, block=seq) if tiny else _gpt2_124m(seq)
    torch.manual_seed(0)
    model = GPT(**shape, dropout=dropout).to(device)
    params = sum(p.numel() for p in model.parameters())
    cuda = device.startswith("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=cuda)
    vocab = int(shape["vocab"])
    idx = torch.randint(0, vocab, (micro, seq), device=device)
    targets = torch.randint(0, vocab, (micro, seq), device=device)

    def step() -> float:
        with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=torch.bfloat16):
            loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    measured = measure_steps(step, steps, cuda)
    result: dict[str, object] = {
        "model": "gpt2-124m (nanoGPT)" if not tiny else "tiny",
        "params": params,
        "micro": micro,
        "seq": seq,
        "dropout": dropout,
        "precision": "fp32 weights, bf16 autocast",
        "optimizer": "adamw (fused)" if cuda else "adamw",
    }
    result.update(measured, tokens_per_s=round(micro * seq / float(measured["step_s"]), 1))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--micro", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model, for testing the script")
    args = parser.parse_args()
    for micro in args.micro:
        print(json.dumps(run(micro, args.seq, args.steps, args.device, args.tiny, args.dropout)), flush=True)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # the next size starts from an empty cache


if __name__ == "__main__":
    main()
