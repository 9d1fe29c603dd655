#!/usr/bin/env python3
"""A GPT-2 forward with the speedrun's next model switches, written from their definitions in float64
PyTorch with nothing taken from Tokamak, for tests/test_speedrun_next.cpp.

  speedrun_model.py IN.json OUT.json

IN.json holds the configuration ({"n_layer", "n_head", "unet_skips", "value_embeddings", "tie_weights"}), the
model's parameters by
name and the tokens, each {"shape": [...], "data": [flat]}; OUT.json gets the logits. The model: GPT-2 (learned
positions, pre-LayerNorm blocks, causal softmax attention, tanh GELU, a final LayerNorm, the head tied to the
token embedding or not), and
  unet_skips: the blocks split into a first half of n // 2 and the rest; block n - 1 - k (for each k of the first
    half) takes x + skip_weights[i] * (output of block k) as its input, i counting those blocks from 0 in order;
    a middle block of an odd n has none (modded-nanogpt's 2024-11-10 record for n = 12).
  value_embeddings = k: k more token-embedding tables value_embeds.i; blocks 0 .. k-1 and n-k .. n-1 use tables
    0 .. k-1 in that order (modded-nanogpt's 2024-12-17 record, k = 3), their attention values becoming
    lambda[0] * v + lambda[1] * table[token] per head, lambda = that block's attn.value_lambdas.
"""
import json
import math
import sys

import torch
import torch.nn.functional as F


def load(t):
    return torch.tensor(t["data"], dtype=torch.float64).reshape(t["shape"])


def block(p, b, x, n_head, ve=None):
    B, T, C = x.shape
    D = C // n_head
    h = F.layer_norm(x, (C,), p[b + "ln_1.weight"], p[b + "ln_1.bias"], 1e-5)
    qkv = h @ p[b + "attn.c_attn.weight"].T + p[b + "attn.c_attn.bias"]
    q, k, v = (t.reshape(B, T, n_head, D).transpose(1, 2) for t in qkv.split(C, dim=2))
    if ve is not None:
        lam = p[b + "attn.value_lambdas"]
        v = lam[0] * v + lam[1] * ve.reshape(B, T, n_head, D).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) / math.sqrt(D)
    att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf")).softmax(-1)
    y = (att @ v).transpose(1, 2).reshape(B, T, C)
    x = x + y @ p[b + "attn.c_proj.weight"].T + p[b + "attn.c_proj.bias"]
    h = F.layer_norm(x, (C,), p[b + "ln_2.weight"], p[b + "ln_2.bias"], 1e-5)
    m = F.gelu(h @ p[b + "c_fc.weight"].T + p[b + "c_fc.bias"], approximate="tanh")
    return x + m @ p[b + "c_proj.weight"].T + p[b + "c_proj.bias"]


def forward(cfg, p, idx):
    n, T, k = cfg["n_layer"], idx.shape[1], cfg["value_embeddings"]
    tables = {}
    for i in range(k):
        tables[i] = tables[n - k + i] = p[f"value_embeds.{i}.weight"][idx]

    def run(i, x):
        return block(p, f"blocks.{i}.", x, cfg["n_head"], tables.get(i))

    x = p["wte.weight"][idx] + p["wpe.weight"][:T]
    if not cfg["unet_skips"]:
        for i in range(n):
            x = run(i, x)
    else:
        first = n // 2
        outputs = []
        for i in range(first):
            x = run(i, x)
            outputs.append(x)
        paired = [n - 1 - k for k in range(first)][::-1]  # the blocks that receive a skip, in order
        for i in range(first, n):
            if i in paired:
                x = x + p["skip_weights"][paired.index(i)] * outputs[n - 1 - i]
            x = run(i, x)
    x = F.layer_norm(x, (x.shape[-1],), p["ln_f.weight"], p["ln_f.bias"], 1e-5)
    head = p["wte.weight"] if cfg["tie_weights"] else p["lm_head"]
    return x @ head.T


def main(inp, out):
    with open(inp) as f:
        d = json.load(f)
    params = {name: load(t) for name, t in d["params"].items()}
    logits = forward(d["config"], params, load(d["idx"]).long())
    with open(out, "w") as f:
        json.dump({"logits": {"shape": list(logits.shape), "data": logits.reshape(-1).tolist()}}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
