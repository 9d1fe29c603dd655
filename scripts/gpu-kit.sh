#!/usr/bin/env bash
# Packs what a GPU server needs to check Tokamak on CUDA, built here: an air-gapped node usually has CUDA and
# a Python with torch 2.11 but no Qt, no Debian -dev packages and no internet. Building here and carrying the
# binaries proved simpler than carrying headers (both machines are x86-64, and LibTorch's ABI is the wheel's).
# The kit (carry/kit, git-ignored, tens of MB) holds: the engine-only build (tokamak, tokamak-engine and the
# test suites that need no GUI), the shared libraries they need that are neither LibTorch's nor CUDA's nor
# the C library's (Qt Core/Test, PCRE2, SQLite, ICU, libstdc++), the ladders, the assets and gpu-check.sh.
# Copy it beside any checkout (or anywhere) and run `carry/kit/gpu-check.sh` on the GPU machine.
# KIT (default carry/kit) and BUILD_DIR (default build-nogui) may be set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kit=${KIT:-$root/carry/kit}
build=${BUILD_DIR:-$root/build-nogui}
cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}

BUILD_DIR=$build TOKAMAK_GUI=OFF TOKAMAK_TARGETS= "$root/scripts/build.sh"

rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/lib" "$kit/ladders" "$kit/cache/assets"
cp "$build/app/tokamak" "$build/app/tokamak-engine" "$kit/bin/"
for t in "$build"/tests/test_*; do
  [ -x "$t" ] && [ -f "$t" ] && cp "$t" "$kit/bin/"
done
# Shared libraries: everything ldd resolves except LibTorch (the GPU machine's torch provides it), CUDA's
# (its driver and toolkit) and the C library itself (it must be the machine's own).
skip='/torch/lib/|/nvidia/|libcuda\.|libcudart|libnv|libcublas|libcudnn|libnccl|libcusparse|libcufft|libcurand|libcusolver|libcupti'
skip+='|/libc\.so|/libm\.so|/libdl\.so|/libpthread\.so|/librt\.so|/libutil\.so|/ld-linux|linux-vdso'
for b in "$kit"/bin/*; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | grep -Ev "$skip" |
  while read -r lib; do cp -L "$lib" "$kit/lib/"; done
cp "$root"/experiments/ladders/*.json "$kit/ladders/"
for a in gpt2.tiktoken jargon.txt; do
  [ -f "$cache/assets/$a" ] || { echo "gpu-kit: missing asset $cache/assets/$a (hint: run scripts/setup.sh)" >&2; exit 1; }
  cp "$cache/assets/$a" "$kit/cache/assets/"
done
cp "$root/scripts/gpu-check.sh" "$kit/"
# The GPU machine's C library must be at least as new as the newest symbol version these files ask for.
glibc=$(for f in "$kit"/bin/* "$kit"/lib/*; do objdump -T "$f" 2>/dev/null; done | grep -o 'GLIBC_[0-9.]*' |
  sort -uV | tail -1)
echo "$(du -sh "$kit" | cut -f1) in $kit ($(ls "$kit/bin" | wc -l) programs, $(ls "$kit/lib" | wc -l) libraries); needs ${glibc/GLIBC_/glibc }+, CUDA, and python3 with torch 2.11" >&2
