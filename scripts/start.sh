#!/usr/bin/env bash
# README command 1: set-up, build, then Tokamak Studio on the embedded default (the nano model on The Jargon
# File). Without a display it says so and runs the same default headless: a short CPU training run that
# prints falling loss and generated text. Extra arguments go to tokamak-studio (or to `tokamak train`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
# Only what it opens: the studio and the two programs it runs (scripts/test.sh builds the test suites).
targets="tokamak tokamak-engine"
[ "${TOKAMAK_GUI:-ON}" = OFF ] || targets="tokamak-studio $targets"
TOKAMAK_TARGETS=${TOKAMAK_TARGETS:-$targets} "$root/scripts/build.sh"
build=${BUILD_DIR:-$root/build}
if [ -x "$build/app/studio/tokamak-studio" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec "$build/app/studio/tokamak-studio" "$@"
fi
echo "start: no display (or no studio build): running the headless trainer instead — tokamak train" >&2
exec "$build/app/tokamak" train "$@"
