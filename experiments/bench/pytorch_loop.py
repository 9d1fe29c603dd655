"""A plain PyTorch training loop of the same GPT as Tokamak's: the CPU speed comparison in docs/PERFORMANCE.md, and
the strong peer on a GPU (issue 33). Same shapes, same init scale, AdamW with decay on 2-D weights, SDPA attention,
native LayerNorm/GELU, padded vocabulary, grad clip, one host sync a step (the loss, as `tokamak bench` reads it
at log_every=1); data are random windows of random tokens (speed does not depend on them).
On CUDA it is what people run to be fast: the batches made on the GPU, bf16 autocast, AdamW(fused=True), flash
attention, and with --compile torch.compile, warmed up past its compilation before the timed steps.

    python experiments/bench/pytorch_loop.py --preset nano --precision bf16 --steps 30
    python3 experiments/bench/pytorch_loop.py --device cuda --preset gpt2 --batch 64 --precision bf16 --compile
"""
import argparse
import contextlib
import math
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {"nano": (4, 4, 128, 128), "mini": (6, 6, 384, 256), "gpt2": (12, 12, 768, 1024)}


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.c_fc, self.c_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.attn_proj(y)
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, L, H, C, T, V=50304):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block(C, H) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * L) if name.endswith("c_proj.weight") else 0.02)
            elif "ln_" not in name:
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1), device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)[..., :50257]
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


def attention_backend(device, precision):
    """Flash attention forced on CUDA in bf16 (what the fast loops use); LibTorch's choice elsewhere."""
    if device != "cuda" or precision != "bf16":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.FLASH_ATTENTION])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="nano", choices=PRESETS)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (warm-up steps compile it)")
    ap.add_argument("--compile-backend", default="inductor",
                    help="torch.compile's backend; aot_eager traces the same graphs without generating code (the CPU "
                         "rehearsal of scripts/gpu-check.sh: inductor's C++ build takes minutes on a small CPU)")
    ap.add_argument("--profile", action="store_true", help="after the timed steps, PyTorch's profiler over 3 more")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--shape", help="LAYERS,HEADS,WIDTH,CONTEXT instead of the preset's (e.g. 4,4,256,256)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--median-ms", action="store_true", help="print only the median ms/step (for scripts)")
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("pytorch_loop: --device cuda but torch sees no GPU (hint: run it on the GPU machine)")
    dev = torch.device(args.device)
    cuda = args.device == "cuda"
    torch.set_num_threads(args.threads)
    torch.manual_seed(1337)
    L, H, C, T = tuple(int(v) for v in args.shape.split(",")) if args.shape else PRESETS[args.preset]
    model = GPT(L, H, C, T).to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    # fused=True on CUDA only: the CPU comparisons in docs/PERFORMANCE.md were measured with the loop AdamW.
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8, fused=cuda)
    step_fn = torch.compile(model, backend=args.compile_backend) if args.compile else model
    tokens = torch.randint(50257, (1_000_000,), device=dev)
    offsets = torch.arange(T + 1, device=dev)

    def batch():  # made where the model runs: on a GPU no host copy at all
        ix = torch.randint(len(tokens) - T - 1, (args.batch, 1), device=dev)
        w = tokens[ix + offsets]
        return w[:, :-1], w[:, 1:]

    def train_step():
        x, y = batch()
        with torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.precision == "bf16"), \
                attention_backend(args.device, args.precision):
            loss = step_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()  # the one sync a step

    times = []
    for step in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        train_step()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    if args.median_ms:
        print(f"{1000 * statistics.median(times):.1f}")
        return
    ms = 1000 * statistics.median(times)
    where = torch.cuda.get_device_name(dev) if cuda else f"{torch.get_num_threads()} threads"
    peak = f", peak {torch.cuda.max_memory_allocated(dev) / 1e9:.1f} GB" if cuda else ""
    extras = ", fused AdamW, flash SDPA" if cuda and args.precision == "bf16" else (", fused AdamW" if cuda else "")
    print(f"pytorch {args.shape or args.preset} {args.precision} {'compiled (' + args.compile_backend + ')' if args.compile else 'eager'} "
          f"B={args.batch} T={T} on {where}: {ms:.1f} ms/step (median of {len(times)}), "
          f"{args.batch * T / (ms / 1000):,.0f} tok/s{peak} (torch {torch.__version__}{extras})")
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=activities) as prof:
            for _ in range(3):
                train_step()
        key = "self_device_time_total" if cuda else "self_cpu_time_total"
        print(f"profile of 3 steps, by {key}:")
        print(prof.key_averages().table(sort_by=key, row_limit=15, max_name_column_width=60))


if __name__ == "__main__":
    main()
