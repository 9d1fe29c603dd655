#!/usr/bin/env bash
# docs/INSIDE.md's pictures: the default CPU run at ten times its learning rate and as it is, trained by
# `tokamak train` into a fresh store (in that order: the left map is the hot one), then side by side in the studio's
# Compare ▸ Layers tab (under Xvfb), one picture a statistic.
#   scripts/screenshot-layers.sh [STEPS]   (default 300: docs/screenshots/layers-update.png, layers-gradients.png)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data
lr=$(build/app/tokamak config --defaults 2>/dev/null | grep -E '^ *"lr"' | grep -oE '[0-9.e-]+' | head -1)
lr=${lr:-0.002}
hot=$(echo "$lr * 10" | bc -l)
for run in "nano-lr10 $hot" "nano-stable $lr"; do
  set -- $run
  build/app/tokamak train --db "$work/runs.db" --set name="$1" --set optimizer.lr="$2" --set train.steps="$steps" \
    --json > "$work/$1.jsonl" 2>/dev/null || true
  echo "$1 (lr $2): $(grep -c '"event":"spike"' "$work/$1.jsonl") spike(s)"
  grep '"event":"spike"' "$work/$1.jsonl" | head -3 || true
done
for pair in "update_ratio layers-update" "g_rms layers-gradients"; do
  set -- $pair
  TOKAMAK_SCREENSHOT_DB=$work/runs.db TOKAMAK_SCREENSHOT_OUT=$(realpath -m "docs/screenshots/$2.png") \
    TOKAMAK_SCREENSHOT_STAT=$1 QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \
    build/tests/test_studio_layers screenshot
  echo "wrote docs/screenshots/$2.png"
done
