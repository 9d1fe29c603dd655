#!/usr/bin/env bash
# docs/INSIDE.md's picture: the default CPU run and the same run at ten times its learning rate, trained by
# `tokamak train` into a fresh store, then side by side in the studio's Compare ▸ Layers tab (under Xvfb).
#   scripts/screenshot-layers.sh [OUT] [STAT] [STEPS]   (default docs/screenshots/layers.png g_rms 300)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-docs/screenshots/layers.png}")
stat=${2:-g_rms}
steps=${3:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data
lr=$(build/app/tokamak config --defaults 2>/dev/null | grep -E '^ *"lr"' | grep -oE '[0-9.e-]+' | head -1)
lr=${lr:-0.002}
hot=$(echo "$lr * 10" | bc -l)
for run in "stable $lr" "lr-x10 $hot"; do
  set -- $run
  build/app/tokamak train --db "$work/runs.db" --set name="$1" --set optimizer.lr="$2" --set train.steps="$steps" \
    --json > "$work/$1.jsonl" 2>/dev/null || true
  echo "$1 (lr $2): $(grep -c '"event":"spike"' "$work/$1.jsonl") spike(s)"
  grep '"event":"spike"' "$work/$1.jsonl" | head -3 || true
done
TOKAMAK_SCREENSHOT_DB=$work/runs.db TOKAMAK_SCREENSHOT_OUT=$out TOKAMAK_SCREENSHOT_STAT=$stat QT_QPA_PLATFORM=xcb \
  xvfb-run -a -s "-screen 0 1600x1000x24" build/tests/test_studio_layers screenshot
echo "wrote $out"
