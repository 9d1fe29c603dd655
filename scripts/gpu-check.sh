#!/usr/bin/env bash
# The one command for a GPU machine: runs the GPU test suites (test_gpu, test_kernels' CUDA parity), the batch
# finder and the benchmark ladders, and prints their
# tables, in well under 10 minutes. Two ways to get the programs:
#   - from a kit made by scripts/gpu-kit.sh (this script inside carry/kit): nothing is built;
#   - from a checkout (scripts/gpu-check.sh): an engine-only build against python3's torch into build-gpu.
# Results (test log, bench tables, a run-store JSON export named after the GPU) go to OUT (default
# ./gpu-check-<host>). PYTHON (default python3) must import torch 2.11; STEPS (default 20) timed steps a rung.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
steps=${STEPS:-20}
out=${OUT:-$PWD/gpu-check-$(hostname -s)}
mkdir -p "$out"
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))') || {
  echo "gpu-check: $py cannot import torch (hint: set PYTHON to a Python with torch 2.11)" >&2; exit 1; }
"$py" -c 'import torch, sys; v = torch.__version__; sys.exit(0 if v.startswith("2.11") else f"gpu-check: torch {v}, the kit needs 2.11")'
if [ -d "$here/bin" ]; then
  bin=$here/bin ladders=$here/ladders
  export LD_LIBRARY_PATH=$here/lib:$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export TOKAMAK_CACHE=$here/cache
else
  root=$(cd "$here/.." && pwd)
  BUILD_DIR=$root/build-gpu TOKAMAK_GUI=OFF TOKAMAK_TORCH_PYTHON=$py TOKAMAK_TARGETS="tokamak tokamak-engine test_gpu test_kernels" \
    "$root/scripts/build.sh"
  bin=$root/build-gpu ladders=$root/experiments/ladders
  [ -d "$bin/app" ] && { cp "$bin"/app/tokamak "$bin"/app/tokamak-engine "$bin"/tests/test_gpu "$bin"/tests/test_kernels "$out/"; bin=$out; }
  export LD_LIBRARY_PATH=$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export XDG_DATA_HOME=$out/data  # a run store of this sitting only
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
gpu=$(head -1 "$out/gpu.txt" | cut -d, -f1 | tr ' ' '-')

echo "== GPU test suite" >&2
"$bin/test_gpu" 2>&1 | tee "$out/test_gpu.txt"
echo "== kernel parity on the GPU (issue 12)" >&2
"$bin/test_kernels" 2>&1 | tee "$out/test_kernels.txt" || echo "gpu-check: test_kernels failed (see test_kernels.txt)" >&2
echo "== tokamak find-batch (gpt2, bf16, context 1024)" >&2
"$bin/tokamak" find-batch --preset gpt2 --set device=cuda --set opt.precision=bf16 --max 128 \
  | tee "$out/find-batch.txt" || echo "gpu-check: find-batch failed" >&2
for ladder in h100-writeup a100-writeup; do
  echo "== tokamak bench --ladder $ladder (STEPS=$steps)" >&2
  "$bin/tokamak" bench --ladder "$ladders/$ladder.json" --steps "$steps" --warmup 5 | tee "$out/bench-$ladder.txt"
done
"$bin/tokamak" runs export --format json > "$out/runs-$gpu.json" || echo "gpu-check: export failed" >&2
echo "results in $out" >&2
