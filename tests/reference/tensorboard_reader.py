"""Reads a Tokamak TensorBoard export with TensorBoard's own EventAccumulator and prints, as JSON, every scalar
(tag -> [[step, wall_time, value], ...]) and every text (tag -> [[step, text], ...]) of the run folder given.
Exit 3 when tensorboard is not installed (the suite then says to run the set-up)."""
import json
import sys

try:
    from tensorboard.backend.event_processing import event_accumulator as ea
    from tensorboard.util import tensor_util
except ImportError:
    sys.exit(3)

acc = ea.EventAccumulator(sys.argv[1], size_guidance={ea.SCALARS: 0, ea.TENSORS: 0})
acc.Reload()
tags = acc.Tags()
out = {"scalars": {}, "texts": {}}
for tag in tags["scalars"]:
    out["scalars"][tag] = [[e.step, e.wall_time, float(e.value)] for e in acc.Scalars(tag)]
for tag in tags["tensors"]:
    out["texts"][tag] = [[e.step, tensor_util.make_ndarray(e.tensor_proto).item().decode("utf-8")]
                         for e in acc.Tensors(tag)]
json.dump(out, sys.stdout)
