#!/usr/bin/env bash
# Builds llm.c's train_gpt2cu (bf16, cuDNN attention, one GPU) for the GPU sitting's peer, outside the tree:
#   LLMC_SRC=DIR CUDNN_FRONTEND=DIR scripts/llmc-build.sh OUT
# LLMC_SRC is a checkout (or a bare git directory) of github.com/karpathy/llm.c and CUDNN_FRONTEND one of
# github.com/NVIDIA/cudnn-frontend; both are only read: their files are copied into a temporary folder, built
# there, and only the program is written to OUT. Neither is ever committed here: llm.c is the peer, not a part.
# LLMC_ARCH (default 90, the lent H100/H200) is the compute capability it is built for; nvcc and cuDNN's headers
# come from the CUDA toolkit (/usr/local/cuda). Without NVML's header (the toolkit here has none) llm.c builds its
# GPU report out, so NVML is not linked; the sitting reads clocks and power with nvidia-smi beside it. Takes about
# 3 minutes on two cores (cuDNN's frontend is most of it).
set -euo pipefail
out=${1:?usage: LLMC_SRC=DIR CUDNN_FRONTEND=DIR scripts/llmc-build.sh OUT}
arch=${LLMC_ARCH:-90}
cuda=${CUDA_HOME:-/usr/local/cuda}
for v in LLMC_SRC CUDNN_FRONTEND; do
  [ -n "${!v:-}" ] && [ -d "${!v}" ] || { echo "llmc-build: $v is not a folder (hint: a checkout or a bare git directory of its public repository)" >&2; exit 2; }
done
command -v "$cuda/bin/nvcc" >/dev/null || { echo "llmc-build: no nvcc in $cuda/bin (hint: set CUDA_HOME to the CUDA toolkit)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tokamak-llmc-XXXXXX")
trap 'rm -rf "$work"' EXIT
# copy_tree SRC DEST: a working tree is copied; a bare git directory (what the mirror tool brings) is exported.
copy_tree() {
  mkdir -p "$2"
  if [ -f "$1/HEAD" ] && [ -d "$1/objects" ]; then git --git-dir="$1" archive HEAD | tar -x -C "$2"
  else cp -r "$1/." "$2/"; fi
}
copy_tree "$LLMC_SRC" "$work/llm.c"
# Where llm.c's Makefile looks for it (it checks that folder before it reads CUDNN_FRONTEND_PATH).
copy_tree "$CUDNN_FRONTEND" "$work/llm.c/cudnn-frontend"
llmc_rev=$( (git --git-dir="$LLMC_SRC" rev-parse --short HEAD || git -C "$LLMC_SRC" rev-parse --short HEAD) 2>/dev/null || echo unknown)
fe_rev=$( (git --git-dir="$CUDNN_FRONTEND" rev-parse --short HEAD || git -C "$CUDNN_FRONTEND" rev-parse --short HEAD) 2>/dev/null || echo unknown)

# CUDA 13 dropped cudaMemAdvise's device-number form; llm.c calls it only in its out-of-memory fallback (managed
# memory preferred on the host). The copy gets the location form, which means the same; the source is untouched.
if [ "$("$cuda/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')" -ge 13 ]; then
  sed -i 's/cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId)/cudaMemAdviseSetPreferredLocation, cudaMemLocation{cudaMemLocationTypeHost, 0})/' \
    "$work/llm.c/llmc/cuda_utils.cuh"
fi
# llm.c's Makefile as it is, told the architecture (no nvidia-smi here), one GPU (no NCCL or MPI) and cuDNN on;
# its libraries given whole, as its NVML is off without nvml.h, and cuDNN's frontend now compiles kernels at run time
# (NVRTC, the driver API).
nvml=-lnvidia-ml
[ -f "$cuda/include/nvml.h" ] || nvml=
make -C "$work/llm.c" train_gpt2cu NVCC="$cuda/bin/nvcc" USE_CUDNN=1 GPU_COMPUTE_CAPABILITY="$arch" NO_MULTI_GPU=1 \
  NO_USE_MPI=1 CUDNN_FRONTEND_PATH=cudnn-frontend/include \
  NVCC_LDFLAGS="-lcublas -lcublasLt -lcudnn -lnvrtc -lcuda $nvml" NVCC_LDLIBS="-L$cuda/lib64 -L$cuda/lib64/stubs" >&2
mkdir -p "$(dirname "$out")"
cp "$work/llm.c/train_gpt2cu" "$out.tmp"
mv "$out.tmp" "$out"
echo "llm.c $llmc_rev, cudnn-frontend $fe_rev, sm_$arch" > "$out.version"
echo "llmc-build: $out (llm.c $llmc_rev, cudnn-frontend $fe_rev, sm_$arch)" >&2
