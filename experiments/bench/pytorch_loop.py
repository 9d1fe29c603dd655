"""A plain PyTorch training loop of the same GPT as Tokamak's: the CPU speed comparison in docs/PERFORMANCE.md, and
the strong peer on a GPU. Same shapes, same init scale, AdamW with decay on 2-D weights, SDPA attention,
native LayerNorm/GELU, padded vocabulary, grad clip, one host sync a step (the loss, as `tokamak bench` reads it
at log_every=1); data are random windows of random tokens (speed does not depend on them).
On CUDA it is what people run to be fast: the batches made on the GPU, bf16 autocast, AdamW(fused=True), SDPA's
own attention backend (cuDNN on Hopper; --attention forces one), and torch.compile in any of its modes, warmed up
past its compilation before the timed steps. Several modes, backends and batches run one after another; the best
compiled line is printed last as "strongest compile", the peer every published ratio is against.
Two loss heads (--head): "sliced", the logits cut to the 50,257 real tokens and cast to fp32 before the loss (what
this loop did first), and "nanogpt", nanoGPT's own: the loss over the padded logits as autocast leaves them. Each
line names the attention kernel SDPA ran, read from a one-step profile, and the spread of its step times.

    python experiments/bench/pytorch_loop.py --preset nano --precision bf16 --steps 30
    python3 experiments/bench/pytorch_loop.py --device cuda --preset gpt2 --batch 64,128 --precision bf16 \
        --modes eager,default,max-autotune-no-cudagraphs,max-autotune --fullgraph
"""
import argparse
import contextlib
import math
import os
import statistics
import sys
import subprocess
import time
import warnings

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
    def __init__(self, L, H, C, T, V=50304, head="sliced"):
        super().__init__()
        self.head = head
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
        logits = F.linear(self.ln_f(x), self.wte.weight)
        if self.head == "nanogpt":  # nanoGPT: the padded logits, in the dtype autocast gives cross_entropy
            return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-1)
        logits = logits[..., :50257]  # sliced: an extra copy of the logits, and another for the fp32 cast
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


BACKENDS = ["auto", "cudnn", "flash", "efficient", "math"]
MODES = ["eager", "default", "max-autotune-no-cudagraphs", "max-autotune"]
HEADS = ["sliced", "nanogpt"]
# SDPA's backends by the ATen op each one is (what a profile of one step records, eager or compiled).
SDPA_OPS = {"_scaled_dot_product_cudnn_attention": "cudnn", "_scaled_dot_product_flash_attention_for_cpu": "cpu flash",
            "_scaled_dot_product_flash_attention": "flash", "_scaled_dot_product_efficient_attention": "efficient",
            "_scaled_dot_product_attention_math": "math"}


def attention_backend(name):
    """SDPA's own choice for "auto" (cuDNN on Hopper with LibTorch 2.11, as Tokamak's speed.sdpa_backend=auto);
    otherwise that backend alone."""
    if name == "auto":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([{"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                         "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}[name]])


def csv(text, allowed, convert=str):
    values = [convert(v) for v in text.split(",") if v]
    bad = [v for v in values if allowed is not None and v not in allowed]
    if bad or not values:
        raise SystemExit(f"pytorch_loop: {text!r}: choose from {', '.join(map(str, allowed))} (comma-separated)")
    return values


def attention_ran(prof):
    """The SDPA backend a profile saw run (by its ATen op), or "unknown"."""
    seen = {e.key.split("::")[-1] for e in prof.key_averages()}
    for op, name in SDPA_OPS.items():  # longest names first: flash_attention_for_cpu before flash_attention
        if op in seen:
            return name
    return "unknown"


def spread_text(times_ms):
    """The middle 80% of the step times (10th to 90th percentile), as "x–y ms"."""
    q = statistics.quantiles(times_ms, n=10, method="inclusive") if len(times_ms) > 1 else times_ms * 9
    return f"{q[0]:.1f}–{q[-1]:.1f} ms"


def run_config(args, dev, mode, batch, attention, head):
    """One configuration: a fresh model and optimizer, warm-up (compilation included), timed steps, then one
    profiled step that names the attention kernel. Returns the step times (ms), the context, the peak memory, the
    attention backend and the profile table (if asked), or raises (out of memory, ...)."""
    cuda = args.device == "cuda"
    torch.manual_seed(1337)
    L, H, C, T = tuple(int(v) for v in args.shape.split(",")) if args.shape else PRESETS[args.preset]
    model = GPT(L, H, C, T, head=head).to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    # fused=True on CUDA only: the CPU comparisons in docs/PERFORMANCE.md were measured with the loop AdamW.
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8, fused=cuda)
    graphs = mode == "max-autotune"  # inductor's CUDA graph trees: each step must be marked as a new one
    if mode == "eager":
        step_fn = model
    elif args.compile_backend == "inductor":
        step_fn = torch.compile(model, mode=None if mode == "default" else mode, fullgraph=args.fullgraph)
    else:  # aot_eager and the like take no mode: the CPU rehearsal traces the same graphs
        step_fn = torch.compile(model, backend=args.compile_backend, fullgraph=args.fullgraph)
    tokens = torch.randint(50257, (1_000_000,), device=dev)
    offsets = torch.arange(T + 1, device=dev)

    def make_batch():  # made where the model runs: on a GPU no host copy at all
        ix = torch.randint(len(tokens) - T - 1, (batch, 1), device=dev)
        w = tokens[ix + offsets]
        return w[:, :-1], w[:, 1:]

    def train_step():
        if graphs and cuda:
            torch.compiler.cudagraph_mark_step_begin()
        x, y = make_batch()
        with torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.precision == "bf16"), \
                attention_backend(attention):
            loss = step_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()  # the one sync a step

    times = []
    for step in range(args.warmup + args.steps):
        if cuda and step == args.warmup:
            # After the warm-up: max-autotune's benchmarking buffers are no part of a training step's peak.
            torch.cuda.reset_peak_memory_stats(dev)
        t0 = time.perf_counter()
        train_step()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    times_ms = [1000 * t for t in times]
    peak = torch.cuda.max_memory_allocated(dev) / 1e9 if cuda else 0.0
    # After the timed steps, so the profiler never touches them: one step (three with --profile) names the kernel.
    from torch.profiler import ProfilerActivity, profile
    warnings.filterwarnings("ignore", message=".*Profiler clears events")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda and args.profile else [])
    with profile(activities=activities) as prof:
        for _ in range(3 if args.profile else 1):
            train_step()
    table = ""
    if args.profile:
        key = "self_device_time_total" if cuda else "self_cpu_time_total"
        table = f"profile of 3 steps, by {key}:\n" + prof.key_averages().table(
            sort_by=key, row_limit=15, max_name_column_width=60)
    return times_ms, T, peak, attention_ran(prof), table


def run_isolated(mode, attention, batch, head):
    """This script for one configuration in a child process; its output passes through, its result comes back."""
    argv, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in ("--modes", "--compile", "--batch", "--attention", "--head"):
            skip = "=" not in a and name != "--compile"
            continue
        argv.append(a)
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), *argv, "--modes", mode, "--attention", attention,
                              "--batch", str(batch), "--head", head, "--result-line"], stdout=subprocess.PIPE, text=True)
    results = []
    for line in child.stdout:
        if line.startswith("RESULT "):
            tok_s, m, a, b, ms, h = line.split()[1:]
            results.append((float(tok_s), m, a, int(b), float(ms), h))
        else:
            print(line, end="", flush=True)
    child.wait()
    return results


def strongest_line(results, where, label):
    tok_s, mode, attention, batch, ms, head = max(r for r in results if r[1] != "eager")
    return (f"{label}: mode={mode} attention={attention} head={head} B={batch}: {tok_s:,.0f} tok/s ({ms:.1f} ms/step) "
            f"on {where}, torch {torch.__version__}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="nano", choices=PRESETS)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--compile", action="store_true", help="torch.compile the model: --modes default")
    ap.add_argument("--modes", default=None,
                    help="comma-separated, each run in turn: " + ", ".join(MODES) + " (default: eager, or default "
                         "with --compile); max-autotune also replays inductor's CUDA graphs")
    ap.add_argument("--fullgraph", action="store_true", help="torch.compile(fullgraph=True): one graph or an error")
    ap.add_argument("--attention", default="auto",
                    help="SDPA backend(s), comma-separated: " + ", ".join(BACKENDS) + " (auto: SDPA's own choice)")
    ap.add_argument("--compile-backend", default="inductor",
                    help="torch.compile's backend; aot_eager traces the same graphs without generating code (the CPU "
                         "rehearsal of scripts/gpu-check.sh: inductor's C++ build takes minutes on a small CPU)")
    ap.add_argument("--head", default="sliced",
                    help="loss head(s), comma-separated: sliced (logits cut to 50,257 and cast to fp32 first), "
                         "nanogpt (nanoGPT's: the loss over the padded logits)")
    ap.add_argument("--profile", action="store_true", help="after the timed steps, PyTorch's profiler over 3 more")
    ap.add_argument("--batch", default="16", help="batch size(s), comma-separated, e.g. 64,128")
    ap.add_argument("--shape", help="LAYERS,HEADS,WIDTH,CONTEXT instead of the preset's (e.g. 4,4,256,256)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--median-ms", action="store_true", help="print only the median ms/step (for scripts)")
    ap.add_argument("--times-line", action="store_true",
                    help="after each configuration's line, one 'TIMES ms ms ...' line of its timed steps (for scripts)")
    ap.add_argument("--result-line", action="store_true", help=argparse.SUPPRESS)  # a child's result, for its parent
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("pytorch_loop: --device cuda but torch sees no GPU (hint: run it on the GPU machine)")
    modes = csv(args.modes, MODES) if args.modes else ["default" if args.compile else "eager"]
    attentions = csv(args.attention, BACKENDS)
    heads = csv(args.head, HEADS)
    batches = csv(args.batch, None, int)
    if any(b < 1 for b in batches):
        raise SystemExit(f"pytorch_loop: --batch {args.batch}: every batch size must be at least 1")
    dev = torch.device(args.device)
    cuda = args.device == "cuda"
    torch.set_num_threads(args.threads)
    where = torch.cuda.get_device_name(dev) if cuda else f"{torch.get_num_threads()} threads"
    # One line a configuration, each naming everything it ran with; the best compiled one is "strongest compile".
    results = []
    configs = [(m, a, b, h) for m in modes for a in attentions for b in batches for h in heads]
    if len(configs) > 1 and not args.median_ms:
        # Each configuration in a process of its own: a kernel that faults (inductor's GEMM autotuning hit an illegal
        # address on an H200) leaves the CUDA context unusable, and every later configuration would fail with it. The
        # same on a CPU, so that the rehearsal runs this path.
        for i, (mode, attention, batch, head) in enumerate(configs):
            results += run_isolated(mode, attention, batch, head)
            if mode != "eager" and any(r[1] != "eager" for r in results) and i + 1 < len(configs):
                print(strongest_line(results, where, "strongest compile so far"), flush=True)
        configs = []
    for mode, attention, batch, head in configs:
        try:
            times_ms, T, peak, ran, table = run_config(args, dev, mode, batch, attention, head)
        except Exception as e:  # out of memory at B=128, a mode this torch lacks: the next one still runs
            print(f"pytorch {args.shape or args.preset} mode={mode} attention={attention} head={head} B={batch}: failed: "
                  f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
            if cuda:
                torch.cuda.empty_cache()
            continue
        finally:
            if mode != "eager":
                torch._dynamo.reset()  # the next configuration compiles afresh
        ms = statistics.median(times_ms)
        if args.median_ms:
            print(f"{ms:.1f}")
            continue
        tok_s = batch * T / (ms / 1000)
        results.append((tok_s, mode, attention, batch, ms, head))
        if args.result_line:
            print(f"RESULT {tok_s} {mode} {attention} {batch} {ms} {head}", flush=True)
        backend = "" if mode == "eager" or args.compile_backend == "inductor" else f" ({args.compile_backend})"
        extras = ", fused AdamW" if cuda else ""
        print(f"pytorch {args.shape or args.preset} {args.precision} mode={mode}{backend}"
              f"{' fullgraph' if args.fullgraph and mode != 'eager' else ''} attention={attention} (ran {ran}) "
              f"head={head} B={batch} T={T} on {where}: {ms:.1f} ms/step (median of {len(times_ms)}, "
              f"{spread_text(times_ms)}), {tok_s:,.0f} tok/s"
              f"{f', peak {peak:.1f} GB' if cuda else ''} (torch {torch.__version__}{extras})", flush=True)
        if args.times_line:
            print("TIMES " + " ".join(f"{t:.3f}" for t in times_ms), flush=True)
        if table:
            print(table, flush=True)
        # After each configuration, so a run cut short (a lease's end) still names the best it reached.
        if mode != "eager" and len(results) < len(configs):
            print(strongest_line(results, where, "strongest compile so far"), flush=True)
    if any(r[1] != "eager" for r in results) and not args.median_ms and not args.result_line:
        print(strongest_line(results, where, "strongest compile"), flush=True)
    if not results and not args.median_ms and not args.result_line:
        raise SystemExit("pytorch_loop: every configuration failed (see the lines above)")


if __name__ == "__main__":
    main()
