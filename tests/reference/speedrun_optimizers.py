#!/usr/bin/env python3
"""Reference values for the speedrun's next optimizer switches, for tests/test_speedrun_next.cpp, in float64.

Written from the papers' definitions, with nothing taken from Tokamak:
  Polar Express (Amsel, Persson, Musco, Gower 2025, arXiv 2505.16932): normalise G by its Frobenius norm times
    1.02, then five odd quintic steps X <- a X + b (X X^T) X + c (X X^T)^2 X, one (a, b, c) per step (the
    coefficients modded-nanogpt's 2025-09-29 record publishes: 5 steps, safety factor 2e-2, cushion 2).
  NorMuon (Li et al. 2025, arXiv 2510.05491): Muon's orthogonalised update O, then per output neuron (row of a
    (out, in) weight) a running mean V of the row's mean square, O / sqrt(V), rescaled to O's Frobenius norm
    (as modded-nanogpt's NorMuon record does, so Muon's learning rate carries over).
  Learning rates per group: torch.optim.AdamW itself, with the head and the embeddings in groups of their own lr.

  speedrun_optimizers.py OUT.json

writes the inputs (seeded here) and the expected outputs as {"shape": [...], "data": [flat float64]}.
"""
import json
import math
import sys

import torch

PE = [
    (8.156554524902461, -22.48329292557795, 15.878769915207462),
    (4.042929935166739, -2.808917465908714, 0.5000178451051316),
    (3.8916678022926607, -2.772484153217685, 0.5060648178503393),
    (3.285753657755655, -2.3681294933425376, 0.46449024233003106),
    (2.3465413258596377, -1.7097828382687081, 0.42323551169305323),
]
NS = (3.4445, -4.7750, 2.0315)


def odd_quintic_steps(g, steps, norm_scale, eps):
    """Works on the wide orientation (rows <= columns), so X X^T is the small Gram matrix."""
    x = g.T if g.shape[0] > g.shape[1] else g
    x = x / (torch.linalg.matrix_norm(x) * norm_scale + eps)
    for a, b, c in steps:
        gram = x @ x.T
        x = a * x + b * (gram @ x) + c * (gram @ gram @ x)
    return x.T if g.shape[0] > g.shape[1] else x


def polar_express(g):
    return odd_quintic_steps(g, PE, 1.02, 1e-6)


def newton_schulz(g):
    return odd_quintic_steps(g, [NS] * 5, 1.0, 1e-7)


def tensor(t):
    return {"shape": list(t.shape), "data": t.detach().to(torch.float64).reshape(-1).tolist()}


def normuon_case(gen, orth):
    """Two steps of NorMuon on three matrices (tall, wide, square) with random gradients."""
    lr, scale, beta, beta2 = 0.01, 3.0, 0.95, 0.95
    shapes = [(48, 16), (16, 64), (24, 24)]
    case = {"lr": lr, "lr_scale": scale, "momentum": beta, "beta2": beta2, "matrices": []}
    for rows, cols in shapes:
        w = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * 0.1
        m = torch.zeros_like(w)
        v = torch.zeros(rows, 1, dtype=torch.float64)
        entry = {"w0": tensor(w), "grads": [], "w": [], "second_moment": []}
        for _ in range(2):
            g = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
            m = beta * m + (1 - beta) * g
            o = orth((1 - beta) * g + beta * m)
            v = beta2 * v + (1 - beta2) * (o * o).mean(dim=1, keepdim=True)
            n = o / v.clamp_min(1e-10).sqrt()
            n = n * (torch.linalg.matrix_norm(o) / torch.linalg.matrix_norm(n).clamp_min(1e-10))
            w = w - lr * scale * math.sqrt(max(1.0, rows / cols)) * n
            entry["grads"].append(tensor(g))
            entry["w"].append(tensor(w))
            entry["second_moment"].append(tensor(v.reshape(-1)))
        case["matrices"].append(entry)
    return case


def adamw_groups_case(gen):
    """Two steps of PyTorch's AdamW over a model's kinds of parameters, the head and embeddings at their own lr."""
    lr, head_lr, embed_lr, wd = 0.01, 0.002, 0.05, 0.1
    shapes = {"wte.weight": (64, 16), "wpe.weight": (8, 16), "lm_head": (64, 16),
              "blocks.0.attn.c_attn.weight": (48, 16), "blocks.0.ln_1.weight": (16,)}
    params = {n: (torch.randn(*s, generator=gen, dtype=torch.float64) * 0.1).requires_grad_() for n, s in shapes.items()}
    start = {n: tensor(p) for n, p in params.items()}
    lr_of = {"lm_head": head_lr, "wte.weight": embed_lr, "wpe.weight": embed_lr}
    groups = [{"params": [p], "lr": lr_of.get(n, lr), "weight_decay": wd if p.dim() >= 2 else 0.0}
              for n, p in params.items()]
    opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, foreach=False)
    grads = []
    for _ in range(2):
        step = {}
        for n, p in params.items():
            p.grad = torch.randn(p.shape, generator=gen, dtype=torch.float64)
            step[n] = tensor(p.grad)
        grads.append(step)
        opt.step()
    return {"lr": lr, "head_lr": head_lr, "embed_lr": embed_lr, "weight_decay": wd, "start": start, "grads": grads,
            "end": {n: tensor(p) for n, p in params.items()}}


def main(out):
    gen = torch.Generator().manual_seed(37)
    pe = []
    for rows, cols in [(32, 96), (128, 32), (48, 48)]:
        g = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
        pe.append({"g": tensor(g), "polar_express": tensor(polar_express(g)), "newton_schulz": tensor(newton_schulz(g))})
    result = {"polar_express": pe,
              "normuon_newton_schulz": normuon_case(gen, newton_schulz),
              "normuon_polar_express": normuon_case(gen, polar_express),
              "adamw_groups": adamw_groups_case(gen)}
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1])
