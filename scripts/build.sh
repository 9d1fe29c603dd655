#!/usr/bin/env bash
# Configures and builds Tokamak. BUILD_DIR (default build), TOKAMAK_GUI (default ON; OFF = CLI, engine and the
# tests that need no GUI) and TOKAMAK_TARGETS may be set; extra arguments go to cmake's configure step.
# LibTorch comes from the set-up's venv, or from any Python's torch with TOKAMAK_TORCH_PYTHON=python3.
set -euo pipefail
configure_only=
[ "${1:-}" = --configure-only ] && { configure_only=1; shift; }
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}
py=${TOKAMAK_TORCH_PYTHON:-$cache/venv/bin/python}
if ! command -v "$py" >/dev/null; then
  echo "build: no Python with torch at $py (hint: run scripts/setup.sh first, or set TOKAMAK_TORCH_PYTHON=python3)" >&2
  exit 1
fi
build=${BUILD_DIR:-$root/build}
torch_prefix=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || {
  echo "build: $py cannot import torch (hint: pip install torch==2.11.0, or set TOKAMAK_TORCH_PYTHON)" >&2
  exit 1
}
gui=${TOKAMAK_GUI:-ON}
cuda=()
[ -x /usr/local/cuda/bin/nvcc ] && cuda=(-DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
# ccache (installed by the set-up) makes a second checkout or a clean rebuild cost seconds; paths are taken
# relative to the checkout so every clone shares one cache.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
  # Precompiled headers (CMake's -include cmake_pch.hxx): ccache caches them and the files that use them
  # only with this sloppiness (its manual, "Precompiled headers").
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
        "${cuda[@]}" -DTOKAMAK_GUI="$gui" "${launcher[@]}" "$@" >&2
fi
[ -n "$configure_only" ] && exit 0
# Two cores and ~10 s per LibTorch translation unit: all cores, but no more jobs than memory allows.
# TOKAMAK_TARGETS="test_config tokamak" builds only those.
read -r -a targets <<< "${TOKAMAK_TARGETS:-}"
cmake --build "$build" -j "$(nproc)" ${targets[@]:+--target "${targets[@]}"} >&2
