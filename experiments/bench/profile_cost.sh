#!/usr/bin/env bash
# The step profile's own cost per profiled step on a CPU (experiments/bench/profile_cost.cpp), linked as
# tokamak-engine is. Needs a build (scripts/build.sh). Usage: experiments/bench/profile_cost.sh [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-5}
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
torch_include=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
bin=$(mktemp -d)/profile_cost
trap 'rm -rf "$(dirname "$bin")"' EXIT
libs=$(sed -n '/^build app\/tokamak-engine:/,/^$/p' "$build/build.ninja" | sed -n 's/^  LINK_LIBRARIES = //p')
g++ -O2 -std=c++17 -I"$root" -isystem "$torch_include" -c "$root/experiments/bench/profile_cost.cpp" -o "$bin.o"
(cd "$build" && eval g++ "$bin.o" -o "$bin" "$libs" -pthread)
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$rounds"); do "$bin" 1; "$bin" 4; done
