#!/usr/bin/env bash
# Tokamak's `tokamak train` against a plain PyTorch loop of the same model (experiments/bench/pytorch_loop.py)
# on the same CPU with the same torch 2.11, fp32 and bf16. Usage: cpu_vs_pytorch.sh [PRESET] [BATCH] [STEPS]
# Both skip the first 5 steps (warm-up) and report the mean step time of the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
preset=${1:-nano}
batch=${2:-16}
steps=${3:-25}
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
bin=${TOKAMAK_BIN:-$root/build/app/tokamak}
export XDG_DATA_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
for precision in fp32 bf16; do
  "$bin" train --no-store --json --preset "$preset" --set train.batch_size="$batch" --set train.steps=$((steps + 5)) \
      --set opt.precision=$precision --set train.log_every=5 --set train.eval_every=0 --set train.sample_every=-1 \
      --set train.warmup_steps=5 2>/dev/null |
    "$py" -c '
import json, sys
steps = [json.loads(l) for l in sys.stdin if "\"step\"" in l and "\"event\":\"step\"" in l]
timed = [s for s in steps if s["step"] > 5 and s["step"] % 5 == 0]
ms = sum(s["step_ms"] for s in timed) / len(timed)
tok = steps[-1]["tokens"] / steps[-1]["step"]
print(f"tokamak {sys.argv[1]} {sys.argv[2]} B={sys.argv[3]}: {ms:.1f} ms/step, {tok / ms * 1000:,.0f} tok/s")
' "$preset" "$precision" "$batch"
  "$py" "$root/experiments/bench/pytorch_loop.py" --preset "$preset" --precision $precision --batch "$batch" --steps "$steps"
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647 \
    "$py" "$root/experiments/bench/pytorch_loop.py" --preset "$preset" --precision $precision --batch "$batch" --steps "$steps" |
    sed 's/^pytorch/pytorch (same malloc settings as tokamak)/'
done
