#!/usr/bin/env bash
# The GPU sitting, run from the kit that scripts/gpu-kit.sh packs into carry/kit.tar.xz: one device command, with
# carry ["carry/kit.tar.xz"] and BUDGET the seconds of the lease it may spend (at most 540, for the device tool's
# 10 minutes a command with unpacking and transfers; less when less device time is left, after the machine's start):
#   tar xJf carry/kit.tar.xz -C /tmp && BUDGET=540 /tmp/kit/gpu-check.sh
# The steps run in the order of what a sitting is for, so a cut lease loses the least: test_kernels, NVML's health
# readings, Tokamak beside llm.c and the PyTorch loop (versus.py, interleaved), the fp16 rung, test_fp8, test_gpu,
# memcheck; the kernel profile of the best rungs (native, fused classifier, fused glue); CUDA graphs against eager
# launches; FP8 against the glue rung; then the rest (the kernel labs, the peer compiled with its profile, the
# h100-writeup ladder, find-batch, the model sizes, the peer's eager loop, the peer's max-autotune-no-cudagraphs)
# and the run store's export.
# Every step runs whatever happened to the one before, under a time limit of its own. Each one's outcome is a
# row of OUT/summary.md (step, status, seconds, result) and its output streams into OUT/log.txt as it runs; the
# bench and PyTorch tables follow the summary, the store is exported to OUT/runs-GPU.json and the peers' rows to
# OUT/versus-GPU.json: four files, as the
# device tool brings back at most eight. The run store, the dataset cache and anything else a run writes stay in
# SCRATCH (default a new folder under /tmp); bench rungs and find-batch tries write no checkpoints.
# DEVICE=cpu rehearses the same plan with the same programs on a CPU at tiny sizes, so that only the GPU can
# surprise (tests/gpu_kit_check.sh runs it in CI). PYTHON (default python3) must import torch 2.11; STEPS
# (default 20) timed steps a rung; BATCH (default 64, the ladder's last rung) the PyTorch peer's batch; BUDGET
# (default 540) seconds for all steps (a step that would pass it is cut short, later ones are skipped).
set -uo pipefail  # no -e: a failed step is a row of the summary, never the end of the sitting
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
device=${DEVICE:-cuda}
[ -z "${PART:-}" ] || { echo "gpu-check: PART is gone: the sitting is one plan, most wanted first (PLAN=\"s_... s_...\" runs a subset)" >&2; exit 2; }
steps=${STEPS:-20}
batch=${BATCH:-64}
budget=${BUDGET:-540}  # seconds for all steps: the device tool ends a command at 600, unpacking comes first
deadline=$((SECONDS + budget))
reserve=${RESERVE:-20}  # seconds of the budget kept for the last steps (no checkpoints, export)
out=${OUT:-$PWD/gpu-check-out}
scratch=${SCRATCH:-$(mktemp -d /tmp/tokamak-gpu-check-XXXXXX)}
bin=$here/bin
[ -x "$bin/tokamak" ] || { echo "gpu-check: no kit beside this script (hint: scripts/gpu-kit.sh packs one; run kit/gpu-check.sh from it)" >&2; exit 1; }
mkdir -p "$out" "$scratch/cache" "$scratch/steps"
summary=$out/summary.md log=$out/log.txt tables=$scratch/tables.md
: > "$log"
: > "$tables"
rows=()

# LibTorch and CUDA's libraries come from the machine's torch wheel (torch/lib, nvidia/*/lib beside it); the
# kit's lib/ holds the rest (Qt Core/Test, PCRE2, SQLite, ICU, jemalloc).
site=$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>>"$log") || site=
torch_version=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null) || torch_version="none ($py cannot import torch)"
libs=$here/lib
[ -n "$site" ] && libs+=":$site/torch/lib" && for d in "$site"/nvidia/*/lib; do [ -d "$d" ] && libs+=":$d"; done
libs+=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Only the kit's programs get that path: python3 keeps its own libraries (the kit's older SQLite or zlib first on
# its path could break its modules).
kit=(env "LD_LIBRARY_PATH=$libs")
# Assets from the kit; the dataset cache, run store and settings in the scratch folder.
[ -e "$scratch/cache/assets" ] || ln -s "$here/cache/assets" "$scratch/cache/assets"
export TOKAMAK_CACHE=$scratch/cache XDG_DATA_HOME=$scratch/data XDG_CONFIG_HOME=$scratch/config TMPDIR=$scratch
export PYTHONUNBUFFERED=1 TOKAMAK_TOKAMAK_BIN=$bin/tokamak

slow=1  # the step limits are the GPU's; a CPU shared with builds (CI) gets five times as long
if [ "$device" = cpu ]; then
  slow=5
  where="CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  gpu=cpu
  # Tiny sizes: the same commands, the same code paths, seconds instead of minutes.
  sizes=(--set device=cpu --set model.n_layer=1 --set model.n_head=2 --set model.n_embd=32 --set model.context=32
         --set train.context=32
         --set train.batch_size=2 --set speed.pin_memory=auto)
  # torch.compile traces as on the GPU, but without inductor's C++ build (minutes on two cores).
  bench_len=(--steps 2 --warmup 1) size_len=(--steps 1 --warmup 1) find_max=4 compile=(--compile --compile-backend aot_eager)
  peer=(--device cpu --shape 1,2,32,32 --batch 2 --steps 3 --warmup 1 --precision bf16)
  strongest=(--device cpu --shape 1,2,32,32 --batch 2,3 --steps 2 --warmup 1 --precision bf16 --compile-backend aot_eager)
else
  where=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9.\n-' '-')
  gpu=${gpu:-gpu}
  sizes=()
  bench_len=(--steps "$steps" --warmup 5) size_len=(--steps 10 --warmup 3) find_max=128 compile=(--compile)
  peer=(--device cuda --preset gpt2 --batch "$batch" --steps 30 --warmup 10 --precision bf16)
  strongest=(--device cuda --preset gpt2 --batch "${PEER_BATCHES:-$batch}" --steps 20 --warmup 8 --precision bf16)
fi

# The summary is rewritten after every step: a sitting the device tool cuts off still brings back what it did.
write_summary() {
  {
    printf '# gpu-check on %s\n\n' "$where"
    printf 'torch %s, kit %s, %s\n\n' "$torch_version" "$(cat "$here/VERSION" 2>/dev/null || echo '?')" "$(date -u '+%F %T UTC')"
    printf '| step | status | s | result |\n|---|---|---|---|\n'
    printf '%s\n' "${rows[@]}"
    cat "$tables"
  } > "$summary.tmp" && mv "$summary.tmp" "$summary"
}

# step NAME SECONDS PATTERN COMMAND...: runs COMMAND for at most SECONDS, appends its output to the log and one
# row to the summary; the result column is the last output line matching PATTERN (or the last line).
step() {
  local name=$1 limit=$2 pattern=$3 t0=$SECONDS rc=0 status result file left=$((deadline - reserve - SECONDS))
  shift 3
  if [ "$left" -lt 10 ]; then skip "$name" "no time left of BUDGET=$budget s"; return; fi
  limit=$((limit * slow))
  [ "$limit" -le "$left" ] || limit=$left
  file=$scratch/steps/${name// /_}.txt
  echo "== $name" >&2
  # The output goes into OUT/log.txt as it comes: a step the device tool cuts off still brought back what it said.
  printf '\n== %s (limit %s s): %s\n' "$name" "$limit" "$*" >> "$log"
  if declare -F "$1" >/dev/null; then "$@" 2>&1 | tee -a "$log" > "$file"; rc=${PIPESTATUS[0]}  # a function of this script
  else timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$log" > "$file"; rc=${PIPESTATUS[0]}; fi
  printf '== %s: exit %s after %s s\n' "$name" "$rc" $((SECONDS - t0)) >> "$log"
  case $rc in
    0) status=ok ;;
    124|137) status="timed out (${limit} s)" ;;
    *) status="failed (exit $rc)" ;;
  esac
  result=$(grep -E -- "$pattern" "$file" | tail -1)
  [ -n "$result" ] || result=$(grep -v '^[[:space:]]*$' "$file" | tail -1)
  rows+=("| $name | $status | $((SECONDS - t0)) | $(printf '%s' "${result:0:160}" | tr '|' '/') |")
  write_summary
}
skip() { rows+=("| $1 | skipped | 0 | $2 |"); write_summary; }

# Every program of the kit finds every library it needs (prints the missing ones, fails if any).
libraries() {
  local missing
  missing=$(for b in "$bin"/*; do "${kit[@]}" ldd "$b" | sed "s|^|$(basename "$b"): |"; done | grep "not found")
  [ -z "$missing" ] && { echo "every library found"; return 0; }
  echo "$missing"
  return 1
}
# A table a step printed, kept for the summary.
keep_table() { { printf '\n### %s\n\n```\n' "$1"; cat "$2"; printf '```\n'; } >> "$tables"; write_summary; }

# The sitting's steps; the plan at the end runs them in its order.
# tokamak bench exits 0 when a rung fails (the scoreboard shows it): in the sitting a failed rung fails its step.
rungs_ok=(bash -c 'f=$(mktemp); "$@" 2>&1 | tee "$f"; rc=${PIPESTATUS[0]}; ! grep -q "^  failed: " "$f" && [ "$rc" = 0 ]' _)
s_libraries() { step "libraries" 60 'found|not found' libraries; }
# The run watches itself on the device: a short run's last report carries the machine's health (NVML's power,
# temperature, clocks and utilisation on a GPU; on a CPU the load and other processes' cores) and its time left.
health_metrics() {
  local keys=(load_1m others_cores eta_s) where=(--set device=cpu) lines last k missing=()
  [ "$device" = cpu ] || keys=(gpu_power_w gpu_temp_c gpu_sm_mhz gpu_util others_cores eta_s) where=(--set device=cuda)
  lines=$("${kit[@]}" "$bin/tokamak" train --no-store --json --preset nano --set train.steps=20 --set train.log_every=5 \
    --set eval.every=0 --set sample.every=-1 --set checkpoint.dir="$scratch/health-checkpoints" "${sizes[@]}" \
    "${where[@]}" 2>&1) || { tail -3 <<< "$lines"; return 1; }
  rm -rf "$scratch/health-checkpoints"  # the sitting writes no checkpoint it keeps (s_no_checkpoints)
  last=$(grep '"event":"step"' <<< "$lines" | tail -1)
  for k in "${keys[@]}"; do grep -q "\"$k\"" <<< "$last" || missing+=("$k"); done
  if [ ${#missing[@]} = 0 ]; then echo "present: ${keys[*]}: ${last:0:300}"; return 0; fi
  echo "missing: ${missing[*]} in ${last:0:300}"
  grep -m1 'NVML' <<< "$lines" || true
  return 1
}
s_health() { step "health metrics" 90 'present|missing' health_metrics; }
# What the per-layer statistics cost GPT-2 124M (docs/INSIDE.md; target ≤ 1% of a step): the same 60 steps with
# metrics.layers_every=-1 and =0 (every report), CUDA graphs on; the share is the difference of the median step_ms
# plus the report's own layers_ms over train.log_every.
layer_cost() {
  local a b run=(--preset gpt2 --set device=cuda --set train.steps=60 --set train.batch_size=32 --set speed.cuda_graphs=true)
  [ "$device" = cpu ] && run=(--preset nano --set train.steps=12 --set train.log_every=2 "${sizes[@]}")
  run+=(--set eval.every=0 --set sample.every=-1 --set checkpoint.dir="$scratch/layer-checkpoints")
  a=$("${kit[@]}" "$bin/tokamak" train --no-store --json "${run[@]}" --set metrics.layers_every=-1 2>&1) ||
    { tail -3 <<< "$a"; return 1; }
  rm -rf "$scratch/layer-checkpoints"
  b=$("${kit[@]}" "$bin/tokamak" train --no-store --json "${run[@]}" --set metrics.layers_every=0 2>&1) ||
    { tail -3 <<< "$b"; return 1; }
  rm -rf "$scratch/layer-checkpoints"
  med() { grep '"event":"step"' | grep -o "\"$1\":[0-9.e+-]*" | cut -d: -f2 | tail -n +2 | sort -g |
    awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : 0)}'; }
  grep -q '"layers.g_rms.h0.attn"' <<< "$b" || { echo "no per-layer statistics in the run's reports"; return 1; }
  awk -v off="$(med step_ms <<< "$a")" -v on="$(med step_ms <<< "$b")" -v rep="$(med layers_ms <<< "$b")" \
    -v every="$(grep -o '"log_every":[0-9]*' <<< "$b" | head -1 | cut -d: -f2)" \
    'BEGIN {every = every ? every : 10
            printf "layers: step %.2f ms against %.2f off, report %.2f ms every %d steps: %.2f%% of a step\n",
            on, off, rep, every, 100 * ((on - off) + rep / every) / off}'
}
s_layers() { step "layer statistics cost" 240 '^layers:' layer_cost; }
s_test_gpu() { step "test_gpu" 150 '^Totals' "${kit[@]}" "$bin/test_gpu"; }
s_test_kernels() { step "test_kernels" 90 '^Totals' "${kit[@]}" "$bin/test_kernels"; }
s_test_fp8() { step "test_fp8" 90 '^Totals' "${kit[@]}" "$bin/test_fp8"; }
s_bench_fp8() {  # on a CPU too: LibTorch's CPU _scaled_mm serves; the glue is CUDA's
  local glue=()
  [ "$device" = cpu ] && glue=(--set speed.fused_glue=false)
  step "bench fp8" 150 '^[0-9]+  ' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$here/ladders/fp8.json" \
    "${bench_len[@]}" --no-store "${sizes[@]}" "${glue[@]}"
  keep_table "bench fp8" "$scratch/steps/bench_fp8.txt"
}
# fp16 with its loss scale beside bf16 on the same layers (GPUs people have, T4 and RTX 20xx, train in fp16 only):
# tok/s, and the loss at each rung's end. On the GPU the rungs train 200 steps, so the losses are compared at step 200.
s_bench_fp16() {
  local len=("${bench_len[@]}")
  [ "$device" = cpu ] || len=(--steps 190 --warmup 10)
  step "bench fp16" 180 '^[0-9]+  ' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$here/ladders/fp16.json" \
    "${len[@]}" --no-store "${sizes[@]}"
  keep_table "bench fp16" "$scratch/steps/bench_fp16.txt"
}
s_find_batch() {
  step "find-batch" 120 'largest|does not fit' "${kit[@]}" "$bin/tokamak" find-batch --preset gpt2 --set device=cuda \
    --set speed.precision=bf16 "${sizes[@]}" --max "$find_max"
}
s_bench_h100() {
  local rungs=()
  [ "$device" = cpu ] && rungs=(--rungs 1-8)  # the last rung, the fused glue, is CUDA's
  step "bench h100-writeup" 180 '^[0-9]+  ' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$here/ladders/h100-writeup.json" \
    "${bench_len[@]}" "${rungs[@]}" "${sizes[@]}"
  keep_table "bench h100-writeup" "$scratch/steps/bench_h100-writeup.txt"
}
# Where the best rung's time goes, kernel by kernel (LibTorch's profiler), with the library's classifier beside
# Tokamak's fused one: a ladder of the sitting's own, as its rungs are the h100-writeup ladder's last ones.
s_kernels() {
  cat > "$scratch/kernels.json" <<'JSON'
{"name": "kernels", "cumulative": false,
 "base": {"model.preset": "gpt2", "device": "cuda", "train.batch_size": 64, "eval.every": 0, "sample.every": -1,
          "schedule.warmup_steps": 10, "speed.precision": "bf16", "speed.attention": "sdpa", "speed.fused_adamw": true,
          "speed.pin_memory": true, "speed.prefetch": true, "model.vocab_pad_multiple": 64},
 "rungs": [{"name": "native layers", "set": {"speed.layers": "native"}},
           {"name": "fused classifier", "set": {"speed.layers": "fused"}},
           {"name": "fused glue", "set": {"speed.layers": "fused", "speed.fused_glue": true}}]}
JSON
  local rungs=()
  [ "$device" = cpu ] && rungs=(--rungs 1,2)  # the glue's kernels are CUDA's
  step "kernel profile" 120 'ms/step in all' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$scratch/kernels.json" \
    "${bench_len[@]}" --kernels 15 --no-store "${rungs[@]}" "${sizes[@]}"
  keep_table "kernel profile" "$scratch/steps/kernel_profile.txt"
}
# GPT-2 XL with activation checkpointing, native against fused, op by op: why fused's forward took 444 ms against
# native's 157 (the checkpointed forward runs without grad, where bias + GELU is cuBLASLt's GELU epilogue — the
# suspect). Not in a default plan: PLAN="s_kernels_xl" when a lease has room.
s_kernels_xl() {
  cat > "$scratch/kernels-xl.json" <<'JSON'
{"name": "kernels-xl", "cumulative": false,
 "base": {"model.preset": "gpt2-xl", "device": "cuda", "train.batch_size": 16, "eval.every": 0,
          "sample.every": -1, "schedule.warmup_steps": 10, "speed.precision": "bf16", "speed.attention": "sdpa",
          "speed.fused_adamw": true, "speed.activation_checkpointing": true},
 "rungs": [{"name": "native layers", "set": {"speed.layers": "native"}},
           {"name": "fused layers", "set": {"speed.layers": "fused"}}]}
JSON
  step "kernel profile xl" 240 'ms/step in all' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$scratch/kernels-xl.json" \
    "${size_len[@]}" --kernels 20 --no-store "${sizes[@]}"
  keep_table "kernel profile xl" "$scratch/steps/kernel_profile_xl.txt"
}
s_bench_sizes() {
  step "bench model sizes" 180 '^[0-9]+  ' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$here/ladders/model-size-sweep.json" \
    "${size_len[@]}" "${sizes[@]}"
  keep_table "bench model sizes" "$scratch/steps/bench_model_sizes.txt"
}
# Bench and find-batch write no checkpoints: one here would be 1.5 GB on a GPU, and no file comes back from it.
s_no_checkpoints() {
  step "no checkpoints" 30 'none' sh -c '! find "$1" -name "*.safetensors" | grep -q . && echo "none written"' _ "$scratch"
}
s_export() {
  step "export" 30 'runs' sh -c 'LD_LIBRARY_PATH=$3 "$1" runs export --format json > "$2" && echo "$(basename "$2"): $(grep -o "\"uid\"" "$2" | wc -l) runs"' \
    _ "$bin/tokamak" "$out/runs-$gpu.json" "$libs"
}
s_eager() {
  step "pytorch eager" 90 'tok/s' "$py" "$here/pytorch_loop.py" "${peer[@]}"
  keep_table "pytorch eager" "$scratch/steps/pytorch_eager.txt"
}
s_compiled() {
  step "pytorch compiled + profile" 240 'tok/s' "$py" "$here/pytorch_loop.py" "${peer[@]}" "${compile[@]}" --profile
  keep_table "pytorch compiled + profile" "$scratch/steps/pytorch_compiled_+_profile.txt"
}
# Tokamak beside llm.c and the PyTorch loop, interleaved (versus.py): Tokamak's best rung (the fused glue and CUDA
# graphs, no profiler), llm.c with GELU fusion off and on, the PyTorch loop compiled in its default mode with the
# sliced head and nanoGPT's, then Tokamak again; each the median of 20 timed steps with its spread and NVML's clock
# and power. On a CPU: the same contenders at tiny sizes (llm.c says it is CUDA's).
s_versus() {
  local t=() p=() rung=5
  if [ "$device" = cpu ]; then
    rung=3  # batch 64, eager: graphs and the glue are CUDA's
    for a in "${sizes[@]}"; do t+=(--tokamak-arg="$a"); done
    p=(--peer-arg=--shape=1,2,32,32 --peer-arg=--batch=2 --peer-arg=--compile-backend=aot_eager)
  fi
  step "versus llm.c and pytorch" 420 '^versus|^drift' env "LD_LIBRARY_PATH=$libs" "$py" "$here/versus.py" \
    --tokamak "$bin/tokamak" --ladder "$here/ladders/cuda-graphs.json" --rung "$rung" --llmc "$bin/train_gpt2cu" \
    --peer "$here/pytorch_loop.py" --device "$device" --batch "$batch" --steps "$steps" --warmup 10 \
    --limit $((120 * slow)) --scratch "$scratch" --out "$out/versus-$gpu.json" "${t[@]}" "${p[@]}"
  keep_table "versus llm.c and pytorch" "$scratch/steps/versus_llm.c_and_pytorch.txt"
}
# The strongest fair peer's last try, in a step of its own at the plan's end: SDPA's own attention, fullgraph,
# nanoGPT's head, max-autotune-no-cudagraphs (inductor's tuned GEMMs, minutes of tuning); "strongest compile" is
# its line. PEER_MODES, PEER_BATCHES (default BATCH) widen it when a lease has room.
s_peer() {
  # Inductor's GEMM autotuning in a subprocess: one of its candidate kernels faulted on an H200 and took the CUDA
  # context with it (max-autotune never finished); in a subprocess a faulting candidate is only dropped.
  step "pytorch strongest compile" 330 'strongest compile' env TORCHINDUCTOR_AUTOTUNE_IN_SUBPROC=1 \
    "$py" "$here/pytorch_loop.py" "${strongest[@]}" --fullgraph --head nanogpt \
    --modes "${PEER_MODES:-max-autotune-no-cudagraphs}"
  keep_table "pytorch strongest compile" "$scratch/steps/pytorch_strongest_compile.txt"
}
# The kernel labs (experiments/kernels/*_lab.cu): each production kernel beside its newer versions, checked against
# a CPU reference and timed. Without a GPU each says so and exits (the rehearsal checks they are in the kit).
s_labs() {
  step "kernel labs" 120 'GB/s|no CUDA device|no kernel labs' bash -c 'rc=0; n=0; for lab in "$0"/*_lab; do [ -x "$lab" ] || continue; n=$((n + 1)); "$lab" || rc=1; done; [ "$n" -gt 0 ] || { echo "no kernel labs in this kit (hint: a build with CUDA packs them)"; exit 1; }; exit $rc' "$bin"
  keep_table "kernel labs" "$scratch/steps/kernel_labs.txt"
}
# CUDA graphs against eager launches, where launches cost most (small batches) and at the ladder's batch. A CPU
# has no graphs: the rehearsal runs the eager rungs of the same ladder.
s_graphs() {
  local rungs=()
  [ "$device" = cpu ] && rungs=(--rungs 1,3)
  step "bench cuda graphs" 150 '^[0-9]+  ' "${rungs_ok[@]}" "${kit[@]}" "$bin/tokamak" bench --ladder "$here/ladders/cuda-graphs.json" \
    "${bench_len[@]}" --no-store "${rungs[@]}" "${sizes[@]}"
  keep_table "bench cuda graphs" "$scratch/steps/bench_cuda_graphs.txt"
}
# compute-sanitizer over the kernels' parity tests: the only memory-safety check of the CUDA kernels (the glue's,
# the heads', the fp8 cast).
s_memcheck() {
  if [ "$device" = cpu ]; then
    skip "memcheck" "no GPU: compute-sanitizer runs on the device only"
  elif ! command -v compute-sanitizer >/dev/null; then
    skip "memcheck" "compute-sanitizer is not on the PATH"
  else
    step "memcheck" 150 'ERROR SUMMARY|^Totals' "${kit[@]}" bash -c 'for t in test_kernels test_fp8; do
      compute-sanitizer --tool memcheck --error-exitcode 99 "$0/$t" || exit; done' "$bin"
  fi
}

# The most wanted first; the store is exported last with time kept for it (RESERVE). The kernels' parity tests, then
# NVML's readings (~20 s; late in the plan they were cut by the peer's time), then the comparison with the peers and
# the fp16 rung (the GPUs people have), then the rest.
plan=(s_libraries s_test_kernels s_health s_versus s_bench_fp16 s_layers s_test_fp8 s_test_gpu s_memcheck s_kernels s_graphs
      s_bench_fp8 s_labs s_compiled s_bench_h100 s_find_batch s_bench_sizes s_eager s_peer s_no_checkpoints s_export)
# PLAN="s_test_kernels s_kernels ...": these steps alone, for a check that must fit what is left of a lease.
if [ -n "${PLAN:-}" ]; then
  read -r -a plan <<< "$PLAN"
  for s in "${plan[@]}"; do declare -F "$s" >/dev/null || { echo "gpu-check: no step '$s' in PLAN" >&2; exit 2; }; done
fi
for i in "${!plan[@]}"; do
  [ "$i" -ge $((${#plan[@]} - 2)) ] && reserve=0  # the plan's last two steps may use the time kept for them
  "${plan[$i]}"
done
cat "$summary"
echo "results in $out (summary.md, log.txt, runs-$gpu.json, versus-$gpu.json); scratch in $scratch" >&2
grep -q '| failed\|| timed out' "$summary" && exit 1
exit 0
