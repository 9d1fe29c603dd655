#!/usr/bin/env bash
# Run store benchmark: 1,000 runs x 1,000 logged steps (1,000,000 steps of twelve metrics: 11.1M stored
# values in schema 3), `runs list` latency, reading one run's curves, and the recording cost per event.
# Usage: experiments/bench/store_bench.sh [DB] [RUNS] [ROWS] [TOKAMAK_BIN]
# The program is compiled here from the store's sources alone (SQLite, no LibTorch). The database is kept
# (filled once), so a second call times listing only; when the tokamak CLI is given (or found in build/),
# `tokamak runs list` is timed as a whole process too (which includes loading LibTorch's libraries).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
db=${1:-/tmp/tokamak_store_bench.db}
runs=${2:-1000}
rows=${3:-1000}
cli=${4:-$root/build/app/tokamak}
bin=$(mktemp -d)/store_bench
trap 'rm -rf "$(dirname "$bin")"' EXIT
g++ -O2 -DNDEBUG -std=c++17 -I"$root" "$root/experiments/bench/store_bench.cpp" "$root"/engine/base/store/*.cpp \
    "$root/engine/base/util/files.cpp" -lsqlite3 -pthread -o "$bin"
echo "database: $db ($runs runs x $rows rows), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
"$bin" "$db" "$runs" "$rows"
echo "file size: $(du -h "$db" | cut -f1)"
if [ -x "$cli" ]; then
  "$cli" runs list --db "$db" >/dev/null  # warm the OS page cache
  start=$(date +%s.%N)
  "$cli" runs list --db "$db" >/dev/null
  end=$(date +%s.%N)
  printf 'tokamak runs list (whole process): %.0f ms\n' "$(echo "($end - $start) * 1000" | bc)"
  start=$(date +%s.%N)
  "$cli" --version >/dev/null
  end=$(date +%s.%N)
  printf 'tokamak --version (process start alone, for comparison): %.0f ms\n' "$(echo "($end - $start) * 1000" | bc)"
fi
