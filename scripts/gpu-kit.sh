#!/usr/bin/env bash
# Packs what the GPU sitting runs (scripts/gpu-check.sh) into one file that the device tool can carry:
# carry/kit.tar.xz (KIT_TAR), which unpacks to kit/. A GPU machine has CUDA and a Python with torch 2.11 but no
# Qt, no Debian packages and no internet; both are x86-64 and LibTorch's ABI is the wheel's, so the programs are
# built here and carried. The kit holds only what gpu-check.sh runs: tokamak, tokamak-engine, test_gpu,
# test_kernels, test_fp8 and the kernel labs, stripped; the shared libraries they need that are neither LibTorch's, CUDA's, the C and C++
# runtime's (the machine's torch wheel, driver and system provide those) — Qt Core/Test, PCRE2, SQLite, ICU,
# jemalloc; the ladders, the assets, the PyTorch peer and gpu-check.sh. The device tool carries 64 MiB with the
# working tree: tests/gpu_kit_check.sh checks in CI that the packed kit plus the tracked tree stays under 48 MiB.
# llm.c's train_gpt2cu, the peer versus.py runs, goes in when LLMC_BIN (default <cache>/peers/train_gpt2cu) is there:
# scripts/llmc-build.sh builds it from a copy of llm.c's public source that is never committed; without it the
# sitting's llm.c rows say "not in this kit".
# BUILD_DIR (default build) is where the five programs are taken from; a studio build's are an engine-only
# build's (none links Qt Widgets). They are brought up to date there first (an engine-only build in a new folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
tar_path=${KIT_TAR:-$root/carry/kit.tar.xz}
cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}
programs=(app/tokamak app/tokamak-engine tests/test_gpu tests/test_kernels tests/test_fp8)
targets="tokamak tokamak-engine test_gpu test_kernels test_fp8"
# The CUDA kernel labs (experiments/kernels/*_lab.cu) where the build has CUDA; never built by default.
labs=(bias_gelu_lab residual_layernorm_lab layernorm_backward_lab qkv_heads_lab classifier_rows_lab)
if [ ! -f "$build/build.ninja" ] || grep -q "^build experiments/${labs[0]}:" "$build/build.ninja"; then
  for lab in "${labs[@]}"; do programs+=("experiments/$lab"); targets+=" $lab"; done
fi

# Always built (a no-op when they are current): a kit packs what the checkout's code is, never older programs left
# in the build folder beside a VERSION that names HEAD.
BUILD_DIR=$build TOKAMAK_GUI=${TOKAMAK_GUI:-OFF} TOKAMAK_TARGETS="$targets" "$root/scripts/build.sh"
for p in "${programs[@]}"; do
  [ -x "$build/$p" ] || { echo "gpu-kit: $build/$p was not built" >&2; exit 1; }
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/tokamak-kit-XXXXXX")
trap 'rm -rf "$stage"' EXIT
kit=$stage/kit
mkdir -p "$kit/bin" "$kit/lib" "$kit/ladders" "$kit/cache/assets"
for p in "${programs[@]}"; do cp "$build/$p" "$kit/bin/"; done
llmc=${LLMC_BIN:-$cache/peers/train_gpt2cu}
if [ -x "$llmc" ]; then
  cp "$llmc" "$kit/bin/train_gpt2cu"
  echo "gpu-kit: llm.c's peer in: $(cat "$llmc.version" 2>/dev/null || echo "$llmc")" >&2
else
  echo "gpu-kit: no llm.c peer at $llmc (hint: scripts/llmc-build.sh builds it; the sitting skips its rows)" >&2
fi
# Shared libraries: what ldd resolves, less LibTorch and CUDA's (the machine's torch wheel), the C library and the
# loader (they must be the machine's own; libresolv and libnss too, which call the C library's private symbols of
# its own version), and libstdc++/libgcc_s (the machine's are at least as new: its torch runs on them, and an older
# copy first on the path would break it).
skip='/torch/lib/|/nvidia/|libcuda\.|libcudart|libnv|libcublas|libcudnn|libnccl|libcusparse|libcufft|libcurand|libcusolver|libcupti'
skip+='|/libc\.so|/libm\.so|/libmvec\.so|/libdl\.so|/libpthread\.so|/librt\.so|/libutil\.so|/libresolv\.so|/libanl\.so|/libnss_|/ld-linux|linux-vdso'
skip+='|/libstdc\+\+\.so|/libgcc_s\.so'
for b in "$kit"/bin/*; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | grep -Ev "$skip" |
  while read -r lib; do cp -L "$lib" "$kit/lib/"; done
strip --strip-unneeded "$kit"/bin/* "$kit"/lib/*
cp "$root"/resources/ladders/*.json "$kit/ladders/"
for a in gpt2.tiktoken jargon.txt; do
  [ -f "$cache/assets/$a" ] || { echo "gpu-kit: missing asset $cache/assets/$a (hint: run scripts/setup.sh)" >&2; exit 1; }
  cp "$cache/assets/$a" "$kit/cache/assets/"
done
cp "$root/scripts/gpu-check.sh" "$root/experiments/bench/pytorch_loop.py" "$root/experiments/bench/versus.py" "$kit/"
echo "$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown) built $(date -u +%F)${llmc:+; $(cat "$llmc.version" 2>/dev/null)}" > "$kit/VERSION"
# The GPU machine's C library must be at least as new as the newest symbol version these files ask for.
glibc=$(for f in "$kit"/bin/* "$kit"/lib/*; do objdump -T "$f" 2>/dev/null; done | grep -o 'GLIBC_[0-9.]*' |
  sort -uV | tail -1)
# xz -6 on all cores: -9 saves little here (ICU's data is most of it) and costs CI a minute. KIT_XZ_LEVEL=1 (the
# CI rehearsal) packs in 5 s instead of 30, 25% larger: its carry-size check is then the stricter one.
mkdir -p "$(dirname "$tar_path")"
tar -C "$stage" -cf - kit | xz "-${KIT_XZ_LEVEL:-6}" -T0 > "$tar_path.tmp"
mv "$tar_path.tmp" "$tar_path"
echo "$tar_path: $(du -k "$tar_path" | cut -f1) KiB packed, $(du -sk "$kit" | cut -f1) KiB unpacked ($(ls "$kit/bin" | wc -l) programs, $(ls "$kit/lib" | wc -l) libraries); needs ${glibc/GLIBC_/glibc }+, CUDA, and python3 with torch 2.11" >&2
