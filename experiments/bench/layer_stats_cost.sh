#!/usr/bin/env bash
# The per-layer statistics' cost against the default CPU run's step, part by part
# (experiments/bench/layer_stats_cost.cpp), linked as tokamak-engine is. Needs a build (scripts/build.sh).
# Usage: experiments/bench/layer_stats_cost.sh [ROUNDS]   (each round: fp32, then bf16)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-3}
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
torch_include=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
bin=$(mktemp -d)/layer_stats_cost
trap 'rm -rf "$(dirname "$bin")"' EXIT
libs=$(sed -n '/^build app\/tokamak-engine:/,/^$/p' "$build/build.ninja" | sed -n 's/^  LINK_LIBRARIES = //p')
g++ -O2 -std=c++17 -I"$root" -isystem "$torch_include" -isystem "$torch_include/torch/csrc/api/include" \
  -c "$root/experiments/bench/layer_stats_cost.cpp" -o "$bin.o"
(cd "$build" && eval g++ "$bin.o" -o "$bin" "$libs" -pthread)
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(grep -o -m1 avx512_bf16 /proc/cpuinfo || echo 'no avx512_bf16'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$rounds"); do "$bin" fp32; "$bin" bf16; done
