"""Tokamak beside the peers a performance user would pick, interleaved in one sitting: Tokamak's best rung, llm.c's
train_gpt2cu (GELU fusion off and on), the PyTorch loop compiled in its default mode with both loss heads, then
Tokamak again, so that a drift of the GPU's clock shows as a difference between the two Tokamak rows instead of
hiding in a ratio. Each row is the median of its timed steps with the middle 80% beside it, and, on a GPU, the SM
clock, power and temperature NVML reported while those steps ran (nvidia-smi, sampled every 200 ms). No profiler
runs during a timed step. The last lines are the ratios the published comparison quotes.

    python3 versus.py --tokamak kit/bin/tokamak --ladder kit/ladders/cuda-graphs.json --rung 5 \\
        --llmc kit/bin/train_gpt2cu --peer kit/pytorch_loop.py --device cuda --out versus.json

On a CPU (the rehearsal of scripts/gpu-check.sh) the same contenders run at tiny sizes from --tokamak-arg and
--peer-arg; llm.c is CUDA's alone and says so. The same number of timed steps is taken of each contender.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from array import array


def percentile(values, q):
    """Linear between the nearest ranks, as `tokamak bench` reports its step times."""
    v = sorted(values)
    at = q * (len(v) - 1)
    lo = int(at)
    return v[lo] + (at - lo) * (v[lo + 1] - v[lo]) if lo + 1 < len(v) else v[lo]


class Sampler:
    """nvidia-smi's SM clock, power and temperature every 200 ms, each sample stamped with this clock."""

    def __init__(self, on):
        self.samples, self.proc = [], None
        if on and shutil.which("nvidia-smi"):
            self.proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits",
                 "-lms", "200"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                sm, power, temp = (float(x) for x in line.split(",")[:3])
            except ValueError:  # "[N/A]" on a GPU that does not report one
                continue
            self.samples.append((time.monotonic(), sm, power, temp))

    def between(self, t0, t1):
        """Median SM MHz, W and °C of the samples taken from T0 to T1, or None where there were none."""
        inside = [s for s in self.samples if t0 <= s[0] <= t1]
        if not inside:
            return None
        return tuple(statistics.median(s[k] for s in inside) for k in (1, 2, 3))

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()


def run_contender(name, argv, parse, sampler, limit, env=None):
    """Runs ARGV, passing its output through. PARSE(line) returns a list of step times (ms) from a line, or a
    summary (median, 10th and 90th percentile, count) where the program gives only that, or None. The timed window
    for NVML is the time the last times arrived less their sum."""
    print(f"== {name}: {' '.join(shlex.quote(a) for a in argv)}", flush=True)
    t_start, times, t_last, summary = time.monotonic(), [], None, None
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    except OSError as e:
        return {"name": name, "status": f"failed: {e}"}
    timer = threading.Timer(limit, proc.kill)
    timer.start()
    tail = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        tail = (tail + [line.strip()])[-3:]
        got = parse(line)
        if isinstance(got, tuple):
            summary, t_last = got, time.monotonic()
        elif got:
            times += got
            t_last = time.monotonic()
    rc = proc.wait()
    timer.cancel()
    row = {"name": name, "wall_s": round(time.monotonic() - t_start, 1)}
    if rc != 0 or not (times or summary):
        why = "timed out" if time.monotonic() - t_start >= limit else f"exit {rc}" if rc else "no step times"
        row["status"] = f"failed ({why}): {' / '.join(tail)[:200]}"
        return row
    if summary:
        row.update(status="ok", median_ms=summary[0], p10_ms=summary[1], p90_ms=summary[2], steps=summary[3])
    else:
        row.update(status="ok", steps=len(times), median_ms=statistics.median(times), p10_ms=percentile(times, 0.1),
                   p90_ms=percentile(times, 0.9), times_ms=[round(t, 3) for t in times])
    nvml = sampler.between(t_last - row["median_ms"] * row["steps"] / 1000.0, t_last)
    if nvml:
        row.update(sm_mhz=nvml[0], power_w=nvml[1], temp_c=nvml[2])
    return row


BENCH_TIMES = re.compile(r"step times: median ([0-9.]+) ms, 10-90% ([0-9.]+)-([0-9.]+) ms, (\d+) timed steps")


def tokamak_argv(args, rung):
    return [args.tokamak, "bench", "--ladder", args.ladder, "--rungs", str(rung), "--steps", str(args.steps),
            "--warmup", str(args.warmup), "--no-store"] + args.tokamak_arg


def tokamak_parse(line):
    # `tokamak bench` says the median and spread of each rung's timed steps.
    m = BENCH_TIMES.search(line)
    return (float(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4))) if m else None


def write_llmc_data(folder, tokens=4_000_000):
    """llm.c's token file (a 256-int32 header: magic 20240520, version 1, the count; then uint16 tokens) of random
    GPT-2 ids: its speed does not depend on them, and no dataset need be carried to the GPU machine."""
    path = os.path.join(folder, "random_tokens.bin")
    if not os.path.exists(path):
        header = array("i", [20240520, 1, tokens] + [0] * 253)
        body = array("H", os.urandom(2 * tokens))
        for i in range(len(body)):
            body[i] %= 50257
        with open(path + ".tmp", "wb") as f:
            header.tofile(f)
            body.tofile(f)
        os.replace(path + ".tmp", path)
    return path


LLMC_STEP = re.compile(r"^step\s+(\d+)/\d+ \|.*\| ([0-9.]+) ms \|")


def llmc_parser(warmup):
    def parse(line):
        m = LLMC_STEP.match(line)
        if m and int(m.group(1)) > warmup:  # llm.c numbers its steps from 1; the first ones hold cuDNN's set-up
            return [float(m.group(2))]
        return None
    return parse


def llmc_argv(args, data, gelu_fusion):
    # From scratch (d12, GPT-2 124M), B and T as the others, no validation or sampling inside the timed steps, no
    # checkpoints; recompute and the rest as llm.c's defaults.
    argv = [args.llmc, "-i", data, "-j", data, "-e", "d12", "-b", str(args.batch), "-t", "1024",
            "-x", str(args.warmup + args.steps), "-v", "100000", "-m", "1", "-s", "100000", "-g", "16",
            "-n", "0", "-ge", str(gelu_fusion)]
    return (["stdbuf", "-oL"] if shutil.which("stdbuf") else []) + argv  # its printf is buffered in a pipe


def peer_argv(args, head):
    return [sys.executable, args.peer, "--device", args.device, "--modes", "default", "--head", head,
            "--steps", str(args.steps), "--warmup", str(args.warmup), "--precision", "bf16", "--times-line"] + \
        (["--preset", "gpt2", "--batch", str(args.batch)] if args.device == "cuda" else []) + args.peer_arg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokamak", required=True, help="the tokamak program")
    ap.add_argument("--ladder", required=True, help="the ladder holding Tokamak's best rung")
    ap.add_argument("--rung", type=int, required=True, help="that rung's number (1-based)")
    ap.add_argument("--tokamak-arg", action="append", default=[], help="an argument more for `tokamak bench`")
    ap.add_argument("--llmc", help="llm.c's train_gpt2cu (scripts/llmc-build.sh); without it llm.c is not run")
    ap.add_argument("--peer", required=True, help="experiments/bench/pytorch_loop.py")
    ap.add_argument("--peer-arg", action="append", default=[], help="an argument more for the PyTorch loop")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20, help="timed steps of each contender (at least 20 on a GPU)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--limit", type=float, default=240, help="seconds each contender may take")
    ap.add_argument("--scratch", default=os.environ.get("TMPDIR", "/tmp"), help="where llm.c's token file goes")
    ap.add_argument("--out", help="the rows as JSON (written whole, then renamed)")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 1:
        raise SystemExit("versus: --steps and --warmup must be at least 1")

    sampler = Sampler(args.device == "cuda")
    rows = []
    llmc_ok = args.device == "cuda" and args.llmc and os.access(args.llmc, os.X_OK)
    contenders = [("tokamak", lambda: run_contender("tokamak", tokamak_argv(args, args.rung), tokamak_parse, sampler,
                                                    args.limit))]
    for ge in (0, 2):
        name = f"llm.c -ge {ge}"
        if llmc_ok:
            contenders.append((name, lambda ge=ge, name=name: run_contender(
                name, llmc_argv(args, write_llmc_data(args.scratch), ge), llmc_parser(args.warmup), sampler,
                args.limit)))
        else:
            why = "CUDA only" if args.device != "cuda" else "not in this kit (hint: scripts/llmc-build.sh, then gpu-kit.sh)"
            contenders.append((name, lambda name=name, why=why: {"name": name, "status": f"skipped: {why}"}))
    for head in ("sliced", "nanogpt"):
        name = f"pytorch default, {head} head"
        contenders.append((name, lambda head=head, name=name: run_contender(
            name, peer_argv(args, head), lambda l: [float(x) for x in l.split()[1:]] if l.startswith("TIMES ") else None,
            sampler, args.limit)))
    contenders.append(("tokamak, again", lambda: run_contender("tokamak, again", tokamak_argv(args, args.rung),
                                                               tokamak_parse, sampler, args.limit)))
    tokens = args.batch * 1024 if args.device == "cuda" else None  # the CPU's tiny sizes vary by contender
    for _, run in contenders:
        rows.append(run())
        if args.out:  # after each row: a sitting cut short still brings back what ran
            with open(args.out + ".tmp", "w") as f:
                json.dump(rows, f, indent=1)
            os.replace(args.out + ".tmp", args.out)
    sampler.stop()

    print(f"\n{'contender':<30} {'median ms':>9} {'10-90% ms':>15} {'steps':>5} {'tok/s':>9} {'SM MHz':>6} "
          f"{'W':>5} {'°C':>4}")
    for r in rows:
        if r["status"] != "ok":
            print(f"{r['name']:<30} {r['status']}")
            continue
        rate = f"{tokens / (r['median_ms'] / 1000):,.0f}" if tokens else "-"
        nv = [f"{r[k]:.0f}" if k in r else "-" for k in ("sm_mhz", "power_w", "temp_c")]
        print(f"{r['name']:<30} {r['median_ms']:9.2f} {r['p10_ms']:7.2f}-{r['p90_ms']:<7.2f} {r['steps']:5d} "
              f"{rate:>9} {nv[0]:>6} {nv[1]:>5} {nv[2]:>4}")
    ok = {r["name"]: r["median_ms"] for r in rows if r["status"] == "ok"}
    ours = [ok[n] for n in ("tokamak", "tokamak, again") if n in ok]
    if len(ours) == 2:
        print(f"drift: the second Tokamak row is {100 * (ours[1] / ours[0] - 1):+.1f}% in step time")
    if ours:
        mine = statistics.mean(ours)
        for label, prefix in (("llm.c", "llm.c"), ("the strongest PyTorch variant", "pytorch")):
            theirs = {n: ms for n, ms in ok.items() if n.startswith(prefix)}
            if theirs:
                best = min(theirs, key=theirs.get)
                print(f"versus: Tokamak {theirs[best] / mine:.2f}× {label} ({best})")
    failed = [r["name"] for r in rows if r["status"].startswith("failed")]
    if failed:
        raise SystemExit(f"versus: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
