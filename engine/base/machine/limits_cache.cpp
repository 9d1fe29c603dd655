// See limits_cache.h.
#include "engine/base/machine/limits_cache.h"

#include <nlohmann/json.hpp>

#include "engine/base/machine/cpu_info.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"

#ifndef TOKAMAK_TORCH_VERSION
#define TOKAMAK_TORCH_VERSION "unknown"  // a build without LibTorch (the fuzz build): nothing was measured by it
#endif

namespace tokamak {
namespace {

nlohmann::json read_json_object(const std::string& path) {
  try {
    nlohmann::json cache = nlohmann::json::parse(read_file(path));
    if (cache.is_object()) return cache;
  } catch (const std::exception&) {
    // none yet, or unreadable: nothing cached
  }
  return nlohmann::json::object();
}

std::string threads_text(int threads) { return std::to_string(threads) + (threads == 1 ? " thread" : " threads"); }

}  // namespace

const char* torch_version_built() { return TOKAMAK_TORCH_VERSION; }

std::string cpu_peak_cache_path() { return cache_dir() + "/cpu_peak.json"; }

std::string cpu_peak_key(const std::string& precision, int threads) {
  const std::string p = precision.rfind("bf16", 0) == 0 ? "bf16" : "fp32";  // bf16-pure too
  return cpu_model() + "|" + p + "|" + std::to_string(threads) + "|" + torch_version_built();
}

std::optional<CpuPeak> cached_cpu_peak(const std::string& precision, int threads) {
  const nlohmann::json cache = read_json_object(cpu_peak_cache_path());
  const std::string key = cpu_peak_key(precision, threads);
  if (!cache.contains(key) || !cache[key].is_number()) return std::nullopt;
  const std::string p = precision.rfind("bf16", 0) == 0 ? "bf16" : "fp32";
  return CpuPeak{cache[key].get<double>(),
                 "best measured on this machine: " + p + " GEMM, " + threads_text(threads)};
}

std::optional<bool> cpu_bf16_pays(int threads) {
  const std::optional<CpuPeak> fp32 = cached_cpu_peak("fp32", threads), bf16 = cached_cpu_peak("bf16", threads);
  if (!fp32 || !bf16 || fp32->flops <= 0 || bf16->flops <= 0) return std::nullopt;
  return bf16->flops > fp32->flops;
}

std::string bandwidth_cache_path() { return cache_dir() + "/memory_bandwidth.json"; }

std::string bandwidth_cache_key(const std::string& device_name, int threads) {
  return device_name + "|" + std::to_string(threads) + "|" + torch_version_built();
}

std::vector<double> bandwidth_working_sets(double largest) {
  std::vector<double> sets;
  for (double ws = kBandwidthMinBytes; ws <= largest; ws *= 4) sets.push_back(ws);
  return sets;
}

std::optional<MemoryBandwidth> bandwidth_from_cache_entry(const nlohmann::json& entry, double largest) {
  const std::vector<double> sets = bandwidth_working_sets(largest);
  if (!entry.is_array() || entry.size() != sets.size() || !entry.back().is_number()) return std::nullopt;
  MemoryBandwidth kept;
  for (size_t i = 0; i < sets.size(); ++i)
    if (entry[i].is_number() && entry[i].get<double>() > 0) kept.rates.push_back({sets[i], entry[i].get<double>()});
  if (kept.rates.empty() || kept.rates.back().working_set != sets.back()) return std::nullopt;
  return kept;
}

std::string copies_text(bool gpu, int threads, const std::vector<CopyRate>& rates) {
  return "copies of " + format_bytes(rates.front().working_set) + (rates.size() == 2 ? " and " : " to ") +
         format_bytes(rates.back().working_set) + (gpu ? std::string(" on the GPU") : ", " + threads_text(threads));
}

std::optional<MemoryBandwidth> cached_memory_bandwidth(const std::string& device_name, int threads) {
  const nlohmann::json cache = read_json_object(bandwidth_cache_path());
  const std::string key = bandwidth_cache_key(device_name, threads);
  if (!cache.contains(key)) return std::nullopt;
  std::optional<MemoryBandwidth> kept =
      bandwidth_from_cache_entry(cache[key], threads == 0 ? kBandwidthMaxBytesCuda : kBandwidthMaxBytesCpu);
  if (kept) kept->source = "kept from earlier measurements: " + copies_text(threads == 0, threads, kept->rates);
  return kept;
}

}  // namespace tokamak
