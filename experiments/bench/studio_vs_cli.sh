#!/usr/bin/env bash
# The studio's run against the CLI's: the default config (what the studio opens on first start: nano, precision
# auto, a report every 10 steps) with STEPS steps, run PAIRS times alternately from each in one sitting. The
# studio starts its run detached (`tokamak-engine train --detach`) and follows its journal; its screenshot mode
# drives it under Xvfb (start, wait for STEPS steps, stop, quit), with settings of its own so the user's are
# neither read nor written. The CLI run is
# `tokamak train`. Both record into one scratch store. A run's speed is the median tok/s of its reports at
# steps >= FROM (the first steps warm up the allocator and the caches); each side's speed is the median over
# all its runs' reports, and the ratio is studio / CLI.
# Usage: experiments/bench/studio_vs_cli.sh [PAIRS] [STEPS] [key=value...]   (default: 3 pairs, 60 steps)
# FROM=20 by default; BUILD_DIR picks the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
pairs=${1:-3}
steps=${2:-60}
from=${FROM:-20}
shift 2 || shift $# || true
. "$root/experiments/bench/scratch.sh"  # $work; ends what it started on every way out
db=$work/runs.db
sets=(--set train.steps="$steps")
for kv in "$@"; do sets+=(--set "$kv"); done
"$build/app/tokamak" config "${sets[@]}" --set name=studio > "$work/studio.json"
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(grep -qo avx512_bf16 /proc/cpuinfo && echo avx512_bf16 || echo 'no avx512_bf16')"
echo "default config ${sets[*]}; median tok/s of the reports at steps >= $from; load average $(cut -d' ' -f1-3 /proc/loadavg)"
reports() {  # tok/s of run $1's reports at steps >= $from, one a line
  "$build/app/tokamak" runs export --db "$db" --format csv "$1" | awk -F, -v from="$from" '$3 == "tok_s" && $2 >= from { print $4 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; printf "%.0f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
newest() { "$build/app/tokamak" runs list --db "$db" --limit 1 | awk '$1 ~ /^[0-9]+$/ { print $1; exit }'; }
: > "$work/studio.tok_s"
: > "$work/cli.tok_s"
for p in $(seq "$pairs"); do
  xvfb-run -a -s "-screen 0 1920x1080x24" "$build/app/studio/tokamak-studio" --db "$db" \
    --config "$work/studio.json" --screenshot "$work/shot.png" --after-steps "$steps" 2>/dev/null
  reports "$(newest)" > "$work/run.tok_s"
  studio=$(median < "$work/run.tok_s")
  cat "$work/run.tok_s" >> "$work/studio.tok_s"
  "$build/app/tokamak" train --db "$db" "${sets[@]}" --set name=cli > /dev/null 2>&1
  reports "$(newest)" > "$work/run.tok_s"
  cli=$(median < "$work/run.tok_s")
  cat "$work/run.tok_s" >> "$work/cli.tok_s"
  echo "pair $p: studio $studio tok/s, CLI $cli tok/s, studio/CLI $(echo "scale=3; $studio / $cli" | bc) (load $(cut -d' ' -f1 /proc/loadavg))"
done
studio=$(median < "$work/studio.tok_s")
cli=$(median < "$work/cli.tok_s")
echo "median of $(wc -l < "$work/studio.tok_s") + $(wc -l < "$work/cli.tok_s") reports: studio $studio tok/s, CLI $cli tok/s, studio/CLI $(echo "scale=3; $studio / $cli" | bc)"
