#!/usr/bin/env bash
# Main thread against worker thread, same run (experiments/bench/thread_bench.cpp), with the allocator the
# engine binaries link. Needs a build (scripts/build.sh builds the libraries it links).
# Usage: experiments/bench/thread_bench.sh [ROUNDS] [key=value...]   (default: 3 rounds of 20 nano steps, fp32, batch 8, one thread)
# THREAD_BENCH_MALLOC=glibc links without jemalloc, for the comparison.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-3}
shift || true
[ $# -gt 0 ] || set -- model.preset=nano threads=1 speed.precision=fp32 train.batch_size=8 train.steps=20 train.log_every=5 eval.batches=1 sample.every=-1 \
                      checkpoint.every=0
bin=$(mktemp -d)/thread_bench
trap 'rm -rf "$(dirname "$bin")"' EXIT
# Linked exactly as tokamak-engine is (its link line from the build), the allocator aside.
libs=$(sed -n '/^build app\/tokamak-engine:/,/^$/p' "$build/build.ninja" | sed -n 's/^  LINK_LIBRARIES = //p' |
       sed -E 's/-Wl,--push-state,--no-as-needed +[^ ]*jemalloc[^ ]* +-Wl,--pop-state//')
malloc=(-Wl,--push-state,--no-as-needed -ljemalloc -Wl,--pop-state)
[ "${THREAD_BENCH_MALLOC:-jemalloc}" = glibc ] && malloc=()
g++ -O2 -std=c++17 -I"$root" -c "$root/experiments/bench/thread_bench.cpp" -o "$bin.o"
(cd "$build" && eval g++ "$bin.o" -o "$bin" "${malloc[*]}" "$libs" -pthread)
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), malloc: ${THREAD_BENCH_MALLOC:-jemalloc}"
"$bin" "$rounds" "$@"
