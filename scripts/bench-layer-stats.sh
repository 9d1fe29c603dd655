#!/usr/bin/env bash
# What the per-layer statistics cost a run: the same `tokamak train` (default config, STEPS steps, no samples or
# evaluations, nothing stored) timed whole, alternating three settings ROUNDS times each:
#   none    health.spike_action=off, metrics.layers_every=-1  (no per-layer work at all)
#   spikes  metrics.layers_every=-1                            (the spike watch's per-step gradient RMS per group)
#   layers  the defaults                                       (that, and every statistic at every report)
# Prints each run's wall seconds and train tok/s (the last report's), then the medians and each setting's cost
# against none. Extra arguments are --set overrides for all three (e.g. model.preset=gpt2 device=cuda).
#   scripts/bench-layer-stats.sh [STEPS [ROUNDS]] [KEY=VALUE ...]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-200}; rounds=${2:-3}
shift $(( $# > 2 ? 2 : $# )) || true
sets=()
for kv in "$@"; do sets+=(--set "$kv"); done
bin=${TOKAMAK_BIN:-build/app/tokamak}
declare -A walls
for r in $(seq 1 "$rounds"); do
  for mode in none spikes layers; do
    extra=()
    case $mode in
      none) extra=(--set health.spike_action=off --set metrics.layers_every=-1) ;;
      spikes) extra=(--set metrics.layers_every=-1) ;;
      layers) extra=() ;;
    esac
    start=$(date +%s.%N)
    line=$("$bin" train --no-store --set train.steps="$steps" --set sample.every=-1 --set eval.every=0 \
           "${sets[@]}" "${extra[@]}" 2>&1 | grep -E '^step +[0-9]+/' | tail -1)
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    walls[$mode]+="$wall "
    printf '%-7s round %d: %6.2f s   %s\n' "$mode" "$r" "$wall" "$(echo "$line" | grep -oE '[0-9.]+K? tok/s' | head -1)"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
base=$(echo "${walls[none]}" | median)
for mode in none spikes layers; do
  m=$(echo "${walls[$mode]}" | median)
  printf 'median %-7s %6.2f s  %+5.2f%% against none\n' "$mode" "$m" "$(echo "($m - $base) * 100 / $base" | bc -l)"
done
