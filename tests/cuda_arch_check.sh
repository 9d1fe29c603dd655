#!/usr/bin/env bash
# Kernels for every GPU of the catalog: each CUDA compute capability in resources/devices.json (a T4's 7.5 to an RTX
# 5090's 12.0) has a real (SASS) target in the build's TOKAMAK_CUDA_ARCHS, and every kernel (engine/torch/kernels/*.cu)
# was compiled with a code target for each of them, plus PTX for later GPUs. The build compiling them is the proof
# that each kernel compiles for each; this check says that none was left out.
# Usage: cuda_arch_check.sh BUILD_DIR SOURCE_DIR (CTest passes both).
set -euo pipefail
build=$1 root=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
archs=$(sed -n 's/^TOKAMAK_CUDA_ARCHS:STRING=//p' "$build/CMakeCache.txt")
[ -n "$archs" ] || fail "no TOKAMAK_CUDA_ARCHS in $build/CMakeCache.txt"
wanted=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted({x["compute_capability"].replace(".", "") for x in d["devices"] if "compute_capability" in x})))
' "$root/resources/devices.json")
for cc in $wanted; do
  [[ ";$archs;" == *";$cc-real;"* ]] || fail "the catalog has a GPU of compute capability $cc, but TOKAMAK_CUDA_ARCHS is '$archs'"
done
[[ "$archs" == *"-virtual"* ]] || fail "TOKAMAK_CUDA_ARCHS '$archs' has no PTX (a -virtual entry) for GPUs newer than the list"
kernels=$(cd "$root" && ls engine/torch/kernels/*.cu)
[ -n "$kernels" ] || fail "no kernels in $root/engine/torch/kernels"
# Only where the build compiles CUDA (a LibTorch without CUDA builds no kernel): then every .cu has every target.
if ! grep -q '\.cu"' "$build/compile_commands.json"; then
  echo "cuda_arch_check: this build compiles no CUDA (a CPU-only LibTorch): the list alone was checked"
  exit 0
fi
python3 - "$build/compile_commands.json" "$archs" $kernels <<'PY'
import json, re, sys
commands, archs, kernels = json.load(open(sys.argv[1])), sys.argv[2].split(";"), sys.argv[3:]
missing = []
for k in kernels:
    cmd = next((e["command"] for e in commands if e["file"].endswith("/" + k)), None)
    if cmd is None:
        missing.append(f"{k} is not compiled at all")
        continue
    for a in archs:
        num, kind = a.split("-")
        code = f"sm_{num}" if kind == "real" else f"compute_{num}"
        if not re.search(rf"code=\[?{code}\]?", cmd):
            missing.append(f"{k} has no {code}")
if missing:
    sys.exit("FAIL: " + "; ".join(missing))
print(f"cuda_arch_check: {len(kernels)} kernels × {len(archs)} targets ({', '.join(archs)})")
PY
