#!/usr/bin/env bash
# docs/USING.md's picture of a run that watches itself, taken as it happens: the studio (under Xvfb, 1366x768, the
# default run with health.stall_min_s=5) trains; beside it four busy processes for 25 s (a slowdown, named), then
# the engine stopped for 15 s with SIGSTOP (stalled, then stall over); garbage tokens at step 130
# (TOKAMAK_TRY_SPIKE_AT) make a spike the loss plot marks; the last plot draws the machine's health (other
# processes' cores). Prints the run's slowdown and spike lines.
#   scripts/screenshot-health.sh [OUT]    (default docs/screenshots/run-watching-itself.png)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/screenshots/run-watching-itself.png}
work=$(mktemp -d)
busy=()
cleanup() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
export XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config
cat > "$work/setup.json" <<'JSON'
{"train": {"steps": 400, "log_every": 5}, "health": {"stall_factor": 5, "stall_min_s": 5},
 "eval": {"every": 1000}, "sample": {"every": 200}}
JSON
TOKAMAK_TRY_SPIKE_AT=130 xvfb-run -a -s "-screen 0 1366x768x24" build/app/studio/tokamak-studio \
  --config "$work/setup.json" --db "$work/runs.db" --screenshot "$out" --after-steps 160 --plot others_cores &
studio=$!
journal=""
for _ in $(seq 1 300); do
  journal=$(ls "$XDG_DATA_HOME"/tokamak/checkpoints/*/events.jsonl 2>/dev/null | head -1 || true)
  [ -n "$journal" ] && [ "$(grep -c '"event":"step"' "$journal")" -ge 8 ] && break
  sleep 1
done
[ -n "$journal" ] || { echo "screenshot-health: the run did not start" >&2; exit 1; }
engine=$(pgrep -f "tokamak-engine train" | head -1)
for _ in 1 2 3 4; do sh -c 'while :; do :; done' & busy+=($!); done
sleep 25
kill "${busy[@]}"; busy=()
sleep 8
kill -STOP "$engine"; sleep 15; kill -CONT "$engine"
wait "$studio"
grep -E '"event":"slowdown"' "$journal" || echo "screenshot-health: no slowdown this time (a busy machine?)"
grep -E '"event":"spike"' "$journal" || echo "screenshot-health: no spike caught at step 130"
