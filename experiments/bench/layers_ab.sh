#!/usr/bin/env bash
# speed.layers=native against speed.layers=fused (on a CPU: the fused classifier, engine/torch/kernels/classifier.*) in
# whole training steps, alternating ROUNDS times so a busy moment of a shared machine hits both alike, in fp32
# and in bf16 where the CPU computes it in hardware. Each run: `tokamak train`, the median step time of the
# STEPS steps after 5 warm-up steps. This is the measurement behind what speed.layers=auto resolves to on a CPU
# (engine/base/config/choices.cpp, resolved_layers).
# Usage: experiments/bench/layers_ab.sh [ROUNDS] [STEPS] [LAYERS,HEADS,WIDTH,CONTEXT] [BATCH] [THREADS]
#   default: 3 rounds, 15 timed steps, 4,4,256,256, batch 8, threads = cores (the CPU step of docs/PERFORMANCE.md)
set -euo pipefail
default_steps=15
source "$(dirname "$0")/cpu_sitting.sh"
machine_line
for r in $(seq "$rounds"); do
  for p in "${precisions[@]}"; do
    a=$(tokamak_median "$p" --set speed.layers=native)
    b=$(tokamak_median "$p" --set speed.layers=fused)
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
