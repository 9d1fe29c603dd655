#!/usr/bin/env python3
"""A data-parallel scaling model for Tokamak (docs/multi-gpu.md, "A scaling model"). Plain Python, no deps.

From one GPU's step (forward + backward time for a step's tokens, the optimizer's time), the gradient bytes of
a step and the fraction of the bucket collectives that backward hides, it predicts tok/s and scaling
efficiency of N data-parallel GPUs at a fixed global batch (tokens per step), with and without ZeRO-1:

  compute(N)   = (fwd + bwd) / N                   each rank takes 1/N of the step's tokens
  ring(bytes)  = 2 (N-1)/N * bytes / link          ring all-reduce; reduce-scatter and all-gather: half each
  DDP    step  = compute + opt       + (1 - hidden) * ring(grad_bytes)
  ZeRO-1 step  = compute + opt / N   + (1 - hidden) * ring(grad_bytes) / 2     reduce-scatter in backward
                                     + ring(param_bytes) / 2                   all-gather after the step, exposed

Every single-GPU number below is an INPUT taken from published figures, not measured by Tokamak (no GPU was
lent when this was written): replace them with `tokamak train --json` step profiles (phase_forward_ms,
phase_backward_ms, phase_optimizer_ms) and the measured `allreduce_hidden` of a 2-GPU run.

    python3 experiments/scaling/scaling_model.py            # the tables in docs/multi-gpu.md
    python3 experiments/scaling/scaling_model.py --hidden 0.3 --tok-s-124m 381000
"""
import argparse

BATCH_TOKENS = 524288  # tokens per optimizer step (GPT-2 / llm.c's 0.5M), the same for every N
GB = 1e9

# Models: parameters, layers, width, context; gradients and master weights in fp32 (autocast keeps them so).
MODELS = {
    "GPT-2 124M": dict(params=124.48e6, layers=12, width=768, context=1024),
    "GPT-2 1.5B": dict(params=1557.6e6, layers=48, width=1600, context=1024),
}

# Links (GB/s per direction, what one GPU can send while it receives as much).
LINKS = {
    "NVLink (H100 SXM, 450 GB/s)": 450 * GB,
    "PCIe (25 GB/s effective)": 25 * GB,
}

H100_PEAK = 989e12  # dense bf16 FLOP/s, datasheet
HBM_BYTES_S = 3.0e12  # achieved HBM3 bandwidth for the optimizer's streaming (datasheet 3.35 TB/s)


def flops_per_token(m):
    # 6N for the matmuls of forward + backward, plus attention's 12·L·C·T (PaLM's appendix B).
    return 6 * m["params"] + 12 * m["layers"] * m["width"] * m["context"]


def single_gpu_inputs(name, m, tok_s_124m):
    """One H100's step on the whole batch: (fwd_s, bwd_s, opt_s) -- inputs, see the module doc."""
    if name == "GPT-2 124M":
        tok_s = tok_s_124m  # llm.c's figure for one H100 (the brief's ~470K tok/s): an input to replace
    else:
        # No single-GPU figure at hand for 1.5B: the same model-FLOPs utilisation as 124M's input.
        mfu = tok_s_124m * flops_per_token(MODELS["GPT-2 124M"]) / H100_PEAK
        tok_s = mfu * H100_PEAK / flops_per_token(m)
    compute = BATCH_TOKENS / tok_s
    # Fused AdamW streams weights, gradients, exp_avg, exp_avg_sq (read) and three of them (write): 7 × 4 B.
    opt = 7 * 4 * m["params"] / HBM_BYTES_S
    return compute / 3, 2 * compute / 3, opt  # backward costs about twice forward


def step_time(n, fwd, bwd, opt, grad_bytes, link, hidden, zero):
    ring = 2 * (n - 1) / n * grad_bytes / link if n > 1 else 0.0
    compute = (fwd + bwd) / n
    if not zero:
        return compute + opt + (1 - hidden) * ring
    # ZeRO-1: each rank steps 1/N of the parameters; the all-gather of the weights (fp32, as many bytes as the
    # gradients) runs after the optimizer, so nothing hides it.
    return compute + opt / n + (1 - hidden) * ring / 2 + ring / 2


def rate(tok_s):
    return f"{tok_s / 1e6:.2f}M" if tok_s >= 1e6 else f"{tok_s / 1e3:.0f}K"


def ddp_tok_s(n, one_gpu_tok_s, params, link, hidden):
    """GPT-2 124M-like DDP on n GPUs from one GPU's tok/s (optimizer time from HBM streaming)."""
    compute = BATCH_TOKENS / one_gpu_tok_s
    step = step_time(n, compute / 3, 2 * compute / 3, 7 * 4 * params / HBM_BYTES_S, 4 * params, link, hidden, False)
    return BATCH_TOKENS / step


# The seeds' measured multi-GPU figures (docs/multi-gpu.md): (what, GPUs, measured tok/s, one GPU's tok/s input,
# link bytes/s). The one-GPU inputs: H100 = this model's 124M input; A100 = the write-ups' best single A100
# (127K tok/s with compile, flash attention and vocabulary padding; DESIGN.md); A100 SXM NVLink 3: 300 GB/s.
def checks(tok_s_124m, hidden):
    seeds = [("8×H100, GPT-2 124M DDP", 8, 3.05e6, tok_s_124m, 450 * GB),
             ("4×A100, GPT-2 124M DDP", 4, 419e3, 127e3, 300 * GB)]
    lines = ["\n| seed figure | measured | model | measured / model | one GPU's tok/s the measurement implies |",
             "|---|---:|---:|---:|---:|"]
    for what, n, measured, one, link in seeds:
        predicted = ddp_tok_s(n, one, MODELS["GPT-2 124M"]["params"], link, hidden)
        implied = measured / (predicted / one)  # the model's efficiency applied to the measurement
        lines.append(f"| {what} | {rate(measured)} | {rate(predicted)} | {measured / predicted:.0%} | "
                     f"{rate(implied)} (input: {rate(one)}) |")
    return "\n".join(lines)


def table(tok_s_124m, hidden, gpus=(1, 2, 4, 8)):
    lines = []
    for name, m in MODELS.items():
        fwd, bwd, opt = single_gpu_inputs(name, m, tok_s_124m)
        grad_bytes = 4 * m["params"]
        one = BATCH_TOKENS / step_time(1, fwd, bwd, opt, grad_bytes, 1, hidden, False)
        lines.append(f"\n{name}: one H100 {one / 1e3:.0f}K tok/s (forward {fwd * 1e3:.0f} ms, backward "
                     f"{bwd * 1e3:.0f} ms, optimizer {opt * 1e3:.1f} ms per {BATCH_TOKENS} tokens), "
                     f"gradients {grad_bytes / GB:.2f} GB per step, hidden {hidden:.2f}\n")
        lines.append("| link | GPUs | DDP tok/s | DDP efficiency | ZeRO-1 tok/s | ZeRO-1 efficiency |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        for link_name, link in LINKS.items():
            for n in gpus:
                if n == 1:
                    continue
                row = [link_name, str(n)]
                for zero in (False, True):
                    tok_s = BATCH_TOKENS / step_time(n, fwd, bwd, opt, grad_bytes, link, hidden, zero)
                    row += [rate(tok_s), f"{tok_s / (n * one):.1%}"]
                lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tok-s-124m", type=float, default=470e3, help="one H100's tok/s on GPT-2 124M (input)")
    p.add_argument("--hidden", type=float, default=0.5,
                   help="fraction of the gradient collectives backward hides (allreduce_hidden; CPU Gloo measured 0.51-0.56)")
    a = p.parse_args()
    print(table(a.tok_s_124m, a.hidden))
    print(checks(a.tok_s_124m, a.hidden))


if __name__ == "__main__":
    main()
