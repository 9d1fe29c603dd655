#!/usr/bin/env bash
# Times the fused classifier's chunk sizes against the reference (experiments/kernels/classifier_lab.cpp),
# linked as tokamak-engine is. Needs a build (scripts/build.sh).
# Usage: experiments/kernels/classifier_lab.sh [N] [C] [THREADS] [ROUNDS] [cpu|cuda] [fp32|bf16]
#   defaults: the issue's CPU target's head, batch 8 × context 256 = 2048 tokens, width 256, 2 threads.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
torch_include=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
bin=$(mktemp -d)/classifier_lab
trap 'rm -rf "$(dirname "$bin")"' EXIT
libs=$(sed -n '/^build app\/tokamak-engine:/,/^$/p' "$build/build.ninja" | sed -n 's/^  LINK_LIBRARIES = //p')
g++ -O2 -std=c++17 -I"$root" -isystem "$torch_include" -isystem "$torch_include/torch/csrc/api/include" \
    -c "$root/experiments/kernels/classifier_lab.cpp" -o "$bin.o"
(cd "$build" && eval g++ "$bin.o" -o "$bin" "$libs" -pthread)
# The engine's allocator settings are compiled into tokamak-engine (app/tokamak-engine/malloc_conf.cpp), not into this
# lab: given to jemalloc through the environment instead, or every variant would fault its buffers in anew.
export MALLOC_CONF=${MALLOC_CONF:-$(sed -n 's/.*kMallocConf\[\] = "\(.*\)";.*/\1/p' "$root/app/tokamak/malloc_conf.cpp")}
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1-3 /proc/loadavg), MALLOC_CONF=$MALLOC_CONF"
"$bin" "${1:-2048}" "${2:-256}" "${3:-2}" "${4:-5}" "${5:-cpu}" "${6:-fp32}"
