#!/usr/bin/env bash
# Grabs the studio's compare view over every run of a run store, for the docs, under Xvfb:
#   scripts/screenshot-compare.sh RUNS.db OUT.png [METRIC] [GROUP] [WATERFALL]
# METRIC is any recorded key (default tok_s); GROUP is none, seed, tag or name:REGEX (default none); WATERFALL
# is tok_s or time (by time to target: a speedrun ladder's runs), or light (the Speed of light tab: runs that
# `tokamak bench --kernels` recorded).
# docs/screenshots/compare.png: the cpu-nano ladder's runs; compare-seeds.png: experiments/bench/seed_groups.sh's
# runs with METRIC=val_loss GROUP=seed; speedrun-waterfall.png: the cpu-speedrun ladder's runs with
# METRIC=val_loss GROUP=seed WATERFALL=time; speed-of-light.png: two cpu-step.json rungs run with --kernels,
# WATERFALL=light.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: $0 RUNS.db OUT.png [METRIC] [GROUP]}
out=${2:?usage: $0 RUNS.db OUT.png [METRIC] [GROUP]}
TOKAMAK_SCREENSHOT_DB=$(realpath "$db") TOKAMAK_SCREENSHOT_OUT=$(realpath -m "$out") \
  TOKAMAK_SCREENSHOT_METRIC=${3:-tok_s} TOKAMAK_SCREENSHOT_GROUP=${4:-none} TOKAMAK_SCREENSHOT_WATERFALL=${5:-tok_s} \
  xvfb-run -a -s "-screen 0 1600x1000x24" build/tests/test_studio_runs screenshot
echo "wrote $out"
