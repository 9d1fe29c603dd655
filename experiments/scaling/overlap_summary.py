#!/usr/bin/env python3
"""Summarises the gradient-collective overlap of a data-parallel run from `tokamak train --json` on stdin:
min / median / max over its report steps of how much backward hid (allreduce_hidden), when the first bucket's
collective started and the last ended (ms relative to the end of backward; negative = before it ended), and
the backward phase. Plain Python, no deps. The measurements in docs/multi-gpu.md were made with it:

    tokamak train --gpus 2 --json --no-store --set ... | python3 experiments/scaling/overlap_summary.py
"""
import json
import statistics
import sys

KEYS = ["allreduce_hidden", "allreduce_first_start_ms", "allreduce_last_end_ms", "phase_backward_ms",
        "phase_allreduce_ms", "phase_optimizer_ms", "step_ms"]


def main():
    steps = []
    for line in sys.stdin:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "step" and event.get("step", 0) > 1:  # step 1 warms up the allocator
            steps.append(event)
    if not steps:
        sys.exit("overlap_summary: no step events after step 1 on stdin (run with --json and train.log_every=1)")
    print(f"{len(steps)} report steps")
    for key in KEYS:
        values = sorted(e[key] for e in steps if key in e)
        if values:
            print(f"{key:26} min {values[0]:10.3f}  median {statistics.median(values):10.3f}  max {values[-1]:10.3f}")


if __name__ == "__main__":
    main()
