#!/usr/bin/env bash
# Tokenizer throughput, Tokamak vs OpenAI's tiktoken, on the same text (default: the default corpus), one
# thread and all cores. Usage: experiments/bench/tokenizer_bench.sh [FILE] [THREADS]
# Tokamak's side is compiled here from the tokenizer's sources alone (no LibTorch), so it runs even while
# the rest of the engine does not build. tiktoken's parallel number is encode_ordinary_batch over the text
# cut into one piece per thread at line ends (its only parallel API); its single-thread number is
# encode_ordinary on the whole text. Both build gpt2 from the same local ranks file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}
file=${1:-$cache/assets/jargon.txt}
threads=${2:-$(nproc)}
ranks=$cache/assets/gpt2.tiktoken
[ -f "$file" ] && [ -f "$ranks" ] || { echo "tokenizer_bench: $file or $ranks is missing (hint: run scripts/setup.sh)" >&2; exit 1; }
bin=$(mktemp -d)/tokenizer_bench
trap 'rm -rf "$(dirname "$bin")"' EXIT
g++ -O3 -DNDEBUG -std=c++17 -I"$root" "$root/experiments/bench/tokenizer_bench.cpp" \
    "$root"/engine/base/data/bpe_*.cpp "$root"/engine/base/data/tokenizer*.cpp "$root/engine/base/util/files.cpp" \
    -lpcre2-8 -pthread -o "$bin"
echo "file: $file ($(stat -c %s "$file") bytes), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
"$bin" "$file" "$threads" 5
TIKTOKEN_CACHE_DIR= "$cache/venv/bin/python" - "$file" "$ranks" "$threads" <<'PY'
import sys, time, tiktoken, tiktoken.load
path, ranks, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
enc = tiktoken.Encoding(name="gpt2",
    pat_str=r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    mergeable_ranks=tiktoken.load.load_tiktoken_bpe(ranks), special_tokens={"<|endoftext|>": 50256})
text = open(path, "rb").read().decode("utf-8", errors="replace")
mb = len(text.encode("utf-8")) / 1e6
def best(f, repeats=5):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter(); n = f(); times.append(time.perf_counter() - t0)
    return min(times), n
t, n = best(lambda: len(enc.encode_ordinary(text)))
print(f"tiktoken {tiktoken.__version__} encode_ordinary 1 thread : {mb / t:7.1f} MB/s  ({n} tokens, {t * 1e3:.1f} ms)")
lines = text.splitlines(keepends=True)
step = (len(lines) + threads - 1) // threads
parts = ["".join(lines[i:i + step]) for i in range(0, len(lines), step)]
t, n = best(lambda: sum(map(len, enc.encode_ordinary_batch(parts, num_threads=threads))))
print(f"tiktoken {tiktoken.__version__} encode_ordinary_batch {threads} threads: {mb / t:7.1f} MB/s  ({n} tokens, {t * 1e3:.1f} ms; cut at line ends, may differ slightly)")
PY
