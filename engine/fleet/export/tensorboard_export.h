// Runs as TensorBoard reads them: `tokamak runs export --format tensorboard --out DIR` writes each run's history to
// DIR/<name>-<first 8 of uid>/events.out.tfevents.<created>.tokamak, a folder TensorBoard lists as one run:
//   - every stored metric point as a scalar at its step, timed at the run's start plus its wall_s (TensorBoard keeps
//     scalars as float32: a point reads back as the float nearest the stored double); per-layer statistics under
//     layers/STAT/GROUP, so TensorBoard groups them by statistic;
//   - the config (JSON) as text at step 0, and every sample (prompt and text) as text at its step.
// The records are TFRecord-framed (length, masked CRC32C of it, data, masked CRC32C of that; the CRC is Boost.CRC's)
// Event messages encoded by protobuf (tensorboard_event.proto). Each file is written to a temporary and renamed; the
// folders go through the output rule (output_path.h): DIR holds nothing but run folders of this export, and an
// earlier export's files are replaced only with --force.
// A library of its own (tokamak_export) with mlflow_export.h: only the `tokamak` front and the studio link protobuf,
// never a process that also loads LibTorch's copy of it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

class RunStore;

struct TensorboardExport {
  std::vector<std::string> files;  // one event file per run, in the order of the ids
  int64_t scalars = 0, texts = 0;  // values written
};

// IDS empty: every run, oldest first. REPLACE: an earlier export's run folders and files may be replaced.
TensorboardExport export_tensorboard(RunStore& store, const std::vector<int64_t>& ids, const std::string& dir,
                                     bool replace);

// The scalar's tag for a stored metric key: the key itself, a per-layer statistic as layers/STAT/GROUP.
std::string tensorboard_tag(const std::string& metric_key);
// One TFRecord: DATA framed as TensorBoard's readers check it.
std::string tfrecord(const std::string& data);
uint32_t masked_crc32c(const std::string& bytes);

}  // namespace tokamak
