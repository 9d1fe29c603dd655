#!/usr/bin/env bash
# Takes the docs' picture of the studio's Sweeps page under Xvfb: runs a sweep file to its end on a scratch
# run store with the CLI (`tokamak sweep`, the queue worker), then opens the studio's window on it at SCREEN
# (no saved settings) and grabs it on the Sweeps page.
#   scripts/screenshot-sweep.sh [SWEEP.json] [SCREEN] [OUT.png]
# Defaults: resources/sweeps/small_lr_optimizer.json, 1366x768, docs/screenshots/sweep.png.
set -euo pipefail
cd "$(dirname "$0")/.."
file=$(realpath "${1:-resources/sweeps/small_lr_optimizer.json}")
screen=${2:-1366x768}
out=$(realpath -m "${3:-docs/screenshots/sweep.png}")
work=$(mktemp -d)
db=$work/runs.db
worker_pid() { build/app/tokamak queue list --json --db "$db" | python3 -c 'import json,sys; print(json.load(sys.stdin)["worker_pid"])'; }
cleanup() {
  local pid
  pid=$(worker_pid 2>/dev/null || echo 0)
  [ "$pid" -gt 0 ] 2>/dev/null && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config
build/app/tokamak sweep "$file" --db "$db"
# Until the worker has exited and nothing is queued or running (a trial stopped at a rung is "stopped" for a
# moment before the worker promotes it; the worker exits only once it has decided).
until build/app/tokamak queue list --json --db "$db" | python3 -c '
import json, sys
q = json.load(sys.stdin)
sys.exit(0 if q["worker_pid"] == 0 and all(i["state"] not in ("queued", "running") for i in q["items"]) else 1)'; do
  sleep 2
done
build/app/tokamak sweep status --db "$db"
TOKAMAK_SCREENSHOT_DB=$db TOKAMAK_SCREENSHOT_OUT=$out \
  xvfb-run -a -s "-screen 0 ${screen}x24" build/tests/test_studio_sweep screenshot
echo "wrote $out"
