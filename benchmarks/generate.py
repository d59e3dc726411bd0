"""Generated specs for the benchmarks: a repository of rigs and workloads, and very large rigs.

    python benchmarks/generate.py repo OUT_DIR [N]      # N rigs + N workloads (default 1,000 each)
    python benchmarks/generate.py cluster OUT.yaml NODES # one rig, NODES listed one by one, 8 GPUs each

The repository cycles through realistic machines (workstations, 8-GPU servers, cloud nodes) and
workloads (LoRA, full fine-tuning, pre-training, serving), each workload naming its rig with
``runs_on``, so ``rigcheck lint`` checks N rigs alone and N pairs.
"""

from __future__ import annotations

import sys
from pathlib import Path

RIGS = [
    ("RTX 3090", 2, "{watts: 1600, efficiency: 80plus-gold}", 64, "full-tower"),
    ("RTX 4090", 1, "{watts: 1000, atx_version: '3.0', connectors: [12vhpwr]}", 64, "mid-tower"),
    ("L40S", 4, '{watts: 2000, count: 2, redundancy: "1+1"}', 512, "rackmount"),
    ("H100 SXM", 8, '{watts: 3300, count: 6, redundancy: "4+2"}', 2048, "rackmount"),
    ("A100 SXM 80GB", 8, '{watts: 3000, count: 6, redundancy: "3+3"}', 1024, "rackmount"),
]

WORKLOADS = [
    "model: {preset: llama-2-7b}\ntask: lora\nlora: {rank: 16}\nbatch: {micro: 2, seq_len: 2048}\n",
    "model: {preset: qwen-1.8b}\ntask: full_finetune\nbatch: {micro: 4, seq_len: 2048}\noptimizer: adamw\n",
    "model: {preset: gpt2-124m}\ntask: pretrain\nbatch: {micro: 16, seq_len: 1024}\ndata: {tokens: 1.0e9}\n",
    "model: {preset: llama-3-8b}\ntask: inference\ninference: {engine: vllm, concurrency: 8, context_len: 4096}\n",
]


def rig_text(index: int) -> str:
    model, count, psu, ram, form = RIGS[index % len(RIGS)]
    return (
        f"apiVersion: rigcheck/v1\nkind: Rig\nname: rig-{index:05d}\n"
        f"site:\n  circuit: {{volts: 230, amps: 16}}\n"
        f"nodes:\n  - name: node\n    gpus: {{model: {model}, count: {count}}}\n"
        f"    cpu: {{cores: 32, threads: 64, tdp_w: 280}}\n    memory_gib: {ram}\n"
        f"    psu: {psu}\n    chassis: {{form_factor: {form}}}\n"
        f"    storage:\n      - {{name: data, kind: nvme, capacity_gb: 4000, read_mb_s: 7000, write_mb_s: 5000}}\n"
        f"    software: {{os: linux, driver: '550.54.15', torch: '2.3.0+cu121'}}\n"
    )


def workload_text(index: int) -> str:
    return (
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: job-{index:05d}\n"
        f"runs_on: [../rigs/rig-{index:05d}.yaml]\n" + WORKLOADS[index % len(WORKLOADS)]
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
