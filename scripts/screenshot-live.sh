#!/usr/bin/env bash
# Takes the setup (docs/USING.md) and live-run (README) pictures as a new user first sees the studio, under Xvfb: no saved
# settings (a throw-away XDG_CONFIG_HOME), the default setup, a scratch run store, a SCREEN-sized screen.
#   scripts/screenshot-live.sh [SCREEN] [STEPS]    (default 1920x1080, the live picture after 50 steps)
# Writes docs/screenshots/setup.png and docs/screenshots/live-run.png.
set -euo pipefail
cd "$(dirname "$0")/.."
screen=${1:-1920x1080}
steps=${2:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
XDG_CONFIG_HOME=$work/config xvfb-run -a -s "-screen 0 ${screen}x24" build/app/studio/tokamak-studio \
  --db "$work/runs.db" --setup-screenshot docs/screenshots/setup.png --screenshot docs/screenshots/live-run.png \
  --after-steps "$steps"
