"""A plain PyTorch training loop of the same GPT as Tokamak's, for the CPU speed comparison in
docs/PERFORMANCE.md. Same shapes, same init scale, AdamW with decay on 2-D weights, SDPA attention, native
LayerNorm/GELU, padded vocabulary, grad clip; data are random windows of the default corpus tokens.

    python experiments/bench/pytorch_loop.py --preset nano --precision bf16 --steps 30
"""
import argparse
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
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for b in self.blocks:
            x = b(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)[..., :50257]
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="nano", choices=PRESETS)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--shape", help="LAYERS,HEADS,WIDTH,CONTEXT instead of the preset's (e.g. 4,4,256,256)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--median-ms", action="store_true", help="print only the median ms/step (for scripts)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1337)
    L, H, C, T = tuple(int(v) for v in args.shape.split(",")) if args.shape else PRESETS[args.preset]
    model = GPT(L, H, C, T)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    tokens = torch.randint(50257, (1_000_000,))
    times = []
    for step in range(args.warmup + args.steps):
        ix = torch.randint(len(tokens) - T - 1, (args.batch,))
        x = torch.stack([tokens[i:i + T] for i in ix])
        y = torch.stack([tokens[i + 1:i + T + 1] for i in ix])
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    if args.median_ms:
        print(f"{1000 * statistics.median(times):.1f}")
        return
    ms = 1000 * sum(times) / len(times)
    print(f"pytorch {args.shape or args.preset} {args.precision} B={args.batch} T={T}: {ms:.1f} ms/step, "
          f"{args.batch * T / (ms / 1000):,.0f} tok/s (torch {torch.__version__}, {torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
