#!/usr/bin/env bash
# The issue-12 CPU target: `tokamak train` with speed.layers=native and =fused against the plain PyTorch loop
# (experiments/bench/pytorch_loop.py) of the same model given the same malloc tuning, 4 layers × 256 wide,
# context 256, batch 8, 2 threads, fp32. The three run in turn, ROUNDS times (the machine is shared: read the
# min and median). Each run skips 5 warm-up steps and prints its mean step time over STEPS steps.
# Usage: experiments/kernels/cpu_vs_pytorch.sh [ROUNDS] [STEPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-3}
steps=${2:-10}
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
bin=${TOKAMAK_BIN:-$root/build/app/tokamak}
export XDG_DATA_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
shape=(--set model.n_layer=4 --set model.n_head=4 --set model.n_embd=256 --set model.context=256)
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for layers in native fused; do
    "$bin" train --no-store --json "${shape[@]}" --set train.batch_size=8 --set threads=2 --set speed.precision=fp32 \
        --set speed.layers=$layers --set train.steps=$((steps + 5)) --set train.log_every=1 --set eval.every=0 \
        --set sample.every=-1 --set schedule.warmup_steps=5 --set checkpoint.minutes=0 2>/dev/null |
      "$py" -c '
import json, sys
steps = [json.loads(l) for l in sys.stdin if "\"event\":\"step\"" in l]
timed = [s["step_ms"] for s in steps if s["step"] > 5]
ms = sum(timed) / len(timed)
print(f"round {sys.argv[1]} tokamak {sys.argv[2]}: {ms:.1f} ms/step, {8 * 256 / ms * 1000:,.0f} tok/s")
' "$round" "$layers"
  done
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647 \
    "$py" "$root/experiments/bench/pytorch_loop.py" --shape 4,4,256,256 --batch 8 --steps "$steps" |
    sed "s/^pytorch/round $round pytorch (same malloc settings as tokamak)/"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
