#!/usr/bin/env bash
# Takes docs/screenshots/queue.png under Xvfb: the studio's first window on a SCREEN-sized screen (default
# 1366x768) with two tiny runs on this computer's queue, the first training, the Queue dock raised. The window
# is the real one, driven by tests/test_studio_queue's `screenshot` function in a scratch data folder.
#   scripts/screenshot-queue.sh [SCREEN] [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
screen=${1:-1366x768}
build=${2:-build}
TOKAMAK_TOKAMAK_BIN=$(realpath "$build/app/tokamak") TOKAMAK_SCREENSHOT_OUT=$(realpath -m docs/screenshots/queue.png) \
  xvfb-run -a -s "-screen 0 ${screen}x24" "$build/tests/test_studio_queue" screenshot
echo "wrote docs/screenshots/queue.png"
