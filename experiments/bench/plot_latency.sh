#!/usr/bin/env bash
# The studio's event-loop stall while 100,000 steps stream into the live plots (the timing behind
# test_studio_plots' counts). Builds the plot_latency target in BUILD_DIR (default build) and runs it on the
# offscreen platform, REPEAT times (default 3), printing the machine first.
# Usage: experiments/bench/plot_latency.sh [REPEAT] [POINTS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
repeat=${1:-3}
points=${2:-100000}
cmake --build "$build" --target plot_latency >/dev/null
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), avx512_bf16: $(grep -c avx512_bf16 /proc/cpuinfo | sed 's/^0$/no/;s/^[1-9].*/yes/'), load $(cut -d' ' -f1-3 /proc/loadavg)"
. "$root/experiments/bench/scratch.sh"  # $work; ends what it started on every way out
for _ in $(seq "$repeat"); do
  QT_QPA_PLATFORM=offscreen \
    "$build/experiments/plot_latency" "$points"
done
