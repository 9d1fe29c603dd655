#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz with clang (libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer,
# over the LibTorch-free core) into build-fuzz/, then runs each for FUZZ_SECONDS (default 20) starting from its
# seed corpus tests/fuzz/corpus/<target>/. New inputs go to build-fuzz/corpus/<target>/ (never into git);
# a crash is saved as build-fuzz/crashes/<target>-crash-<sha1> and fails the script.
#   scripts/fuzz.sh                          every target, 20 s each (what scripts/test.sh runs in CI)
#   FUZZ_SECONDS=3600 scripts/fuzz.sh fuzz_tokenizer     one target for an hour
#   FUZZ_BUILD_ONLY=1 scripts/fuzz.sh        the sanitizer build alone
# Replay a crash: build-fuzz/fuzz_<target> build-fuzz/crashes/<file>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-20}
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (hint: scripts/setup.sh installs Debian's clang)" >&2; exit 1; }
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "${launcher[@]}" >&2
fi
cmake --build "$build" -j "$(nproc)" >&2
[ -n "${FUZZ_BUILD_ONLY:-}" ] && exit 0

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for exe in "$build"/fuzz_*; do [ -x "$exe" ] && targets+=("$(basename "$exe")"); done
fi
mkdir -p "$build/crashes"
# One libFuzzer process is one thread and -max_total_time is wall time, so running one target per core gives
# each its full time and the phase takes seconds × targets ÷ cores.
jobs=${FUZZ_JOBS:-$(nproc)}
run_one() {  # run_one TARGET: fuzzes it; its exit status says whether it found something
  local t=$1 seeds=()
  mkdir -p "$build/corpus/$t"
  [ -d "$root/tests/fuzz/corpus/$t" ] && seeds=("$root/tests/fuzz/corpus/$t")
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: a leak or a huge allocation is a finding.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/$t" "$build/corpus/$t" "${seeds[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" >"$build/$t.log" 2>&1
}
for t in "${targets[@]}"; do
  [ -x "$build/$t" ] || { echo "fuzz: no target $t in $build" >&2; exit 1; }
done
failed=()
declare -A pids=()
report_one() {  # report_one TARGET PID: waits for it and says how it went
  if wait "$2"; then
    echo "fuzz: $1: $(grep -E "stat::number_of_executed_units|stat::new_units_added" "$build/$1.log" | tr '\n' ' ')" >&2
  else
    failed+=("$1")
    tail -n 40 "$build/$1.log" >&2
  fi
}
running=()
for t in "${targets[@]}"; do
  if [ ${#running[@]} -ge "$jobs" ]; then
    report_one "${running[0]}" "${pids[${running[0]}]}"
    running=("${running[@]:1}")
  fi
  echo "fuzz: $t for ${seconds} s" >&2
  run_one "$t" &
  pids[$t]=$!
  running+=("$t")
done
for t in "${running[@]}"; do report_one "$t" "${pids[$t]}"; done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $build/crashes/; see docs/RELIABILITY.md for how to replay)" >&2
  echo "fuzz: $(( ${#targets[@]} - ${#failed[@]} )) passed, ${#failed[@]} failed"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds} s without a finding" >&2
echo "fuzz: ${#targets[@]} passed, 0 failed"  # the closing line CI reads
