"""What experiments/bench/versus.py reads and writes for the GPU sitting's comparison, checked without a GPU: llm.c's
step line (the format of its train_gpt2.cu printf) gives the step's ms past the warm-up and nothing else; its token
file has llm.c's header and only GPT-2 ids; `tokamak bench`'s step-times line is read whole; the percentiles are
bench's. Usage: versus_check.py SOURCE_DIR"""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1], "experiments", "bench"))
import versus  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


# llm.c's line: "step %4d/%d | loss %7.6f (%+.2fz)| norm %6.4f (%+.2fz)| lr %.2e | %.2f ms | %.1f%% bf16 MFU | %.0f tok/s"
line = "step %4d/%d | loss %7.6f (%+.2fz)| norm %6.4f (%+.2fz)| lr %.2e | %.2f ms | %.1f%% bf16 MFU | %.0f tok/s\n"
parse = versus.llmc_parser(warmup=10)
check(parse(line % (11, 30, 10.9, 0.0, 1.2, 0.1, 3e-4, 123.45, 45.6, 531000)) == [123.45], "a timed llm.c step")
check(parse(line % (10, 30, 10.9, 0.0, 1.2, 0.1, 3e-4, 999.0, 45.6, 531000)) is None, "a warm-up llm.c step")
check(parse("val loss 10.9\n") is None, "a line that is no step")

# `tokamak bench`'s line after each rung.
got = versus.tokamak_parse("  step times: median 123.40 ms, 10-90% 120.10-130.25 ms, 20 timed steps\n")
check(got == (123.4, 120.1, 130.25, 20), f"bench's step-times line read as {got}")
check(versus.tokamak_parse("[1/5] cuda-graphs/batch 8, eager\n") is None, "a bench line that is no times")

# Percentiles as bench's: linear between the nearest ranks.
check(versus.percentile([1, 2, 3, 4, 5], 0.5) == 3, "the median of five")
check(abs(versus.percentile([10, 20], 0.1) - 11) < 1e-9, "the 10th percentile of two")

with tempfile.TemporaryDirectory() as d:
    path = versus.write_llmc_data(d, tokens=5000)
    raw = open(path, "rb").read()
    magic, version, count = struct.unpack("<3i", raw[:12])
    check((magic, version, count) == (20240520, 1, 5000), f"llm.c's header read {magic, version, count}")
    check(len(raw) == 256 * 4 + 2 * 5000, f"the token file holds {len(raw)} bytes")
    ids = struct.unpack(f"<{count}H", raw[1024:])
    check(max(ids) < 50257 and len(set(ids)) > 1000, "the tokens are varied GPT-2 ids")
    check(sorted(os.listdir(d)) == ["random_tokens.bin"], "no temporary file left beside it")

if failures:
    print("FAIL: " + "; ".join(failures))
    sys.exit(1)
print("versus.py reads llm.c's and bench's lines and writes llm.c's token file")
