#!/usr/bin/env bash
# Main thread against worker thread, same run (experiments/bench/thread_bench.cpp), with the allocator the
# engine binaries link. Needs a build (scripts/build.sh builds the libraries it links).
# Usage: experiments/bench/thread_bench.sh [ROUNDS] [key=value...]   (default: 3 rounds of 30 nano steps)
# THREAD_BENCH_MALLOC=glibc links without jemalloc, for the comparison.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}
torch=$("$cache/venv/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
rounds=${1:-3}
shift || true
[ $# -gt 0 ] || set -- model.preset=nano train.steps=30 train.log_every=5 train.eval_every=0 train.sample_every=-1 \
                      train.checkpoint_every=0
bin=$(mktemp -d)/thread_bench
trap 'rm -rf "$(dirname "$bin")"' EXIT
malloc=(-Wl,--no-as-needed -ljemalloc -Wl,--as-needed)
[ "${THREAD_BENCH_MALLOC:-jemalloc}" = glibc ] && malloc=()
g++ -O2 -std=c++17 -I"$root" "$root/experiments/bench/thread_bench.cpp" -o "$bin" \
    "${malloc[@]}" "$build/engine/libtokamak_engine.a" "$build/engine/libtokamak_core.a" \
    -L"$torch/lib" -Wl,-rpath,"$torch/lib" -Wl,--no-as-needed -ltorch -ltorch_cpu -lc10 -Wl,--as-needed \
    -lsqlite3 -lpcre2-8 -pthread
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), malloc: ${THREAD_BENCH_MALLOC:-jemalloc}"
"$bin" "$rounds" "$@"
