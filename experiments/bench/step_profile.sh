#!/usr/bin/env bash
# The step profile of the default run on this machine, and what profiling costs.
# Usage: step_profile.sh [STEPS] [REPEATS] [KEY=VALUE...]   (the KEY=VALUEs are --set on every run)
# Each run is `tokamak train` with the defaults (nano, bf16 autocast, batch 16 × 128) for STEPS steps, every
# step a report (train.log_every=1: every step profiled, the worst case for the profile's cost), no evals or
# samples. Runs alternate train.profile=true/false REPEATS times each, so load from other processes falls on
# both alike. Per run: the mean step_ms and, with the profile, each phase's mean ms, over steps 6..STEPS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
steps=${1:-25}
repeats=${2:-3}
sets=()
for kv in "${@:3}"; do sets+=(--set "$kv"); done
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
bin=${TOKAMAK_BIN:-$root/build/app/tokamak}
. "$root/experiments/bench/scratch.sh"  # $work; ends what it started on every way out
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$repeats"); do
  for profile in true false; do
    "$bin" train --no-store --json --set train.steps="$steps" --set train.log_every=1 --set eval.every=0 \
        --set sample.every=-1 --set checkpoint.minutes=0 --set train.profile=$profile "${sets[@]}" 2>/dev/null |
      "$py" -c '
import json, sys
steps = [json.loads(l) for l in sys.stdin if "\"event\":\"step\"" in l]
timed = [s for s in steps if s["step"] > 5]
mean = lambda k: sum(s[k] for s in timed) / len(timed)
phases = [k for k in ("phase_data_ms", "phase_forward_ms", "phase_backward_ms", "phase_allreduce_ms",
                      "phase_optimizer_ms", "phase_other_ms") if k in timed[0]]
step_ms = mean("step_ms")
line = f"profile={sys.argv[1]:5} step_ms {step_ms:7.1f}"
if phases:
    total = sum(mean(k) for k in phases)
    line += "  " + "  ".join(f"{k[6:-3]} {mean(k):.1f}" for k in phases) + f"  (sum {total:.1f})"
print(line)
' "$profile"
  done
done
