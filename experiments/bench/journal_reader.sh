#!/bin/bash
# tok/s of `tokamak train --detach` with no reader against the same run with `tokamak runs follow` reading its
# journal all along (same config, alternated: none follow none follow). Prints each run's mean tok/s after step 50.
# HOST=DEST runs it all over ssh, as the studio does with a GPU server: the run is started on DEST with
# `ssh DEST tokamak train --detach`, followed with `ssh DEST tokamak runs follow` (its output crosses the
# connection), and its journal read back with ssh; SSH_CONFIG=FILE gives ssh a config of its own, and B the
# path of tokamak on DEST.
set -e
B=${B:-$(cd "$(dirname "$0")/../.." && pwd)/build/app/tokamak}
on_host() { if [ -n "${HOST:-}" ]; then ssh ${SSH_CONFIG:+-F "$SSH_CONFIG"} -o BatchMode=yes "$HOST" "$*"; else bash -c "$*"; fi; }
export XDG_DATA_HOME=$(mktemp -d)  # its own run folders; removed at the end (on DEST too: same path, see below)
trap 'rm -rf "$XDG_DATA_HOME"; on_host rm -rf "$XDG_DATA_HOME"' EXIT
on_host mkdir -p "$XDG_DATA_HOME"
data=$XDG_DATA_HOME/excerpt.txt
on_host "head -c 200000 \${TOKAMAK_CACHE:-\$HOME/.cache/tokamak}/assets/jargon.txt > $data"
args="train --detach --json --no-store --set data.path=$data --set model.n_layer=2 --set model.n_head=2 --set model.n_embd=64 --set model.context=64 --set train.batch_size=8 --set threads=1 --set speed.precision=fp32 --set train.steps=${STEPS:-250} --set train.log_every=1 --set sample.every=-1 --set eval.every=0 --set train.seed=1"
echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1-3 /proc/loadavg), reader ${HOST:-local}"
for mode in ${MODES:-none follow none follow}; do
  out=$(on_host "XDG_DATA_HOME=$XDG_DATA_HOME $B $args --name perf-$mode")
  uid=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_uid"])')
  folder=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["folder"])')
  if [ $mode = follow ]; then on_host "XDG_DATA_HOME=$XDG_DATA_HOME $B runs follow $uid" > /dev/null
  else while ! on_host test -f "$folder/exit"; do sleep 1; done; fi
  on_host cat "$folder/events.jsonl" | python3 -c '
import json, sys
steps = [json.loads(l) for l in sys.stdin if "\"event\":\"step\"" in l]
tail = steps[50:]
print("%-6s steps %d  mean tok/s over steps 51-%d: %.0f" % (sys.argv[1], len(steps), len(steps), sum(s["tok_s"] for s in tail) / len(tail)))' $mode
done
