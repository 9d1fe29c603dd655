#!/usr/bin/env bash
# Configures and builds Tokamak with the LibTorch of the set-up's venv. BUILD_DIR (default build) and
# TOKAMAK_GUI (default ON when Qt is installed) and TOKAMAK_TARGETS may be set; extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}
py=$cache/venv/bin/python
[ -x "$py" ] || { echo "build: no LibTorch venv at $cache/venv (hint: run scripts/setup.sh first)" >&2; exit 1; }
build=${BUILD_DIR:-$root/build}
torch_prefix=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
gui=${TOKAMAK_GUI:-ON}
# ccache (installed by the set-up) makes a second checkout or a clean rebuild cost seconds; paths are taken
# relative to the checkout so every clone shares one cache.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
        -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
        -DTOKAMAK_GUI="$gui" "${launcher[@]}" "$@" >&2
fi
# Two cores and ~10 s per LibTorch translation unit: all cores, but no more jobs than memory allows.
# TOKAMAK_TARGETS="test_config tokamak" builds only those.
read -r -a targets <<< "${TOKAMAK_TARGETS:-}"
cmake --build "$build" -j "$(nproc)" ${targets[@]:+--target "${targets[@]}"} >&2
