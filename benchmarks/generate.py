"""Generated specs for the benchmarks: a repository of rigs and workloads, and very large rigs.

    python benchmarks/generate.py repo OUT_DIR [N]      # N rigs + N workloads (default 1,000 each)
    python benchmarks/generate.py cluster OUT.yaml NODES # one rig, NODES listed one by one, 8 GPUs each

The repository cycles through realistic machines (workstations, 8-GPU servers, cloud nodes) and
workloads (LoRA, full fine-tuning, pre-training, serving), each workload naming its rig with
``runs_on``, so ``rigcheck lint`` checks N rigs alone and N pairs. The numbers a real repository
would vary (host memory, cores, disk, circuit; micro-batch, sequence length, LoRA rank, concurrency,
tokens) are drawn per file from fixed lists, so that no two of the first 1,000 pairs are the same
and a cache keyed on what is checked (rigcheck keeps the memory estimates it has made) is not
flattered: with the templates alone there were only 20 distinct pairs (docs/performance.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

RIGS = [
    ("RTX 3090", 2, "{watts: 1600, efficiency: 80plus-gold}", 64, "full-tower"),
    ("RTX 4090", 1, "{watts: 1000, atx_version: '3.0', connectors: [12vhpwr]}", 64, "mid-tower"),
    ("L40S", 4, '{watts: 2000, count: 2, redundancy: "1+1"}', 512, "rackmount"),
    ("H100 SXM", 8, '{watts: 3300, count: 6, redundancy: "4+2"}', 2048, "rackmount"),
    ("A100 SXM 80GB", 8, '{watts: 3000, count: 6, redundancy: "3+3"}', 1024, "rackmount"),
]

WORKLOADS = [
    "model: {{preset: llama-2-7b}}\ntask: lora\nlora: {{rank: {rank}}}\nbatch: {{micro: {micro}, seq_len: {seq}}}\n",
    "model: {{preset: qwen-1.8b}}\ntask: full_finetune\nbatch: {{micro: {micro}, seq_len: {seq}}}\noptimizer: adamw\n",
    "model: {{preset: gpt2-124m}}\ntask: pretrain\nbatch: {{micro: {micro}, seq_len: {seq}}}\n"
    "data: {{tokens: {tokens}e9}}\n",
    "model: {{preset: llama-3-8b}}\ntask: inference\n"
    "inference: {{engine: vllm, concurrency: {concurrency}, context_len: {context}}}\n",
]


#: Per-file variations, indexed by ``index // len(RIGS)`` (rigs) or ``index // len(WORKLOADS)``
#: (workloads) so that each template meets every value.
RAM_SCALE = (1, 1.5, 2, 0.75, 3, 1.25)
CORES = (16, 24, 32, 48, 64)
DISK_GB = (1000, 2000, 3840, 4000, 7680, 15360, 960)
AMPS = (16, 20, 32, 13)
MICRO = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48)
SEQ = (512, 1024, 2048, 3072, 4096, 8192, 16384)
RANK = (4, 8, 16, 32, 64, 128)
CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CONTEXT = (1024, 2048, 4096, 8192, 16384, 32768)
TOKENS = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)


def _pick(values: tuple[Any, ...], step: int, stride: int = 1) -> Any:
    """The value for the ``step``-th file of a template, ``stride`` apart (co-prime with most list lengths)."""
    return values[(step * stride) % len(values)]


def rig_text(index: int) -> str:
    model, count, psu, ram, form = RIGS[index % len(RIGS)]
    step = index // len(RIGS)
    memory = int(ram * _pick(RAM_SCALE, step))
    cores = _pick(CORES, step, 3)
    return (
        f"apiVersion: rigcheck/v1\nkind: Rig\nname: rig-{index:05d}\n"
        f"site:\n  circuit: {{volts: 230, amps: {_pick(AMPS, step, 5)}}}\n"
        f"nodes:\n  - name: node\n    gpus: {{model: {model}, count: {count}}}\n"
        f"    cpu: {{cores: {cores}, threads: {2 * cores}, tdp_w: 280}}\n    memory_gib: {memory}\n"
        f"    psu: {psu}\n    chassis: {{form_factor: {form}}}\n"
        f"    storage:\n      - {{name: data, kind: nvme, capacity_gb: {_pick(DISK_GB, step, 2)}, "
        f"read_mb_s: {5000 + 500 * (step % 5)}, write_mb_s: 5000}}\n"
        f"    software: {{os: linux, driver: '550.54.15', torch: '2.3.0+cu121'}}\n"
    )


def workload_text(index: int) -> str:
    step = index // len(WORKLOADS)
    body = WORKLOADS[index % len(WORKLOADS)].format(
        micro=_pick(MICRO, step),
        seq=_pick(SEQ, step, 3),
        rank=_pick(RANK, step, 5),
        concurrency=_pick(CONCURRENCY, step, 2),
        context=_pick(CONTEXT, step, 5),
        tokens=_pick(TOKENS, step, 3),
    )
    return (
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: job-{index:05d}\n"
        f"runs_on: [../rigs/rig-{index:05d}.yaml]\n" + body
    )


def write_repo(root: Path, count: int) -> list[Path]:
    (root / "rigs").mkdir(parents=True, exist_ok=True)
    (root / "workloads").mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        rig = root / "rigs" / f"rig-{index:05d}.yaml"
        rig.write_text(rig_text(index), encoding="utf-8")
        job = root / "workloads" / f"job-{index:05d}.yaml"
        job.write_text(workload_text(index), encoding="utf-8")
        paths += [rig, job]
    return paths


def cluster_text(nodes: int, gpus_per_node: int = 8) -> str:
    """One rig with every node listed explicitly (as a merged inventory would be, before grouping)."""
    lines = [
        "apiVersion: rigcheck/v1",
        "kind: Rig",
        f"name: cluster-{nodes}",
        "site:",
        f"  rack_power_limit_kw: {max(40, nodes * 11)}",
        "nodes:",
    ]
    for index in range(nodes):
        lines += [
            f"  - name: node{index:05d}",
            f"    gpus: {{model: H100 SXM, count: {gpus_per_node}}}",
            "    gpu_interconnect: {kind: nvswitch}",
            "    cpu: {cores: 112, threads: 224, tdp_w: 700}",
            "    memory_gib: 2048",
            "    network: [{kind: infiniband, rate: ndr, count: 8, role: compute}]",
            "    software: {os: linux, driver: '550.54.15', torch: '2.3.0+cu121'}",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "repo":
        count = int(argv[2]) if len(argv) > 2 else 1000
        write_repo(Path(argv[1]), count)
        print(f"wrote {2 * count} files to {argv[1]}")
        return 0
    if len(argv) == 3 and argv[0] == "cluster":
        Path(argv[1]).write_text(cluster_text(int(argv[2])), encoding="utf-8")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
