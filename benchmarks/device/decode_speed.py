"""Measure batch-1 and batch-32 decoding of a random-weight Llama-shaped model, beside rigcheck's estimate.

    python benchmarks/device/decode_speed.py [--preset llama-3.2-1b] [--batches 1 32] [--new 128]

The model has the preset's shape (specs/models/presets.yaml, the numbers rigcheck estimates with), is
built from a ``LlamaConfig`` with random weights in bf16 on the GPU (nothing downloaded), and decodes
``--new`` tokens after a ``--prompt``-token prompt with transformers' static KV cache, the way
``generate`` runs it (engine ``transformers``). Each run prints one JSON line: measured tokens/s per
sequence and in all (CUDA-synchronised wall time of the decode steps, after a warm-up), and rigcheck's
estimate for the same workload on this GPU (catalog lookup of ``torch.cuda.get_device_name``).

Needs torch with CUDA and transformers; ``--device cpu --tiny`` runs a small model on the CPU to test
the script (no estimate then).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from steps import llama_fields  # benchmarks/device/steps.py, beside this script

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(
    num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128
)


def _config(name: str, tiny: bool):  # type: ignore[no-untyped-def]
    from transformers import LlamaConfig

    values = llama_fields(name)
    if tiny:
        values.update(TINY, vocab_size=1000)
    return LlamaConfig(**values)


def measure(name: str, batch: int, prompt: int, new: int, device: str, tiny: bool) -> dict[str, object]:
    from transformers import LlamaForCausalLM, StaticCache

    torch.manual_seed(0)
    config = _config(name, tiny)
    config._attn_implementation = "sdpa"
    with torch.device(device):
        model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, config.vocab_size, (batch, prompt), device=device)
    cuda = device.startswith("cuda")

    def run() -> float:
        cache = StaticCache(config=config, max_cache_len=prompt + new)
        with torch.no_grad():
            out = model(
                input_ids=ids, past_key_values=cache, use_cache=True, cache_position=torch.arange(prompt)
            )
            token = out.logits[:, -1:].argmax(-1)
            if cuda:
                torch.cuda.synchronize()
            started = time.perf_counter()
            for step in range(new):
                position = torch.tensor([prompt + step], device=device)
                out = model(input_ids=token, past_key_values=cache, use_cache=True, cache_position=position)
                token = out.logits[:, -1:].argmax(-1)
            if cuda:
                torch.cuda.synchronize()
        return time.perf_counter() - started

    run()  # warm-up
    seconds = run()
    per_seq = new / seconds
    result: dict[str, object] = {
        "preset": "tiny" if tiny else name,
        "batch": batch,
        "prompt": prompt,
        "new_tokens": new,
        "tokens_per_s_per_seq": round(per_seq, 2),
        "tokens_per_s_total": round(per_seq * batch, 1),
        "torch": torch.__version__,
    }
    if cuda and not tiny:
        result["gpu"] = torch.cuda.get_device_name(0)
        result["estimate"] = estimate(name, batch, prompt, new, torch.cuda.get_device_name(0))
    return result


def estimate(name: str, batch: int, prompt: int, new: int, gpu_name: str) -> dict[str, object]:
    """rigcheck's decode estimate for the same workload on this GPU."""
    sys.path.insert(0, str(ROOT))
    from rigcheck.core.catalog.catalog import Catalog, load_catalog_file
    from rigcheck.core.estimate.estimate import estimate_workload
    from rigcheck.core.spec.documents import parse_spec
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    gpu = catalog.lookup(gpu_name)
    text = (
        "apiVersion: rigcheck/v1\nkind: Workload\nname: d\n"
        f"model: {{preset: {name}}}\ntask: inference\nprecision: bf16-true\n"
        f"inference: {{engine: transformers, concurrency: {batch}, prompt_len: {prompt}, output_len: {new}, "
        f"context_len: {prompt + new}}}\n"
    )
    speed = estimate_workload(parse_spec(text, "d.yaml").model, gpu=gpu).decode
    return {
        "gpu": gpu.name,
        "tokens_per_s_per_seq": round(speed.tokens_per_second_per_seq.default, 2),
        "range": [
            round(speed.tokens_per_second_per_seq.low, 2),
            round(speed.tokens_per_second_per_seq.high, 2),
        ],
        "binds": speed.binds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="llama-3.2-1b")
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--new", type=int, default=128)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model, for testing the script")
    args = parser.parse_args()
    for batch in args.batches:
        print(
            json.dumps(measure(args.preset, batch, args.prompt, args.new, args.device, args.tiny)), flush=True
        )


if __name__ == "__main__":
    main()
