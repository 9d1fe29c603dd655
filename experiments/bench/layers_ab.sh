#!/usr/bin/env bash
# opt.layers=native against opt.layers=fused (on a CPU: the fused classifier, engine/kernels/classifier.*) in
# whole training steps, alternating ROUNDS times so a busy moment of a shared machine hits both alike, in fp32
# and in bf16 where the CPU computes it in hardware. Each run: `tokamak train`, the median step time of the
# STEPS steps after 5 warm-up steps. This is the measurement behind what opt.layers=auto resolves to on a CPU
# (engine/config/choices.cpp, resolved_layers).
# Usage: experiments/bench/layers_ab.sh [ROUNDS] [STEPS] [LAYERS,HEADS,WIDTH,CONTEXT] [BATCH] [THREADS]
#   default: 3 rounds, 15 timed steps, 4,4,256,256, batch 8, threads = cores (issue 28's shape)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-3} steps=${2:-15} shape=${3:-4,4,256,256} batch=${4:-8} threads=${5:-$(nproc)}
warmup=5
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
bin=${TOKAMAK_BIN:-$root/build/app/tokamak}
IFS=, read -r L H C T <<< "$shape"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data
precisions=(fp32)
grep -qE 'avx512_bf16|amx_bf16' /proc/cpuinfo && precisions+=(bf16)
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(grep -oE 'avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"\
     "threads $threads, load $(cut -d' ' -f1-3 /proc/loadavg); shape $shape, batch $batch"
run() {  # precision layers → median ms/step
  "$bin" train --no-store --json --set model.n_layer="$L" --set model.n_head="$H" --set model.n_embd="$C" \
      --set model.context="$T" --set train.batch_size="$batch" --set threads="$threads" --set opt.precision="$1" \
      --set opt.layers="$2" --set train.steps=$((steps + warmup)) --set train.log_every=1 --set train.eval_every=0 \
      --set train.sample_every=-1 --set train.warmup_steps="$warmup" --set train.checkpoint_minutes=0 \
      --set train.profile=false 2>"$work/err" |
    "$py" -c '
import json, statistics, sys
ms = [e["step_ms"] for e in map(json.loads, sys.stdin) if e.get("event") == "step" and e["step"] > int(sys.argv[1])]
print(f"{statistics.median(ms):.1f}")' "$warmup" || { tail -n 3 "$work/err" >&2; exit 1; }
}
for r in $(seq "$rounds"); do
  for p in "${precisions[@]}"; do
    a=$(run "$p" native)
    b=$(run "$p" fused)
    printf 'round %d %-4s  ms/step: native %7.1f  fused %7.1f  native/fused %s\n' "$r" "$p" "$a" "$b" \
      "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
    echo "$p $a $b" >> "$work/rows"
  done
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg); median over rounds:"
for p in "${precisions[@]}"; do
  awk -v p="$p" '$1 == p { print $2, $3 }' "$work/rows" | sort -n | "$py" -c '
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin]
a, b = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
print(f"  {sys.argv[1]:4s} native {a:7.1f} ms  fused {b:7.1f} ms  fused is {a / b:.3f}x native")' "$p"
done
