#!/usr/bin/env bash
# Two learning rates × three seeds of the nano model (30 steps, fp32): real runs for the compare view's
# group band (docs/screenshots/compare-seeds.png) — is the difference between the learning rates bigger than
# the spread between seeds?
#   experiments/bench/seed_groups.sh RUNS.db
set -euo pipefail
cd "$(dirname "$0")/../.."
db=$(realpath -m "${1:?usage: $0 RUNS.db}")
. experiments/bench/scratch.sh  # the runs' folders in a scratch folder; ends what it started on every way out
for lr in 0.001 0.003; do
  for seed in 1 2 3; do
    build/app/tokamak train --preset nano --db "$db" --name "nano-lr$lr-s$seed" \
      --set speed.precision=fp32 --set train.steps=30 --set train.batch_size=4 --set eval.batches=2 \
      --set optimizer.lr=$lr --set train.seed=$seed --set eval.every=10 --set train.log_every=2 \
      --set schedule.warmup_steps=5 --set sample.every=15 --set checkpoint.every=0 >/dev/null
  done
done
build/app/tokamak runs compare $(build/app/tokamak runs list --db "$db" 2>/dev/null | awk 'NR>1{print $1}' | sort -n) \
  --group seed --db "$db"
