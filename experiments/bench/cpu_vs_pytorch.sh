#!/usr/bin/env bash
# Tokamak against a plain PyTorch loop of the same model (experiments/bench/pytorch_loop.py), same CPU, same
# torch 2.11, one sitting, the contenders alternating ROUNDS times so a busy moment of a shared machine hits
# them alike:
#   tokamak          `tokamak train` as built (its allocator settings are compiled in: app/tokamak-engine/malloc_conf.cpp)
#   pytorch          `python pytorch_loop.py`, as people run it (glibc malloc)
#   pytorch+alloc    the same loop given Tokamak's allocator: jemalloc preloaded with the same settings
# in fp32, and in bf16 where the CPU computes it in hardware (AVX-512 BF16 or AMX). Every contender reports the
# median step time of its steps after WARMUP; tok/s = batch·context / that. Last, the model's FLOP/s (6N + 12LCT
# per token) as a fraction of a LibTorch GEMM of the model's largest shape (the classifier: B·T × C × V),
# timed in the same sitting with the same threads (before and after the rounds, best kept), and what a lead
# over PyTorch would need as a fraction of that rate: the ceiling for two programs doing the same GEMMs.
# Usage: experiments/bench/cpu_vs_pytorch.sh [ROUNDS] [STEPS] [LAYERS,HEADS,WIDTH,CONTEXT] [BATCH] [THREADS]
#   default: 3 rounds, 20 timed steps, 4,4,256,256, batch 8, threads = cores (the CPU step of docs/PERFORMANCE.md)
set -euo pipefail
default_steps=20
source "$(dirname "$0")/cpu_sitting.sh"
jemalloc=$(ldconfig -p | awk '/libjemalloc.so.2 / { print $NF; exit }')
conf=$(sed -n 's/.*kMallocConf\[\] = "\(.*\)";.*/\1/p' "$root/app/tokamak/malloc_conf.cpp")
echo "$(machine_line); jemalloc settings '$conf'"

pytorch() {  # precision [env...] → median ms/step
  local precision=$1
  shift
  env "$@" OMP_NUM_THREADS="$threads" "$py" "$root/experiments/bench/pytorch_loop.py" --shape "$shape" \
      --batch "$batch" --precision "$precision" --steps "$steps" --warmup "$warmup" --threads "$threads" --median-ms
}
# The classifier's GEMM (B·T × C × V), best of 10 per precision, appended to $work/peaks: once before the rounds
# and once after, the best kept, so a busy moment during one of them does not set the ceiling.
gemm_peak() {
  "$py" - "$batch" "$T" "$C" "$threads" "${precisions[@]}" >> "$work/peaks" <<'PY'
import sys, time
import torch
B, T, C, threads, *precisions = sys.argv[1:]
B, T, C, V = int(B), int(T), int(C), 50257
torch.set_num_threads(int(threads))
for p in precisions:
    dtype = torch.bfloat16 if p == "bf16" else torch.float32
    a, w = torch.randn(B * T, C).to(dtype), torch.randn(C, V).to(dtype)
    out = a @ w
    best = 1e9
    for _ in range(10):
        t0 = time.perf_counter(); torch.mm(a, w, out=out); best = min(best, time.perf_counter() - t0)
    print(p, 2 * B * T * C * V / best)
PY
}
gemm_peak
declare -A sum
for r in $(seq "$rounds"); do
  for p in "${precisions[@]}"; do
    a=$(tokamak_median "$p")
    b=$(pytorch "$p")
    c=$(pytorch "$p" LD_PRELOAD="$jemalloc" MALLOC_CONF="$conf")
    printf 'round %d %-4s  ms/step: tokamak %7.1f  pytorch %7.1f  pytorch+alloc %7.1f\n' "$r" "$p" "$a" "$b" "$c"
    echo "$p $a $b $c" >> "$work/rows"
  done
done
gemm_peak
echo "median over rounds (tok/s = $batch·$T / step):"
"$py" - "$work/rows" "$work/peaks" "$batch" "$T" "$L" "$C" <<'PY'
import statistics, sys
rows, peaks, B, T, L, C = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
V, Vpad = 50257, 50304
best_peak = {}
for line in open(peaks):
    p, flops = line.split()
    best_peak[p] = max(best_peak.get(p, 0.0), float(flops))
by = {}
for line in open(rows):
    p, *ms = line.split()
    by.setdefault(p, []).append([float(x) for x in ms])
# Model FLOPs per token as the engine counts them: 6·N (tied embedding counted once, no position table) + 12·L·C·T.
n = Vpad * C + L * (12 * C * C + 13 * C) + 2 * C
fpt = 6 * n + 12 * L * C * T
for p, runs in by.items():
    med = [statistics.median(col) for col in zip(*runs)]
    tok = [B * T / m * 1000 for m in med]
    peak = best_peak[p]
    print(f"{p}: tokamak {tok[0]:,.0f} tok/s, pytorch {tok[1]:,.0f} ({tok[0] / tok[1]:.2f}x), pytorch+alloc {tok[2]:,.0f} "
          f"({tok[0] / tok[2]:.2f}x); tokamak {tok[0] * fpt / 1e9:.0f} GFLOP/s = {tok[0] * fpt / peak:.0%} of the "
          f"{B * T}x{C}x{V} GEMM's {peak / 1e9:.0f} GFLOP/s")
    # The ceiling: both programs do the same FLOPs in the same GEMM library, so a ratio over PyTorch is bounded
    # by how far PyTorch is from the GEMM's rate. What a given lead would need, as a fraction of that rate:
    print(f"{p}: pytorch+alloc runs at {tok[2] * fpt / peak:.0%} of that GEMM rate; 1.3x it would need "
          f"{1.3 * tok[2] * fpt / peak:.0%}, 1.5x pytorch as run {1.5 * tok[1] * fpt / peak:.0%}")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
