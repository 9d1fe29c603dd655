// GPU slots of the queue's runs (see gpu_slots.h).
#include "engine/fleet/queue/gpu_slots.h"

#include <algorithm>
#include <cctype>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {

int64_t gpus_needed(const Config& c, int64_t gpus_per_run) {
  if (gpus_per_run <= 0 || c.device != "cuda") return 0;
  return std::max(gpus_per_run, c.dist.gpus);
}

std::optional<std::vector<std::string>> pick_gpus(const std::vector<std::string>& pool,
                                                  const std::vector<std::vector<std::string>>& held, int64_t need) {
  std::vector<std::string> picked;
  if (need <= 0) return picked;
  for (const std::string& g : pool) {
    const bool taken = std::any_of(held.begin(), held.end(), [&](const std::vector<std::string>& h) {
      return std::find(h.begin(), h.end(), g) != h.end();
    });
    if (taken) continue;
    picked.push_back(g);
    if (static_cast<int64_t>(picked.size()) == need) return picked;
  }
  return std::nullopt;
}

std::vector<std::string> parse_gpu_list(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string g = text.substr(at, comma - at);
    const bool word = !g.empty() && std::all_of(g.begin(), g.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-';
    });
    if (!word)
      throw Error("GPU list '" + text + "': '" + g + "' is not a GPU",
                  "write GPU indices or uuids separated by commas, e.g. 0,1,3 (as CUDA_VISIBLE_DEVICES takes them)");
    if (std::find(out.begin(), out.end(), g) != out.end())
      throw Error("GPU list '" + text + "' names GPU " + g + " twice", "name each GPU once");
    out.push_back(g);
    at = comma + 1;
  }
  return out;
}

std::string join_gpu_list(const std::vector<std::string>& gpus) {
  std::string s;
  for (const std::string& g : gpus) s += (s.empty() ? "" : ",") + g;
  return s;
}

std::string recorded_gpus(const std::string& gpus_file) {
  if (!path_exists(gpus_file)) return "";
  std::string text = read_file(gpus_file);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::vector<std::string> gpu_pool(const std::string& list, int gpus_here, const char* inherited) {
  if (!list.empty()) return parse_gpu_list(list);
  if (inherited) {
    if (!*inherited) return {};
    try {
      return parse_gpu_list(inherited);
    } catch (const Error& e) {
      throw Error("CUDA_VISIBLE_DEVICES: " + e.message(), "set it to a list such as 0,1, or unset it");
    }
  }
  std::vector<std::string> pool;
  for (int i = 0; i < gpus_here; ++i) pool.push_back(std::to_string(i));
  return pool;
}

}  // namespace tokamak
