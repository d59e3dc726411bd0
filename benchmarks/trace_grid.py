"""Trace a grid of workloads on fake tensors: the analytic memory model's oracle.

    pip install -e '.[trace]' torch==2.13.0
    python benchmarks/trace_grid.py                 # all configurations, 2 worker processes
    python benchmarks/trace_grid.py --only gemma    # the ids that contain "gemma"
    python benchmarks/trace_grid.py --missing       # only ids not yet in the data file

Each configuration is a rigcheck workload. It is traced by ``rigcheck.trace`` (transformers' model
code, PEFT adapters, bitsandbytes 4-bit layers, FSDP2 over a fake process group) and the traced
live-tensor peak of rank 0, by category, is written to ``tests/data/traced/grid.yaml`` with the
versions of torch, transformers, peft and bitsandbytes that ran. ``tests/test_traced_grid.py``
holds the analytic estimate to these numbers.

The grid covers Llama-style GQA (Llama 3.2 1B, TinyLlama, Llama 3 8B), GPT-2 (GELU, learned
positions, dropout), Falcon (multi-query, parallel attention), Gemma (256k vocabulary, GeGLU,
multi-query), Qwen2.5 (QKV bias) and Mixtral (mixture of experts); full fine-tuning, LoRA, QLoRA and
inference; 32-true, bf16-mixed, bf16-true (and fp16 with loss scaling); checkpointing on and off;
eager and SDPA attention; several micro-batch x sequence sizes; FSDP over 1, 4 and 8 ranks; and the
optimizer in backward, chunked loss, activation offloading and gradient accumulation. Large models
keep their widths and run fewer layers (``model.layers``), so that a trace takes seconds; the
analytic model is given the same layer count.

A third of the ids (by a hash of the id, fixed before any formula was fitted) are held out: the
benchmark and the test report them separately, and they were not looked at while the formula was
being changed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUTPUT = ROOT / "tests" / "data" / "traced" / "grid.yaml"


def split_of(case_id: str) -> str:
    """``holdout`` for a third of the ids, by a hash fixed with the grid (never by result)."""
    digest = hashlib.sha256(case_id.encode()).digest()
    return "holdout" if digest[0] % 3 == 0 else "dev"


# -- the grid -------------------------------------------------------------------------------------------

#: (short name, model spec) - widths from the presets, fewer layers for the big ones.
MODELS = {
    "llama32-1b": {"preset": "llama-3.2-1b"},
    "tinyllama": {"preset": "tinyllama-1.1b"},
    "llama3-8b-4l": {"preset": "llama-3-8b", "layers": 4},
    "gpt2": {"preset": "gpt2-124m"},
    "falcon7b-4l": {"preset": "falcon-7b", "layers": 4},
    "gemma2b": {"preset": "gemma-2b"},
    "qwen25-05b": {"preset": "qwen2.5-0.5b"},
    "mixtral-2l": {"preset": "mixtral-8x7b", "layers": 2},
}
SIZES = ((1, 512), (4, 1024), (2, 2048), (8, 256), (1, 4096))
PRECISIONS = ("32-true", "bf16-mixed", "bf16-true")
LORA_MODELS = ("llama32-1b", "tinyllama", "llama3-8b-4l", "gpt2", "falcon7b-4l", "gemma2b", "qwen25-05b")
LORA_TARGETS = {"gpt2": ["c_attn"], "falcon7b-4l": ["query_key_value"]}
QLORA_MODELS = ("llama32-1b", "tinyllama", "llama3-8b-4l", "gemma2b", "qwen25-05b")
FSDP_MODELS = ("llama32-1b", "tinyllama", "llama3-8b-4l", "gemma2b")


def _pick(name: str, options: tuple[Any, ...], salt: str) -> Any:
    digest = hashlib.sha256(f"{name}/{salt}".encode()).digest()
    return options[digest[0] % len(options)]


def _workload(model: str, task: str, precision: str, micro: int, seq: int, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "model": dict(MODELS[model]),
        "task": task,
        "precision": precision,
        "optimizer": extra.pop("optimizer", "adamw" if task != "inference" else "none"),
        "attention": extra.pop("attention", "sdpa"),
        "activation_checkpointing": extra.pop("checkpointing", False),
        "optimizer_implementation": extra.pop("implementation", "foreach"),
        "activation_offloading": extra.pop("offloading", False),
        "loss": extra.pop("loss", "standard"),
        "framework": extra.pop("framework", "pytorch"),
    }
    if task == "inference":
        spec.pop("activation_checkpointing")
        spec.pop("optimizer_implementation")
        spec.pop("activation_offloading")
        spec.pop("loss")
        spec["inference"] = {"concurrency": micro, "context_len": seq, "engine": "transformers"}
    else:
        spec["batch"] = {"micro": micro, "seq_len": seq, "grad_accum": extra.pop("grad_accum", 1)}
    spec.update(extra)
    return spec


def grid() -> dict[str, dict[str, Any]]:
    """id -> workload fields."""
    out: dict[str, dict[str, Any]] = {}

    def add(case_id: str, spec: dict[str, Any]) -> None:
        if case_id in out:
            raise AssertionError(f"duplicate grid id {case_id}")
        out[case_id] = spec

    # A. Full fine-tuning on one GPU: every precision with checkpointing off and on, eager attention,
    #    and two more sizes.
    for model in MODELS:
        # transformers' grouped experts kernel takes bf16 only: the MoE model trains in bf16-true
        precisions = ("bf16-true",) if model == "mixtral-2l" else PRECISIONS
        for precision in precisions:
            for checkpointing in (False, True):
                micro, seq = _pick(model, SIZES, f"{precision}{checkpointing}")
                tag = "ac" if checkpointing else "noac"
                add(
                    f"{model}-full-{precision}-b{micro}s{seq}-{tag}",
                    _workload(model, "full_finetune", precision, micro, seq, checkpointing=checkpointing),
                )
        if model == "mixtral-2l":
            continue
        for checkpointing in (False, True):
            micro, seq = _pick(model, SIZES[:4], f"eager{checkpointing}")
            tag = "ac" if checkpointing else "noac"
            add(
                f"{model}-full-bf16-mixed-b{micro}s{seq}-{tag}-eager",
                _workload(
                    model,
                    "full_finetune",
                    "bf16-mixed",
                    micro,
                    seq,
                    checkpointing=checkpointing,
                    attention="eager",
                ),
            )
        for micro, seq in ((2, 512), (1, 2048)):
            add(
                f"{model}-full-bf16-mixed-b{micro}s{seq}-noac-size",
                _workload(model, "full_finetune", "bf16-mixed", micro, seq),
            )
    # B. LoRA: default targets and all linear layers, mixed and true 16-bit, checkpointing off and on.
    for model in LORA_MODELS:
        for precision in ("bf16-mixed", "bf16-true"):
            for checkpointing in (False, True):
                micro, seq = _pick(model, SIZES, f"lora{precision}{checkpointing}")
                targets = (
                    LORA_TARGETS.get(model, ["all-linear"]) if checkpointing else LORA_TARGETS.get(model)
                )
                tag = "ac" if checkpointing else "noac"
                lora: dict[str, Any] = {"rank": 16, "dropout": 0.05 if precision == "bf16-mixed" else 0.0}
                if targets:
                    lora["targets"] = targets
                add(
                    f"{model}-lora-{precision}-b{micro}s{seq}-{tag}"
                    + ("-all" if targets == ["all-linear"] else ""),
                    _workload(model, "lora", precision, micro, seq, checkpointing=checkpointing, lora=lora),
                )
        micro, seq = _pick(model, SIZES[:4], "lora32")
        add(
            f"{model}-lora-32-true-b{micro}s{seq}-noac",
            _workload(model, "lora", "32-true", micro, seq, lora={"rank": 8}),
        )
    # C. QLoRA (bitsandbytes NF4, double quantisation), with and without PEFT's fp32 upcast
    #    (prepare_model_for_kbit_training: qlora.kbit_training).
    for model in QLORA_MODELS:
        for checkpointing in (False, True):
            micro, seq = _pick(model, SIZES, f"qlora{checkpointing}")
            tag = "ac" if checkpointing else "noac"
            add(
                f"{model}-qlora-b{micro}s{seq}-{tag}",
                _workload(
                    model,
                    "qlora",
                    "bf16-mixed",
                    micro,
                    seq,
                    checkpointing=checkpointing,
                    lora={"rank": 16, "targets": ["all-linear"]},
                    framework="llama-factory",
                ),
            )
        micro, seq = _pick(model, SIZES[:3], "qlora-peft")
        add(
            f"{model}-qlora-b{micro}s{seq}-ac-peft-upcast",
            _workload(
                model,
                "qlora",
                "bf16-mixed",
                micro,
                seq,
                checkpointing=True,
                lora={"rank": 16},
                qlora={"kbit_training": True},
                framework="transformers",
            ),
        )
    # D. Inference: prefill and one decode step, static KV cache of the context length.
    for model in MODELS:
        for concurrency, context in ((1, 2048), (8, 4096), (32, 1024)):
            add(
                f"{model}-infer-c{concurrency}-ctx{context}",
                _workload(model, "inference", "bf16-mixed", concurrency, context),
            )
    for model in ("llama32-1b", "tinyllama", "llama3-8b-4l", "gemma2b"):
        add(
            f"{model}-infer-nf4-c4-ctx2048",
            _workload(model, "inference", "bf16-mixed", 4, 2048, quantization="nf4"),
        )
    # E. FSDP2 over 1, 4 and 8 ranks: full fine-tuning (mixed and bf16-true) and LoRA.
    for model in FSDP_MODELS:
        for ranks in (1, 4, 8):
            micro, seq = _pick(model, SIZES[:3], f"fsdp{ranks}")
            parallelism = {"dp": ranks, "fsdp": "full_shard"}
            add(
                f"{model}-fsdp{ranks}-full-bf16-mixed-b{micro}s{seq}-ac",
                _workload(
                    model,
                    "full_finetune",
                    "bf16-mixed",
                    micro,
                    seq,
                    checkpointing=True,
                    parallelism=parallelism,
                ),
            )
            add(
                f"{model}-fsdp{ranks}-lora-bf16-mixed-b{micro}s{seq}-ac",
                _workload(
                    model,
                    "lora",
                    "bf16-mixed",
                    micro,
                    seq,
                    checkpointing=True,
                    lora={"rank": 16, "targets": ["all-linear"]},
                    parallelism=parallelism,
                ),
            )
        micro, seq = _pick(model, SIZES[:3], "fsdp8-true")
        add(
            f"{model}-fsdp8-full-bf16-true-b{micro}s{seq}-noac",
            _workload(
                model, "full_finetune", "bf16-true", micro, seq, parallelism={"dp": 8, "fsdp": "full_shard"}
            ),
        )
    # F. Mechanisms: optimizer in backward, fused step, chunked loss, activation offloading,
    #    gradient accumulation, other optimizers, fp16 with loss scaling.
    for model in ("llama32-1b", "tinyllama", "gemma2b", "qwen25-05b"):
        micro, seq = _pick(model, SIZES[:4], "mech")
        add(
            f"{model}-full-bf16-true-b{micro}s{seq}-ac-inbwd",
            _workload(
                model,
                "full_finetune",
                "bf16-true",
                micro,
                seq,
                checkpointing=True,
                optimizer_in_backward=True,
            ),
        )
        add(
            f"{model}-full-bf16-true-b{micro}s{seq}-noac-fused",
            _workload(model, "full_finetune", "bf16-true", micro, seq, implementation="fused"),
        )
        add(
            f"{model}-full-bf16-mixed-b{micro}s{seq}-noac-chunked",
            _workload(model, "full_finetune", "bf16-mixed", micro, seq, loss="chunked"),
        )
        add(
            f"{model}-lora-bf16-true-b{micro}s{seq}-ac-offload",
            _workload(
                model,
                "lora",
                "bf16-true",
                micro,
                seq,
                checkpointing=True,
                offloading=True,
                lora={"rank": 16, "targets": ["all-linear"]},
            ),
        )
        add(
            f"{model}-full-bf16-mixed-b{micro}s{seq}-ac-accum4",
            _workload(model, "full_finetune", "bf16-mixed", micro, seq, checkpointing=True, grad_accum=4),
        )
    for model, optimizer in (
        ("llama32-1b", "sgd-momentum"),
        ("tinyllama", "adafactor"),
        ("gpt2", "sgd"),
        ("qwen25-05b", "adafactor"),
    ):
        micro, seq = _pick(model, SIZES[:4], optimizer)
        add(
            f"{model}-full-32-true-b{micro}s{seq}-noac-{optimizer}",
            _workload(model, "full_finetune", "32-true", micro, seq, optimizer=optimizer),
        )
    for model in ("llama32-1b", "gpt2", "tinyllama"):
        micro, seq = _pick(model, SIZES[:4], "fp16")
        add(
            f"{model}-full-16-mixed-b{micro}s{seq}-noac",
            _workload(model, "full_finetune", "16-mixed", micro, seq),
        )
    return out


# -- running ----------------------------------------------------------------------------------------------


def workload_document(case_id: str, spec: dict[str, Any]) -> Any:
    import json

    from rigcheck.core.spec.documents import parse_spec

    lines = ["apiVersion: rigcheck/v1", "kind: Workload", f"name: {case_id}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in spec.items()]
    return parse_spec("\n".join(lines) + "\n", f"{case_id}.yaml")


def resolved_inputs(case_id: str, spec: dict[str, Any]) -> Any:
    from rigcheck.core.estimate.architecture import resolve_architecture
    from rigcheck.core.estimate.estimate import memory_inputs

    document = workload_document(case_id, spec)
    arch = resolve_architecture(document.model.model, document=document)
    return memory_inputs(document.model, arch)


def inputs_record(inputs: Any) -> dict[str, Any]:
    from dataclasses import asdict

    values = asdict(inputs)
    values.pop("arch")
    values["layers"] = inputs.arch.layers
    return {key: list(value) if isinstance(value, tuple) else value for key, value in values.items()}


def run_one(case_id: str, spec: dict[str, Any]) -> dict[str, Any]:
    import warnings

    warnings.filterwarnings("ignore")
    from rigcheck.trace.step import trace_step

    inputs = resolved_inputs(case_id, spec)
    result = trace_step(inputs)
    record = result.as_dict()
    for key in ("versions", "not_seen"):
        record.pop(key)
    return {
        "id": case_id,
        "split": split_of(case_id),
        "workload": spec,
        "inputs": inputs_record(inputs),
        "trace": record,
        "versions": result.versions,
    }


def main(argv: list[str] | None = None) -> int:
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--only", help="trace only the ids that contain this text")
    parser.add_argument("--missing", action="store_true", help="trace only the ids not yet in the data file")
    parser.add_argument("--list", action="store_true", help="print the ids and exit")
    args = parser.parse_args(argv)
    cases = grid()
    if args.list:
        for case_id in cases:
            print(case_id, split_of(case_id))
        print(f"{len(cases)} configurations")
        return 0
    existing: dict[str, Any] = {}
    versions: dict[str, str] = {}  # of the cases kept from the data file
    if OUTPUT.exists():
        previous = yaml.safe_load(OUTPUT.read_text())
        existing = {entry["id"]: entry for entry in previous["cases"]}
        versions = dict(previous.get("versions") or {})
    chosen = {
        case_id: spec
        for case_id, spec in cases.items()
        if (not args.only or args.only in case_id) and not (args.missing and case_id in existing)
    }
    print(f"tracing {len(chosen)} of {len(cases)} configurations with {args.jobs} worker(s)", file=sys.stderr)
    started = time.monotonic()
    results = dict(existing)
    kept = set(existing) - set(chosen)
    failures = []
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
        futures = {pool.submit(run_one, case_id, spec): case_id for case_id, spec in chosen.items()}
        for done, future in enumerate(as_completed(futures), 1):
            case_id = futures[future]
            try:
                entry = future.result()
            except Exception as exc:  # a trace that fails is reported, the others go on
                failures.append((case_id, f"{type(exc).__name__}: {exc}"))
                print(
                    f"[{done}/{len(futures)}] {case_id}: FAILED {type(exc).__name__}: {exc}", file=sys.stderr
                )
                continue
            ran_with = entry.pop("versions")
            if kept and versions and ran_with != versions:  # the file's other cases ran on other versions
                entry["trace"]["versions"] = ran_with
            else:
                versions = ran_with
            results[case_id] = entry
            if done % 10 == 0:  # a long run keeps what it has
                _write(cases, results, versions, existing)
            print(
                f"[{done}/{len(futures)}] {case_id}: {entry['trace']['peak_gib']:.3f} GiB at the "
                f"{entry['trace']['phase']} ({entry['trace']['seconds']:.1f} s)",
                file=sys.stderr,
            )
    ordered = _write(cases, results, versions, existing)
    print(
        f"wrote {OUTPUT.relative_to(ROOT)}: {len(ordered)} cases, {len(failures)} failed, "
        f"{time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    for case_id, why in failures:
        print(f"  failed: {case_id}: {why}", file=sys.stderr)
    return 1 if failures else 0


def _write(
    cases: dict[str, Any], results: dict[str, Any], versions: dict[str, str], existing: dict[str, Any]
) -> list[Any]:
    import yaml

    ordered = [results[case_id] for case_id in cases if case_id in results]
    document = {
        "schema_version": 1,
        "generated_by": "python benchmarks/trace_grid.py",
        "generated_on": time.strftime("%Y-%m-%d"),
        "versions": versions,
        "basis": "live tensor bytes of rank 0 at the peak (torch MemTracker / FSDPMemTracker), "
        "the allocated basis of torch.cuda.max_memory_allocated",
        "cases": ordered,
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    header = (
        "# Traced per-GPU memory of a grid of workloads (benchmarks/trace_grid.py writes this file; do not edit).\n"
        "# Each case: the workload, the estimator inputs it resolved to, and the traced peak by category (GiB).\n"
    )
    OUTPUT.write_text(header + yaml.safe_dump(document, sort_keys=False, width=110))
    return ordered


if __name__ == "__main__":
    raise SystemExit(main())
