#!/bin/bash
# tok/s of `tokamak train --detach` with no reader against the same run with `tokamak runs follow` reading its
# journal all along (same config, alternated: none follow none follow). Prints each run's mean tok/s after step 50.
set -e
B=${B:-$(cd "$(dirname "$0")/../.." && pwd)/build/app/tokamak}
export XDG_DATA_HOME=$(mktemp -d)  # its own run folders; removed at the end
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
data=$XDG_DATA_HOME/excerpt.txt
head -c 200000 "${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/assets/jargon.txt" > "$data"
args=(train --detach --json --no-store --set data.path=$data --set model.n_layer=2 --set model.n_head=2 --set model.n_embd=64 --set model.context=64 --set train.batch_size=8 --set threads=1 --set opt.precision=fp32 --set train.steps=${STEPS:-250} --set train.log_every=1 --set train.sample_every=-1 --set train.eval_every=0 --set train.seed=1)
for mode in ${MODES:-none follow none follow}; do
  out=$($B "${args[@]}" --name perf-$mode)
  uid=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_uid"])')
  folder=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["folder"])')
  if [ $mode = follow ]; then $B runs follow $uid > /dev/null; else while [ ! -f $folder/exit ]; do sleep 0.2; done; fi
  python3 - "$folder/events.jsonl" $mode <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"event":"step"' in l]
tail = steps[50:]
print("%-6s steps %d  mean tok/s over steps 51-%d: %.0f" % (sys.argv[2], len(steps), len(steps), sum(s["tok_s"] for s in tail) / len(tail)))
PY
done
