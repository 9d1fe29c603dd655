// The machine's measured memory bandwidth (see memory_bandwidth.h).
#include "engine/torch/metrics/memory_bandwidth.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/torch/device/device.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"

namespace tokamak {
namespace {

using nlohmann::json;

double largest_set(const c10::Device& device) {
  return device.is_cuda() ? kBandwidthMaxBytesCuda : kBandwidthMaxBytesCpu;
}

// One working set's copy rate, the best of `repeats`.
CopyRate measure_copy_rate(const c10::Device& device, double working_set, int repeats) {
  const int64_t n = static_cast<int64_t>(working_set / 2 / sizeof(float));  // half read, half written
  at::Tensor src = at::empty({n}, at::TensorOptions().dtype(at::kFloat).device(device)).fill_(1.0f);
  at::Tensor dst = at::empty_like(src);
  // Small copies are timed many at a time: one 64 KiB copy is shorter than the clock's resolution.
  // On a GPU at least 8, so that the host's launch and sync (~15 µs) stay a few per cent of the largest set's time.
  const int inner = std::max<int>(device.is_cuda() ? 8 : 1, static_cast<int>(64.0 * 1024 * 1024 / working_set));
  dst.copy_(src);  // warm-up: pages touched, threads started
  synchronize(device);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) dst.copy_(src);
    synchronize(device);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / inner);
  }
  const double bytes = static_cast<double>(2 * n * sizeof(float));
  return {bytes, best > 0 ? bytes / best : -1};
}

std::string copies_text(const c10::Device& device, const std::vector<CopyRate>& rates) {
  return tokamak::copies_text(device.is_cuda(), at::get_num_threads(), rates);
}

// The cache's key: a CPU's rate depends on LibTorch's threads.
std::string cache_key(const c10::Device& device) {
  return bandwidth_cache_key(device_name(device), device.is_cuda() ? 0 : at::get_num_threads());
}

std::string cache_path() { return bandwidth_cache_path(); }

json read_cache() {
  try {
    json cache = json::parse(read_file(cache_path()));
    if (cache.is_object()) return cache;
  } catch (const std::exception&) {
    // none yet, or unreadable: measure and write a new one
  }
  return json::object();
}

void write_cache(const json& cache) {
  try {
    write_file_atomically(cache_path(), cache.dump(1));
  } catch (const std::exception&) {
    // A read-only cache only costs the measurement again next time.
  }
}

// RATES (some of `sets`) merged into the cache entry at KEY: each set's best of the two. Returns whether the
// cache beat any of them, whose rates are raised to the cache's. Callers go through merge_into_cache.
bool keep_best(json& cache, const std::string& key, const std::vector<double>& sets, std::vector<CopyRate>& rates) {
  json entry = cache.contains(key) && cache[key].is_array() && cache[key].size() == sets.size()
                   ? cache[key]
                   : json(std::vector<json>(sets.size(), nullptr));
  bool better = false;
  for (CopyRate& r : rates) {
    const size_t i = static_cast<size_t>(std::find(sets.begin(), sets.end(), r.working_set) - sets.begin());
    if (i == sets.size()) continue;
    if (entry[i].is_number() && entry[i].get<double>() > r.bytes_per_s)
      r.bytes_per_s = entry[i].get<double>(), better = true;
    entry[i] = r.bytes_per_s;
  }
  cache[key] = entry;
  return better;
}

// keep_best on the cache as it is now, read and written under its lock: runs that start together (each with its
// own key: threads, devices) keep each other's entries.
bool merge_into_cache(const std::string& key, const std::vector<double>& sets, std::vector<CopyRate>& rates) {
  bool better = false;
  try {
    make_dirs(cache_dir());
  } catch (const std::exception&) {
    // no cache folder: unlocked, and the write fails quietly
  }
  with_file_lock(cache_path() + ".lock", [&] {
    json cache = read_cache();
    better = keep_best(cache, key, sets, rates);
    write_cache(cache);
  });
  return better;
}

}  // namespace

MemoryBandwidth measure_memory_bandwidth(const c10::Device& device, int repeats) {
  MemoryBandwidth out;
  for (double ws : bandwidth_working_sets(largest_set(device)))
    out.rates.push_back(measure_copy_rate(device, ws, repeats));
  out.source = "measured: " + copies_text(device, out.rates);
  return out;
}

MemoryBandwidth memory_bandwidth(const c10::Device& device) {
  MemoryBandwidth now = measure_memory_bandwidth(device);
  if (merge_into_cache(cache_key(device), bandwidth_working_sets(largest_set(device)), now.rates))
    now.source = "best " + now.source;
  return now;
}

MemoryBandwidth start_memory_bandwidth(const c10::Device& device) {
  // Measured when the cache has nothing for this machine, rather than left "not measured": the start line is
  // where a user learns what the run is held against, beside the matmul rate that a CPU run measures at every
  // start anyway; two working sets cost a tenth of a second or two, once per machine, thread count and LibTorch.
  const std::string key = cache_key(device);
  json cache = read_cache();
  const double largest = largest_set(device);
  if (cache.contains(key))
    if (std::optional<MemoryBandwidth> kept = bandwidth_from_cache_entry(cache[key], largest)) {
      kept->source = "kept from earlier measurements: " + copies_text(device, kept->rates);
      return *kept;
    }
  MemoryBandwidth now;
  try {
    for (double ws : {kBandwidthMinBytes, largest}) now.rates.push_back(measure_copy_rate(device, ws, 2));
  } catch (const std::exception&) {
    // No room for the copies' buffers beside the model (a card already full): the run goes on, its limit unknown.
    reset_peak_memory(device);
    MemoryBandwidth unknown;
    unknown.source = "not measured: no memory left for the copies";
    return unknown;
  }
  now.source = "measured now: " + copies_text(device, now.rates);
  merge_into_cache(key, bandwidth_working_sets(largest), now.rates);
  // The copies' buffers (256 MiB on a CPU, 1 GiB on a GPU) are no part of the run: without this the first run on
  // a machine would report them as its memory peak, and the batch finder would read them as the model's.
  reset_peak_memory(device);
  return now;
}

}  // namespace tokamak
