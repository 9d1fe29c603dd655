// Which GPUs a queued run gets when several run at once (`tokamak queue work --parallel N`): each run whose
// device is `cuda` gets GPUs of its own — its CUDA_VISIBLE_DEVICES — out of the queue's pool (this machine's
// GPUs, or the list `queue work --gpus` keeps), so two runs never share a GPU by accident. The worker records a
// run's GPUs in its run folder (`cuda_visible_devices`), which is also how a new worker knows which GPUs the runs
// it did not start hold. Pure functions: tests/test_queue_remote.cpp checks them without a GPU.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/config/config.h"

namespace tokamak {

// How many GPUs of its own a run with config C gets with the queue's `gpus_per_run` (0 = none: every run sees
// every GPU, as a run started by hand does): 0 unless its device is `cuda` (a run naming `cuda:N` chose its
// GPU itself); else as many as its data-parallel ranks (dist.gpus), at least gpus_per_run.
int64_t gpus_needed(const Config& c, int64_t gpus_per_run);

// The first NEED GPUs of POOL (in its order) that no entry of HELD holds; none when fewer are free.
std::optional<std::vector<std::string>> pick_gpus(const std::vector<std::string>& pool,
                                                  const std::vector<std::vector<std::string>>& held, int64_t need);

// "0,1,3" (CUDA_VISIBLE_DEVICES' form: indices or GPU-… uuids) ⇄ its entries. parse throws an Error naming the
// text when an entry is empty, repeated or holds something else than letters, digits and '-'.
std::vector<std::string> parse_gpu_list(const std::string& text);
std::string join_gpu_list(const std::vector<std::string>& gpus);

// A run folder's record of its GPUs (RunFolder::gpus_file()): "0,1", or "" when it has none.
std::string recorded_gpus(const std::string& gpus_file);

// The pool: LIST when given (the queue's `gpus` setting); else INHERITED, the CUDA_VISIBLE_DEVICES the worker
// was started with (nullptr = unset; "" = no GPU), since a Slurm job or the user who set it excluded the other
// GPUs; else 0 … G-1 for this machine's G GPUs.
std::vector<std::string> gpu_pool(const std::string& list, int gpus_here, const char* inherited);

}  // namespace tokamak
