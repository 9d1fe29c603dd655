#!/usr/bin/env bash
# Set-up, build, then the main job on the embedded default: a short CPU training run of the `nano` model on
# The Jargon File that prints falling loss and generated text. Extra arguments go to `tokamak train`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${BUILD_DIR:-$root/build}
exec "$build/app/tokamak" train "$@"
