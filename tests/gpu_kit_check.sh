#!/usr/bin/env bash
# The GPU sitting rehearsed in CI, on a machine without a GPU, so that only the GPU can surprise:
# packs the kit from this build's programs (scripts/gpu-kit.sh), checks that it and the tracked tree fit in what the
# device tool carries (48 MiB of its 64), unpacks it in a folder of its own and runs its gpu-check.sh, the sitting's
# whole plan, with DEVICE=cpu: the same programs, steps and OUT layout at tiny sizes. Then checks OUT as the device
# tool would bring it back: summary.md with every step ok (memcheck skipped without a GPU) in the sitting's
# order, log.txt with each step's output framed, runs-cpu.json with the two ladders' 12 rungs, versus-cpu.json with
# the peers' six rows, nothing else.
# Usage: gpu_kit_check.sh BUILD_DIR SOURCE_DIR (CTest passes both).
set -euo pipefail
build=$1 root=$2
py=${TOKAMAK_TORCH_PYTHON:-${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}/venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/tokamak-gpu-kit-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# xz's fastest preset: the kit is larger than a sitting's (-6), so if it fits the carry here, that one does.
KIT_XZ_LEVEL=1 KIT_TAR=$work/kit.tar.xz BUILD_DIR=$build "$root/scripts/gpu-kit.sh"
kit_bytes=$(stat -c %s "$work/kit.tar.xz")
tree_bytes=$(cd "$root" && git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s + 0}')
[ "$tree_bytes" -gt 0 ] || fail "cannot list the tracked tree of $root (git ls-files)"
limit=$((48 * 1024 * 1024))
echo "packed kit $((kit_bytes / 1024)) KiB + tracked tree $((tree_bytes / 1024)) KiB = $(((kit_bytes + tree_bytes) / 1024)) KiB of $((limit / 1024)) KiB"
[ $((kit_bytes + tree_bytes)) -le $limit ] ||
  fail "the kit and the tree no longer fit the device tool's carry with room to spare (hint: carry fewer libraries)"

tar xJf "$work/kit.tar.xz" -C "$work"
[ -x "$work/kit/gpu-check.sh" ] || fail "the kit unpacks without kit/gpu-check.sh"
out=$work/out
rc=0
# No device tool here, so no 10-minute limit: a loaded CI machine must not cut steps short (BUDGET).
DEVICE=cpu BUDGET=1500 OUT=$out SCRATCH=$work/scratch PYTHON=$py "$work/kit/gpu-check.sh" || rc=$?
[ -f "$out/summary.md" ] || fail "gpu-check.sh wrote no summary.md"
[ "$rc" = 0 ] || { cat "$out/summary.md"; fail "gpu-check.sh exited $rc"; }
files=$(cd "$out" && find . -type f | sort | tr '\n' ' ')
want="./log.txt ./runs-cpu.json ./summary.md ./versus-cpu.json "
[ "$files" = "$want" ] || fail "OUT holds '$files', expected '$want' (the device tool brings back 8 files)"
steps=$(grep -c '^| [a-z]' "$out/summary.md") || true
expected=21
[ "$steps" = $((expected + 1)) ] || { cat "$out/summary.md"; fail "$((steps - 1)) steps in the summary, expected $expected"; }
ok=$(grep -c '^| [^|]* | ok |' "$out/summary.md") || true
skipped=$(grep -c '^| [^|]* | skipped |' "$out/summary.md") || true
[ $((ok + skipped)) = "$expected" ] || { cat "$out/summary.md"; fail "not every step ok"; }
[ "$skipped" = 1 ] || { cat "$out/summary.md"; fail "$skipped steps skipped, expected 1 (memcheck needs a GPU)"; }
# The plan's order is the sitting's: what a cut lease must not lose comes first.
order=$(grep -o '^| [a-z][^|]*|' "$out/summary.md" | sed 's/^| //; s/ *|$//' | sed -n '2,10p' | tr '\n' ',')
[ "$order" = "libraries,test_kernels,health metrics,versus llm.c and pytorch,bench fp16,layer statistics cost,test_fp8,test_gpu,memcheck," ] ||
  fail "the plan's first steps are '$order'"
# Every step's output is in log.txt as it runs, so a cut step still brings back what it printed.
grep -q '^== test_kernels (limit ' "$out/log.txt" && grep -q '^== test_kernels: exit 0 after ' "$out/log.txt" ||
  fail "log.txt does not frame each step's output"
grep -q '^| memcheck | skipped |' "$out/summary.md" || fail "memcheck should be skipped without a GPU"
runs=$(grep -o '"uid"' "$out/runs-cpu.json" | wc -l)
[ "$runs" -ge 12 ] || fail "runs-cpu.json holds $runs runs, expected 12 (8 + 4 rungs)"
grep -q 'every library found' "$out/summary.md" || fail "a library of the kit was not found"
grep -q '^| layer statistics cost | ok | .*% of a step' "$out/summary.md" || fail "the layer statistics' cost was not measured"
grep -q '^| kernel labs | ok | .*no CUDA device' "$out/summary.md" || fail "the kit's kernel labs did not run"
# The op-attributed profile: every rung's kernels (operators on a CPU) with what launched them, totals by kind.
grep -q '^kind  *calls/step  *ms/step  *share' "$out/summary.md" || fail "the kernel profile has no table by kind"
grep -q '^| pytorch strongest compile | ok | .*strongest compile: mode=' "$out/summary.md" ||
  fail "the strongest-compile step named no strongest compile"
# Each configuration ran in a process of its own, and a "so far" line followed each compiled one but the last.
[ "$(grep -c '^strongest compile so far: ' "$out/log.txt")" = 1 ] || fail "the peer printed no running strongest compile"
# The peers beside Tokamak: Tokamak twice (the drift between), llm.c said to be CUDA's, both PyTorch heads, each
# with the attention kernel a profile saw, and the ratio to the strongest PyTorch variant.
grep -q '^| versus llm.c and pytorch | ok | ' "$out/summary.md" || fail "the versus step did not run"
for row in 'tokamak  ' 'llm.c -ge 0  *skipped: CUDA only' 'llm.c -ge 2  *skipped: CUDA only' \
           'pytorch default, sliced head  ' 'pytorch default, nanogpt head  ' 'tokamak, again  '; do
  grep -q "^$row" "$out/summary.md" || fail "the versus table has no row '$row'"
done
grep -q '^drift: the second Tokamak row is ' "$out/summary.md" || fail "the versus table says no drift"
grep -q '^versus: Tokamak [0-9.]*× the strongest PyTorch variant' "$out/summary.md" || fail "versus gave no ratio"
[ "$(grep -c 'head=sliced .*(ran cpu flash)\|(ran cpu flash) head=sliced' "$out/log.txt")" -ge 1 ] ||
  fail "the PyTorch loop did not name the attention kernel it ran"
[ "$(grep -o '"status": "ok"' "$out/versus-cpu.json" | wc -l)" = 4 ] || fail "versus-cpu.json does not hold 4 rows ok"
echo "gpu-check rehearsal: the sitting's plan ok"
sed -n '/^| step/,/^$/p' "$out/summary.md"
