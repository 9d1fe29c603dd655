#!/usr/bin/env bash
# The whole test suite, from a fresh clone: set-up (quick when done before), build, then every CTest suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${BUILD_DIR:-$root/build}
# The suites use all cores themselves; running two at once on a 2-core machine only adds contention.
ctest --test-dir "$build" --output-on-failure --timeout 900 "$@"
