"""The ceiling of a CPU training step made of nothing but its matmuls.

Times every matmul of one GPT training step (forward, input gradient, weight gradient of each linear layer and of
the classifier over the padded vocabulary; attention's own products are left out) alone, at the step's shapes and
layouts, best of REPS, with LibTorch's GEMM on THREADS threads, beside the square GEMM the engine measures its MFU
peak with (engine/torch/device/cpu_peak.cpp: 2048^3). Their sum is the fastest a step could be if everything that is not
a matmul took no time and each matmul ran as fast as it does alone: the step's MFU cannot exceed
model FLOPs / that time / the peak.

Usage: python step_gemms.py [LAYERS,WIDTH,CONTEXT] [BATCH] [THREADS] [fp32|bf16] [REPS]
  default 4,256,256 8 2 fp32 5 (the 4 x 256 benchmark of the CPU write-ups in docs/PERFORMANCE.md)
"""
import sys
import time

import torch

shape = (sys.argv[1] if len(sys.argv) > 1 else "4,256,256").split(",")
L, C, T = map(int, shape)
B = int(sys.argv[2]) if len(sys.argv) > 2 else 8
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
dtype = torch.bfloat16 if len(sys.argv) > 4 and sys.argv[4] == "bf16" else torch.float32
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 5
torch.set_num_threads(threads)
N, Vp = B * T, 50304


def best_seconds(m, k, n, a_transposed, b_transposed):
    # Layouts as autograd's linear: y = x W^T, dx = g W, dW = g^T x (the transposes are views, not copies).
    a = torch.randn(k, m, dtype=dtype).t() if a_transposed else torch.randn(m, k, dtype=dtype)
    b = torch.randn(n, k, dtype=dtype).t() if b_transposed else torch.randn(k, n, dtype=dtype)
    out = torch.empty(m, n, dtype=dtype)
    torch.mm(a, b, out=out)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=out)
        best = min(best, time.perf_counter() - t0)
    return best


def linear(name, c_in, c_out, count):  # forward, input gradient, weight gradient
    return [(f"{name} forward", N, c_in, c_out, False, True, count),
            (f"{name} dx", N, c_out, c_in, False, False, count),
            (f"{name} dW", c_out, N, c_in, True, False, count)]


rows = linear("classifier", C, Vp, 1) + linear("qkv", C, 3 * C, L) + linear("attn proj", C, C, L) + \
    linear("mlp fc", C, 4 * C, L) + linear("mlp proj", 4 * C, C, L)
peak = 2 * 2048 ** 3 / best_seconds(2048, 2048, 2048, False, False)
print(f"{torch.__version__}, {threads} threads, {dtype}; square 2048^3 GEMM: {peak / 1e9:.1f} GFLOP/s")
total_s = total_flop = 0.0
for name, m, k, n, ta, tb, count in rows:
    s = best_seconds(m, k, n, ta, tb)
    total_s, total_flop = total_s + s * count, total_flop + 2 * m * k * n * count
    print(f"{name:22s} {m:>6}x{k:<6}x{n:>6} x{count}: {2 * m * k * n / s / 1e9:6.1f} GFLOP/s {s * count * 1e3:8.1f} ms")
print(f"all: {total_flop / 1e9:.1f} GFLOP in {total_s * 1e3:.0f} ms = {total_flop / total_s / 1e9:.1f} GFLOP/s "
      f"= {total_flop / total_s / peak:.0%} of the square GEMM measured here")
