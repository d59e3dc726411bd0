#!/usr/bin/env bash
# The live side on a real GPU machine, in one prepared run (for the `device` tool, or any GPU box).
#
#   bash benchmarks/device/proof.sh            # results under $OUT (default /tmp/rigcheck-proof)
#
# Expects python3 with torch (CUDA) and nvidia-ml-py, and either rigcheck installed or wheels in
# .whl/ (rigcheck, rigcheck-site-policy and the core dependencies; see docs/live.md). Steps:
#   1. the machine's own tool outputs (nvidia-smi table, -q, -q -x, topo, nvlink, csv query, nvcc,
#      torch collect_env), kept as evidence files and as parser fixtures;
#   2. rigcheck probe (NVML, torch, host) -> probe.yaml, validated;
#   3. rigcheck measure (copies, peers, all-reduce) -> measure.json;
#   4. rigcheck check of the probed rig against every tool output and the measurement;
#   5. rigcheck check / estimate of shipped workloads on the probed rig;
#   6. real training steps beside rigcheck's estimate: GPT-2 124M (train_memory.py) and a LoRA of a
#      Llama 3.2 1B-shaped model (lora_memory.py; the estimates for it are in docs/estimates.md), and three
#      traced grid workloads (grid_memory.py: measured peak beside the trace and the estimate), and decode
#      speed at batch 1 and 32 (decode_speed.py, beside the estimate);
#   7. the 32,768-GPU rig of benchmarks/ timed on this machine's CPU;
#   8. the test suite on this machine's Python and packages.
# Each step is time-limited and logged; a failing step does not stop the others.
set -u
OUT=${OUT:-/tmp/rigcheck-proof}
mkdir -p "$OUT"
WORK=$(mktemp -d)
TOOLS=$WORK/tools
mkdir -p "$TOOLS"
export PYTHONUNBUFFERED=1 NO_COLOR=1

if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
fi
RIGCHECK="python3 -m rigcheck"

step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
run() { local limit=$1; shift; timeout "$limit" "$@"; echo "--- exit $?"; }

{
  step "machine"
  uname -sr; nproc; python3 --version
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
  python3 -c "import importlib.metadata as m; print('nvidia-ml-py', m.version('nvidia-ml-py'))"
  $RIGCHECK --version

  step "tool outputs"
  nvidia-smi > "$TOOLS/nvidia-smi.txt"; echo "--- table $?"
  nvidia-smi -q > "$TOOLS/nvidia-smi-q.txt"; echo "--- -q $?"
  nvidia-smi -q -x > "$TOOLS/nvidia-smi-q.xml"; echo "--- -q -x $?"
  nvidia-smi topo -m > "$TOOLS/topo-m.txt"; echo "--- topo -m $?"
  nvidia-smi topo -p2p r > "$TOOLS/topo-p2p.txt"; echo "--- topo -p2p $?"
  nvidia-smi nvlink -s > "$TOOLS/nvlink-s.txt"; echo "--- nvlink -s $?"
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,power.limit,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.mode.current,temperature.gpu,clocks.max.sm --format=csv > "$TOOLS/query-gpu.csv"; echo "--- csv $?"
  nvcc -V > "$TOOLS/nvcc.txt"; echo "--- nvcc $?"
  timeout 120 python3 -m torch.utils.collect_env > "$TOOLS/collect_env.txt" 2>&1; echo "--- collect_env $?"
  cat "$TOOLS/nvidia-smi.txt" "$TOOLS/topo-m.txt"

  step "probe"
  run 120 $RIGCHECK probe -o "$OUT/probe.yaml"
  run 60 $RIGCHECK validate "$OUT/probe.yaml"

  step "measure"
  run 180 $RIGCHECK measure --size-mib 1024 --iterations 5 -o "$OUT/measure.json"

  step "check the probed rig against the tool outputs and the measurement"
  evidence=()
  for f in "$TOOLS"/*; do evidence+=(--evidence "$f"); done
  run 120 $RIGCHECK check "$OUT/probe.yaml" "${evidence[@]}" --evidence "$OUT/measure.json" --evidence "$OUT/probe.yaml" -v \
    -f json -o "$OUT/check.json" -f text

  step "shipped workloads on the probed rig"
  for workload in gpt-125m-pretrain llama-2-7b-lora-4090 qwen-1.8b-lora llama-3-70b-serving; do
    run 60 $RIGCHECK check "$OUT/probe.yaml" "$workload"
  done

  step "a real training step beside the estimate"
  sed 's/micro: 8/micro: 16/' specs/workloads/gpt-125m-pretrain.yaml > "$WORK/gpt2-b16.yaml"
  sed '/preset: gpt2-124m/a\  dropout: false' specs/workloads/gpt-125m-pretrain.yaml > "$WORK/gpt2-b8-nodrop.yaml"
  for workload in specs/workloads/gpt-125m-pretrain.yaml "$WORK/gpt2-b16.yaml" "$WORK/gpt2-b8-nodrop.yaml"; do
    run 60 $RIGCHECK estimate "$workload" --rig "$OUT/probe.yaml"
  done
  run 240 python3 benchmarks/device/train_memory.py --micro 8 16 --dropout 0.1 --steps 10
  run 120 python3 benchmarks/device/train_memory.py --micro 8 --dropout 0.0 --steps 10
  run 240 python3 benchmarks/device/lora_memory.py --runs 4:1024 8:1024 8:1024:ac --steps 10
  step "traced grid workloads, measured (torch.cuda.max_memory_allocated vs the trace)"
  run 300 python3 benchmarks/device/grid_memory.py --steps 3
  step "decode speed of a random-weight Llama 3.2 1B at batch 1 and 32, beside the estimate"
  run 300 python3 benchmarks/device/decode_speed.py --batches 1 32

  step "scale: one rig of 4,096 nodes x 8 GPUs on this machine's CPU"
  python3 benchmarks/generate.py cluster "$WORK/cluster.yaml" 4096 >/dev/null
  TIMEFORMAT="--- %R s wall"
  for _ in 1 2 3; do time $RIGCHECK check "$WORK/cluster.yaml" -f json -o /dev/null; done

  step "test suite"
  export PIP_NO_INDEX=1
  run 240 python3 -m pytest -q -p no:cacheprovider -rfE --maxfail=30 --ignore=tests/test_packaging.py  # no network there to build the wheel
} 2>&1 | tee "$OUT/log.txt"

tar czf "$OUT/tool-outputs.tgz" -C "$WORK" tools
