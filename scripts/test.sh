#!/usr/bin/env bash
# The whole test suite, from a fresh clone: set-up (quick when done before), build, every CTest suite, then
# every fuzz target for FUZZ_SECONDS (20 s each; set FUZZ_SECONDS=0 to skip them) in a sanitizer build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${BUILD_DIR:-$root/build}
# The suites use all cores themselves; running two at once on a 2-core machine only adds contention.
ctest --test-dir "$build" --output-on-failure --timeout 900 "$@"
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-20} "$root/scripts/fuzz.sh"
fi
