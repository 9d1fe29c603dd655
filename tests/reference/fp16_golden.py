#!/usr/bin/env python3
"""fp16 training with PyTorch's GradScaler, for tests/test_golden.cpp's check of Tokamak's fp16 loop.

The model and weights are gpt_golden.py's (random, every gain and bias too), in float32, trained under CPU fp16
autocast with torch.amp.GradScaler("cpu"): the loss scaled before backward, the gradients unscaled before the
clip, a step with any inf/NaN gradient skipped and the scale backed off, the scale grown after `growth_interval`
good steps. The start scale is far too big for fp16 (2^24: the first six steps' gradients overflow), and the
interval short, so sixteen steps see six back-offs, then the scale grow three times. The forward uses the library's ops (linear,
scaled_dot_product_attention, layer_norm, tanh GELU), as Tokamak's native layers do.

  fp16_golden.py OUT.json

writes, for each step: the scale the step was taken at, whether it was skipped, and its loss.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_golden import CFG, make_parameters  # noqa: E402

STEPS, INIT_SCALE, GROWTH_INTERVAL = 16, 2.0 ** 24, 3


def forward(p, cfg, idx, targets):
    B, T = idx.shape
    C, H = cfg["n_embd"], cfg["n_head"]
    x = p["wte.weight"][idx] + p["wpe.weight"][:T]
    for layer in range(cfg["n_layer"]):
        b = f"blocks.{layer}."
        h = F.layer_norm(x, (C,), p[b + "ln_1.weight"], p[b + "ln_1.bias"], 1e-5)
        q, k, v = F.linear(h, p[b + "attn.c_attn.weight"], p[b + "attn.c_attn.bias"]).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + F.linear(y, p[b + "attn.c_proj.weight"], p[b + "attn.c_proj.bias"])
        h = F.layer_norm(x, (C,), p[b + "ln_2.weight"], p[b + "ln_2.bias"], 1e-5)
        m = F.gelu(F.linear(h, p[b + "c_fc.weight"], p[b + "c_fc.bias"]), approximate="tanh")
        x = x + F.linear(m, p[b + "c_proj.weight"], p[b + "c_proj.bias"])
    x = F.layer_norm(x, (C,), p["ln_f.weight"], p["ln_f.bias"], 1e-5)
    logits = F.linear(x, p["wte.weight"])
    return F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), targets.reshape(-1))


def main(out):
    cfg = CFG
    gen = torch.Generator().manual_seed(cfg["seed"])
    p = {k: v.detach().float().requires_grad_() for k, v in make_parameters(cfg, gen).items()}
    tokens = torch.randint(cfg["vocab_size"], (cfg["batch"], cfg["seq"] + 1), generator=gen)
    idx, targets = tokens[:, :-1], tokens[:, 1:]
    decay = [t for t in p.values() if t.dim() >= 2]
    no_decay = [t for t in p.values() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"], foreach=False)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE, growth_factor=2.0, backoff_factor=0.5,
                                  growth_interval=GROWTH_INTERVAL)
    steps = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.float16):
            loss = forward(p, cfg, idx, targets)
        scale = scaler.get_scale()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(list(p.values()), cfg["grad_clip"])
        skipped = sum(v.item() for v in scaler._per_optimizer_states[id(opt)]["found_inf_per_device"].values()) > 0
        scaler.step(opt)
        scaler.update()
        steps.append({"scale": scale, "skipped": bool(skipped), "loss": float(loss.detach())})
    with open(out, "w") as f:
        json.dump({"init_scale": INIT_SCALE, "growth_interval": GROWTH_INTERVAL, "steps": steps}, f)


if __name__ == "__main__":
    main(sys.argv[1])
