#!/usr/bin/env python3
"""Golden values of a small GPT-2 from plain PyTorch, for tests/test_golden.cpp (llm.c's test_gpt2 habit).

The model here is written from GPT-2's definition with nothing taken from Tokamak: pre-LayerNorm blocks,
causal attention with an explicit mask, tanh GELU, a head tied to the token embedding. Every weight is random
(LayerNorm gains and all biases too, so no path hides behind a one or a zero). It computes in float64, so
the golden values are the model's exact answer and the C++ side (float32) is judged against the truth.

  gpt_golden.py OUT_DIR

writes OUT_DIR/golden.json (the configuration, the tokens, the losses of `steps` AdamW steps, and where each
tensor lies in golden.bin) and OUT_DIR/golden.bin (float64, little-endian): every parameter
(param.NAME), the logits of the first forward (logits) and every gradient of the first backward (grad.NAME).
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

CFG = dict(n_layer=2, n_head=4, n_embd=32, context=16, vocab_size=64, batch=4, seq=12, steps=10, seed=20240520,
           lr=1e-2, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1, grad_clip=1.0)


def make_parameters(cfg, gen):
    C, V, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_layer"]

    def rand(*shape, std=0.02, mean=0.0):
        return (mean + std * torch.randn(*shape, generator=gen, dtype=torch.float64)).requires_grad_()

    # Scaled so every pre-activation is O(1): at GPT-2's init (std 0.02) the GELU and softmax inputs are so
    # small that both are nearly linear, and a wrong nonlinearity would pass unnoticed.
    w_in, w_hidden = 1.0 / math.sqrt(C), 1.0 / math.sqrt(4 * C)
    p = {"wte.weight": rand(V, C, std=0.3), "wpe.weight": rand(cfg["context"], C, std=0.3)}
    for layer in range(L):
        b = f"blocks.{layer}."
        p[b + "ln_1.weight"], p[b + "ln_1.bias"] = rand(C, std=0.1, mean=1.0), rand(C, std=0.1)
        p[b + "attn.c_attn.weight"], p[b + "attn.c_attn.bias"] = rand(3 * C, C, std=w_in), rand(3 * C, std=0.1)
        p[b + "attn.c_proj.weight"], p[b + "attn.c_proj.bias"] = rand(C, C, std=w_in), rand(C, std=0.1)
        p[b + "ln_2.weight"], p[b + "ln_2.bias"] = rand(C, std=0.1, mean=1.0), rand(C, std=0.1)
        p[b + "c_fc.weight"], p[b + "c_fc.bias"] = rand(4 * C, C, std=w_in), rand(4 * C, std=0.1)
        p[b + "c_proj.weight"], p[b + "c_proj.bias"] = rand(C, 4 * C, std=w_hidden), rand(C, std=0.1)
    p["ln_f.weight"], p["ln_f.bias"] = rand(C, std=0.1, mean=1.0), rand(C, std=0.1)
    return p


def forward(p, cfg, idx, targets):
    B, T = idx.shape
    C, H = cfg["n_embd"], cfg["n_head"]
    D = C // H
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    x = p["wte.weight"][idx] + p["wpe.weight"][:T]
    for layer in range(cfg["n_layer"]):
        b = f"blocks.{layer}."
        h = F.layer_norm(x, (C,), p[b + "ln_1.weight"], p[b + "ln_1.bias"], 1e-5)
        q, k, v = (h @ p[b + "attn.c_attn.weight"].T + p[b + "attn.c_attn.bias"]).split(C, dim=2)
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ p[b + "attn.c_proj.weight"].T + p[b + "attn.c_proj.bias"]
        h = F.layer_norm(x, (C,), p[b + "ln_2.weight"], p[b + "ln_2.bias"], 1e-5)
        m = F.gelu(h @ p[b + "c_fc.weight"].T + p[b + "c_fc.bias"], approximate="tanh")
        x = x + m @ p[b + "c_proj.weight"].T + p[b + "c_proj.bias"]
    x = F.layer_norm(x, (C,), p["ln_f.weight"], p["ln_f.bias"], 1e-5)
    logits = x @ p["wte.weight"].T
    return logits, F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def main(out_dir):
    cfg = CFG
    gen = torch.Generator().manual_seed(cfg["seed"])
    p = make_parameters(cfg, gen)
    tokens = torch.randint(cfg["vocab_size"], (cfg["batch"], cfg["seq"] + 1), generator=gen)
    idx, targets = tokens[:, :-1], tokens[:, 1:]

    blob, index = bytearray(), {}

    def put(name, t):
        index[name] = {"shape": list(t.shape), "offset": len(blob) // 8}
        flat = t.detach().to(torch.float64).contiguous().reshape(-1)
        blob.extend(struct.pack(f"<{flat.numel()}d", *flat.tolist()))

    for name, t in p.items():
        put("param." + name, t)

    decay = [t for t in p.values() if t.dim() >= 2]
    no_decay = [t for t in p.values() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"], foreach=False)
    losses, norms = [], []
    for step in range(cfg["steps"]):
        opt.zero_grad(set_to_none=True)
        logits, loss = forward(p, cfg, idx, targets)
        loss.backward()
        if step == 0:
            put("logits", logits)
            for name, t in p.items():
                put("grad." + name, t.grad)
        norms.append(float(torch.nn.utils.clip_grad_norm_(list(p.values()), cfg["grad_clip"])))
        losses.append(float(loss.detach()))
        opt.step()

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "golden.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(out_dir, "golden.json"), "w") as f:
        json.dump({"config": cfg, "tokens": tokens.tolist(), "losses": losses, "grad_norms": norms,
                   "tensors": index}, f)


if __name__ == "__main__":
    main(sys.argv[1])
