#!/usr/bin/env python3
"""`tokamak plan` against published GPT-2 throughputs (docs/PLANNING.md, "Checked against published numbers").

Each implementation (llm.c, PyTorch with torch.compile, Tokamak) gets ONE number, fitted on ONE of its rows (marked
"calibration"): with --fit all (the default) a factor on every fraction of `tokamak plan`'s GPU defaults (Tokamak's
H200 step: matmul 72% of the dense peak, attention 21%, the head 41% of bandwidth, the glue 33%, AdamW 48%; each
capped at 1); with --fit glue the memory-bound glue's fraction alone. Every other row of the implementation is a
prediction: other GPUs, other sizes, other GPU counts, other batches. The launch overhead keeps the default.
Throughputs are total tok/s.

    python3 experiments/plan/check_published.py [--tokamak build/app/tokamak] [--fit glue|all]   # the Markdown table
"""
import argparse
import json
import os
import subprocess
import tempfile

GPT2 = {"124M": "gpt2", "350M": "gpt2-medium", "774M": "gpt2-large", "1.5B": "gpt2-xl"}

# (implementation, what, device, GPUs, sets, published tok/s, source). Sources: see docs/PLANNING.md.
ROWS = [
    ("llm.c", "124M, 8×A100 80GB SXM, batch 64, ZeRO-1", "A100 80GB SXM", 8,
     ["model.preset=gpt2", "train.batch_size=64", "dist.zero=1"], 1.75e6,
     "llm.c scripts/run_gpt2_124M.sh: ~300 ms a 524,288-token step"),
    ("llm.c", "124M, 8×H100 SXM, batch 64, ZeRO-1", "H100 SXM", 8,
     ["model.preset=gpt2", "train.batch_size=64", "dist.zero=1"], 3.74e6,
     "modded-nanogpt records/track_1_short/2024-10-13_llmc: 140 ms a step"),
    ("llm.c", "124M, 1×A100 40GB PCIe, batch 32", "A100 40GB PCIe", 1,
     ["model.preset=gpt2", "train.batch_size=32"], 145e3, "llm.c PR #323"),
    ("llm.c", "350M, 8×A100 80GB SXM, batch 64, ZeRO-1", "A100 80GB SXM", 8,
     ["model.preset=gpt2-medium", "train.batch_size=64", "dist.zero=1"], 639e3,
     "llm.c scripts/run_gpt2_350M.sh: ~820 ms a step"),
    ("llm.c", "774M, 8×A100 80GB SXM, batch 32 × 2, ZeRO-1", "A100 80GB SXM", 8,
     ["model.preset=gpt2-large", "train.batch_size=32", "train.grad_accum=2", "dist.zero=1"], 308e3,
     "llm.c scripts/run_gpt2_774M.sh: ~1.7 s a step"),
    ("llm.c", "1.5B, 8×H100 SXM, batch 16 × 8, ZeRO-1", "H100 SXM", 8,
     ["model.preset=gpt2-xl", "train.batch_size=16", "train.grad_accum=8", "dist.zero=1"], 374e3,
     "llm.c scripts/run_gpt2_1558M.sh: 2.80 s a 1,048,576-token step"),
    ("PyTorch", "124M, 1×A100 80GB SXM, batch 16 (build-nanogpt, all switches)", "A100 80GB SXM", 1,
     ["model.preset=gpt2", "train.batch_size=16"], 182e3, "build-nanogpt (Let's reproduce GPT-2): 90 ms a step"),
    ("PyTorch", "124M, 8×A100 80GB SXM, batch 64 (build-nanogpt DDP)", "A100 80GB SXM", 8,
     ["model.preset=gpt2", "train.batch_size=64"], 1.1e6, "a build-nanogpt write-up: 1.1M tok/s"),
    ("PyTorch", "124M, 1×A100 40GB PCIe, batch 32 (compile, flash)", "A100 40GB PCIe", 1,
     ["model.preset=gpt2", "train.batch_size=32"], 115e3, "llm.c PR #323, its PyTorch reference"),
    ("PyTorch", "124M, 8×A100 40GB, batch 12 × 5, vocabulary 50257 (nanoGPT, 2023)", "A100 40GB SXM", 8,
     ["model.preset=gpt2", "train.batch_size=12", "train.grad_accum=5", "model.vocab_pad_multiple=1"], 875e3,
     "nanoGPT issue #110: 560 ms a 491,520-token step"),
    ("PyTorch", "nanochat d20 (561M: RoPE, QK-norm, ReLU², untied, T=2048), 8×H100 SXM, batch 32", "H100 SXM", 8,
     ["model.preset=custom", "model.n_layer=20", "model.n_embd=1280", "model.n_head=10", "model.context=2048",
      "model.vocab_size=65536", "model.position=rope", "model.qk_norm=true", "model.mlp_act=relu2",
      "model.tie_weights=false", "train.batch_size=32"], 1.075e6, "nanochat discussion #1: tok/sec 1,075,523"),
    ("PyTorch", "nanochat d20, 8×A100 80GB SXM, batch 32", "A100 80GB SXM", 8,
     ["model.preset=custom", "model.n_layer=20", "model.n_embd=1280", "model.n_head=10", "model.context=2048",
      "model.vocab_size=65536", "model.position=rope", "model.qk_norm=true", "model.mlp_act=relu2",
      "model.tie_weights=false", "train.batch_size=32"], 530e3, "nanochat PR #147: tok/sec 529,882"),
    ("Tokamak", "124M, 1×H200, batch 64, fused classifier", "H200 SXM", 1,
     ["model.preset=gpt2", "train.batch_size=64"], 448e3, "docs/PERFORMANCE.md, the fifth H200 sitting"),
    ("Tokamak", "350M, 1×H200, batch 32 (before the linears' bias fix)", "H200 SXM", 1,
     ["model.preset=gpt2-medium", "train.batch_size=32"], 156e3, "docs/PERFORMANCE.md, the first H200 sittings"),
    ("Tokamak", "774M, 1×H200, batch 16 (before the linears' bias fix)", "H200 SXM", 1,
     ["model.preset=gpt2-large", "train.batch_size=16"], 71.7e3, "docs/PERFORMANCE.md, the first H200 sittings"),
    ("Tokamak", "124M, 1×H200, batch 8, fused classifier", "H200 SXM", 1,
     ["model.preset=gpt2", "train.batch_size=8"], 311e3, "docs/PERFORMANCE.md, the fifth H200 sitting (CUDA graphs' base)"),
]
CALIBRATION = {"llm.c": 0, "PyTorch": 6, "Tokamak": 12}  # the row each implementation's glue fraction is fitted on
GLUE = ["norm", "activation", "residual", "casts/copies"]
# `tokamak plan`'s GPU defaults (engine/base/plan/plan_rates.cpp): what --fit all scales.
DEFAULTS = {"matmul": 0.72, "attention": 0.21, "head": 0.41, "norm": 0.326, "activation": 0.326, "residual": 0.326,
            "casts/copies": 0.326, "optimizer": 0.48}
FIT = "all"  # "glue": the glue's fraction is the implementation's one number; "all": a factor on every fraction


def plan(tokamak, row, glue, folder):
    _, _, device, gpus, sets, _, _ = row
    rates = os.path.join(folder, "rates.json")
    with open(rates, "w") as f:
        if FIT == "glue":
            of_limit = {k: glue for k in GLUE}
        else:
            of_limit = {k: min(1.0, v * glue) for k, v in DEFAULTS.items()}
        json.dump({"of_limit": of_limit, "basis": "fitted %.3f" % glue}, f)
    cmd = [tokamak, "plan", "--device", device, "--gpus", str(gpus), "--json", "--rates", rates,
           "--set", "speed.precision=bf16", "--set", "model.context=1024"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=dict(os.environ, XDG_CONFIG_HOME=folder,
                                                                                     XDG_DATA_HOME=folder)).stdout
    return json.loads(out.splitlines()[0])


def fit_glue(tokamak, row, folder):
    lo, hi = (0.02, 1.0) if FIT == "glue" else (0.1, 5.0)  # tok/s grows with the fraction: bisect to the published figure
    for _ in range(30):
        mid = (lo + hi) / 2
        if plan(tokamak, row, mid, folder)["tok_s"] < row[5]:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def rate(v):
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.0f}K"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokamak", default="build/app/tokamak")
    p.add_argument("--fit", choices=["glue", "all"], default="all",
                   help="the implementation's one number: its glue's fraction of bandwidth, or a factor on every fraction")
    a = p.parse_args()
    global FIT
    FIT = a.fit
    with tempfile.TemporaryDirectory() as folder:
        glue = {impl: fit_glue(a.tokamak, ROWS[i], folder) for impl, i in CALIBRATION.items()}
        print("| implementation | setup | predicted | published | error | source |")
        print("|---|---|---:|---:|---:|---|")
        checked = within = 0
        for i, row in enumerate(ROWS):
            impl, what, _, _, _, published, source = row
            got = plan(a.tokamak, row, glue[impl], folder)
            error = got["tok_s"] / published - 1
            calibration = CALIBRATION[impl] == i
            if not calibration:
                checked += 1
                within += abs(error) <= 0.25
            note = " (calibration: fitted here)" if calibration else ""
            print(f"| {impl} | {what}{note} | {rate(got['tok_s'])} | {rate(published)} | {error:+.0%} | {source} |")
        print()
        for impl, g in glue.items():
            print(f"{impl}: the memory-bound glue at {g:.0%} of the memory bandwidth (fitted on its calibration row)"
                  if FIT == "glue" else f"{impl}: every fraction × {g:.2f} (fitted on its calibration row)")
        print(f"within 25%: {within} of {checked} predictions ({within / checked:.0%})")


if __name__ == "__main__":
    main()
