# Sourced by the CPU benchmarks that time `tokamak train` in whole steps (cpu_vs_pytorch.sh, layers_ab.sh):
# their arguments, a scratch run store, the precisions this CPU computes in hardware, the machine line every
# CPU number is written down with, and `tokamak_median`. Arguments: [ROUNDS] [STEPS] [LAYERS,HEADS,WIDTH,CONTEXT]
# [BATCH] [THREADS]; defaults 3 rounds, $default_steps timed steps, 4,4,256,256, batch 8, threads = cores.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rounds=${1:-3} steps=${2:-$default_steps} shape=${3:-4,4,256,256} batch=${4:-8} threads=${5:-$(nproc)}
warmup=5
py=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/venv/bin/python
bin=${TOKAMAK_BIN:-$root/build/app/tokamak}
IFS=, read -r L H C T <<< "$shape"
. "$root/experiments/bench/scratch.sh"  # $work; ends what it started on every way out
precisions=(fp32)
grep -qE 'avx512_bf16|amx_bf16' /proc/cpuinfo && precisions+=(bf16)

machine_line() {  # what every CPU number is written down with
  echo "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(grep -oE 'avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"\
       "threads $threads, load $(cut -d' ' -f1-3 /proc/loadavg); shape $shape, batch $batch"
}

tokamak_median() {  # precision [--set key=value ...] → median ms/step of the steps after the warm-up
  local precision=$1
  shift
  "$bin" train --no-store --json --set model.n_layer="$L" --set model.n_head="$H" --set model.n_embd="$C" \
      --set model.context="$T" --set train.batch_size="$batch" --set threads="$threads" \
      --set speed.precision="$precision" --set train.steps=$((steps + warmup)) --set train.log_every=1 \
      --set eval.every=0 --set sample.every=-1 --set schedule.warmup_steps="$warmup" \
      --set checkpoint.minutes=0 --set train.profile=false "$@" 2>"$work/err" |
    "$py" -c '
import json, statistics, sys
ms = [e["step_ms"] for e in map(json.loads, sys.stdin) if e.get("event") == "step" and e["step"] > int(sys.argv[1])]
print(f"{statistics.median(ms):.1f}")' "$warmup" || { tail -n 3 "$work/err" >&2; exit 1; }
}
