// The machine's measured memory bandwidth (see memory_bandwidth.h).
#include "engine/metrics/memory_bandwidth.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "engine/device/device.h"
#include "engine/core/util/files.h"
#include "engine/core/util/format.h"

namespace tokamak {

MemoryBandwidth measure_memory_bandwidth(const c10::Device& device, int repeats) {
  MemoryBandwidth out;
  const double largest = device.is_cuda() ? kBandwidthMaxBytesCuda : kBandwidthMaxBytesCpu;
  for (double ws = kBandwidthMinBytes; ws <= largest; ws *= 4) {
    const int64_t n = static_cast<int64_t>(ws / 2 / sizeof(float));  // half read, half written
    at::Tensor src = at::empty({n}, at::TensorOptions().dtype(at::kFloat).device(device)).fill_(1.0f);
    at::Tensor dst = at::empty_like(src);
    // Small copies are timed many at a time: one 64 KiB copy is shorter than the clock's resolution.
    const int inner = std::max<int>(1, static_cast<int>(64.0 * 1024 * 1024 / ws));
    dst.copy_(src);  // warm-up: pages touched, threads started
    synchronize(device);
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < inner; ++i) dst.copy_(src);
      synchronize(device);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / inner);
    }
    out.rates.push_back({static_cast<double>(2 * n * sizeof(float)), best > 0 ? 2.0 * n * sizeof(float) / best : -1});
  }
  const int threads = at::get_num_threads();
  out.source = "measured: copies of " + format_bytes(out.rates.front().working_set) + " to " +
               format_bytes(out.rates.back().working_set) +
               (device.is_cuda() ? std::string(" on the GPU")
                                 : ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads"));
  return out;
}

MemoryBandwidth memory_bandwidth(const c10::Device& device) {
  using nlohmann::json;
  const std::string key =
      device_name(device) + "|" + std::to_string(device.is_cuda() ? 0 : at::get_num_threads()) + "|" + TORCH_VERSION;
  const std::string path = cache_dir() + "/memory_bandwidth.json";
  json cache = json::object();
  try {
    cache = json::parse(read_file(path));
  } catch (const std::exception&) {
    cache = json::object();  // none yet, or unreadable: measure and write a new one
  }
  MemoryBandwidth now = measure_memory_bandwidth(device);
  bool better = false;
  if (cache.contains(key) && cache[key].is_array() && cache[key].size() == now.rates.size()) {
    for (size_t i = 0; i < now.rates.size(); ++i) {
      const json& kept = cache[key][i];
      if (kept.is_number() && kept.get<double>() > now.rates[i].bytes_per_s)
        now.rates[i].bytes_per_s = kept.get<double>(), better = true;
    }
  }
  if (better) now.source = "best " + now.source;
  json rates = json::array();
  for (const CopyRate& r : now.rates) rates.push_back(r.bytes_per_s);
  cache[key] = rates;
  try {
    write_file_atomically(path, cache.dump(1));
  } catch (const std::exception&) {
    // A read-only cache only costs the measurement again next time.
  }
  return now;
}

}  // namespace tokamak
