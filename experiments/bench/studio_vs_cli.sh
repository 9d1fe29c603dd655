#!/usr/bin/env bash
# The studio's run against the CLI's, same setup, alternately ROUNDS times each in one sitting. The studio
# starts its run as a child tokamak-engine; its screenshot mode drives it under Xvfb (start, wait for STEPS
# steps, quit). The CLI run is `tokamak train`. Both record into one scratch store; a run's tok/s is the mean
# of its stored reports after the first (the warm-up).
# Usage: experiments/bench/studio_vs_cli.sh [ROUNDS] [STEPS] [key=value...]   (default: 3 rounds, 30 nano steps)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-3}
steps=${2:-30}
shift 2 || shift $# || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/runs.db
sets=(--preset nano --set train.steps="$steps" --set train.log_every=5 --set train.eval_every=0
      --set train.sample_every=-1 --set train.checkpoint_every=0)
for kv in "$@"; do sets+=(--set "$kv"); done
"$build/app/tokamak" config "${sets[@]}" --set name=studio > "$work/studio.json"
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); ${sets[*]}"
mean_tok_s() {  # the newest run's mean tok/s after its first report
  "$build/app/tokamak" runs export --db "$db" --format csv "$1" |
    awk -F, '$3 == "tok_s" { if (n++ > 0) { s += $4; k++ } } END { printf "%.0f", s / k }'
}
newest() { "$build/app/tokamak" runs list --db "$db" --limit 1 | awk '$1 ~ /^[0-9]+$/ { print $1; exit }'; }
studio_sum=0 cli_sum=0
for r in $(seq "$rounds"); do
  xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/studio/tokamak-studio" --db "$db" --config "$work/studio.json" \
    --screenshot "$work/shot.png" --after-steps "$steps" 2>/dev/null
  studio=$(mean_tok_s "$(newest)")
  "$build/app/tokamak" train --db "$db" "${sets[@]}" --set name=cli 2>/dev/null
  cli=$(mean_tok_s "$(newest)")
  echo "round $r: studio $studio tok/s, CLI $cli tok/s"
  studio_sum=$((studio_sum + studio)) cli_sum=$((cli_sum + cli))
done
echo "mean: studio $((studio_sum / rounds)) tok/s, CLI $((cli_sum / rounds)) tok/s, studio/CLI $(echo "scale=3; $studio_sum / $cli_sum" | bc)"
