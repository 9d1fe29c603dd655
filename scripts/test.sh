#!/usr/bin/env bash
# The whole test suite, from a fresh clone: set-up (quick when done before), build, then every CTest suite;
# after them every fuzz target for FUZZ_SECONDS (20 s each; FUZZ_SECONDS=0 skips them) in a sanitizer build,
# beside the package check. Arguments go to ctest (e.g. -L unit) and run the suites they name, then the fuzz phase.
# Each test suite runs in empty folders of its own (tests/support/isolated_process.cpp), so what this machine
# has cached never changes a result. The wall time of each phase is printed at the end, pass or fail.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
phases=()
phase() {  # phase NAME COMMAND...: runs it and records how long it took
  local name=$1 t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  phases+=("$(printf '%-10s %5d s%s' "$name" $((SECONDS - t0)) "$([ $rc = 0 ] || echo "  (failed, exit $rc)")")")
  return $rc
}
report() {
  # A background check still running (the script failed or was interrupted) goes with it.
  local p
  for p in "${pid[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  printf 'test.sh: wall time per phase\n'
  printf '  %s\n' "${phases[@]}"
}
declare -A pid=() t0=()
trap report EXIT
phase install env TOKAMAK_LLAMA_CPP=ON TOKAMAK_READERS=ON "$root/scripts/setup.sh"   # llama.cpp, TensorBoard and MLflow too: the clients tier runs them
[ -f "$build/build.ninja" ] || phase configure "$root/scripts/build.sh" --configure-only
phase build "$root/scripts/build.sh"
# Most suites wait more than they compute (servers starting, child processes, polling a journal) and train on
# one thread, so CTest runs twice as many suites as there are cores (TEST_JOBS; at most 8): on 2 cores the 61
# suites took 309 s at 4 at once, 370 s at 2 and ~950 s one by one, and kept the cores 73% busy at 4
# (docs/journal/performance.md, "The test suite from a fresh clone"). The longest start first (their COST in
# tests/CMakeLists.txt). With no ctest arguments the package check (cpack, unpack, train three steps from an
# empty home: mostly compression and the disk) then runs beside the fuzz phase (its sanitizer build, then one target a core). Either beside the
# suites made everything slower: the package check took 468 s instead of ~130, and the sanitizer build, at the
# lowest priority so as not to slow the suites, got next to no CPU from them on a slow machine.
cores=$(nproc)
jobs=${TEST_JOBS:-$((cores * 2 > 8 ? 8 : cores * 2))}
fuzz=${FUZZ_SECONDS:-20}
if [ $# -gt 0 ] || [ "$fuzz" = 0 ]; then
  phase tests ctest --test-dir "$build" --output-on-failure --timeout 900 -j "$jobs" "$@"
  [ "$fuzz" = 0 ] || phase fuzz env FUZZ_SECONDS="$fuzz" "$root/scripts/fuzz.sh"
  exit 0
fi
logs=$(mktemp -d)
beside() {  # beside NAME COMMAND...: starts it in the background, its output to a log of its own
  local name=$1
  shift
  "$@" >"$logs/$name.log" 2>&1 &
  pid[$name]=$!
  t0[$name]=$SECONDS
}
finish() {  # finish NAME: waits for it, shows its output and records its wall time
  local name=$1 rc=0
  wait "${pid[$name]}" || rc=$?
  cat "$logs/$name.log"
  phases+=("$(printf '%-10s %5d s%s' "$name" $((SECONDS - t0[$name])) "$([ $rc = 0 ] || echo "  (failed, exit $rc)")")")
  return $rc
}
tests_rc=0 fuzz_rc=0 package_rc=0
phase tests ctest --test-dir "$build" --output-on-failure --timeout 900 -j "$jobs" -LE package || tests_rc=$?
beside package ctest --test-dir "$build" --output-on-failure --timeout 900 -L package
phase fuzz env FUZZ_SECONDS="$fuzz" "$root/scripts/fuzz.sh" || fuzz_rc=$?
finish package || package_rc=$?
rm -rf "$logs"
[ $tests_rc = 0 ] && [ $fuzz_rc = 0 ] && [ $package_rc = 0 ]
