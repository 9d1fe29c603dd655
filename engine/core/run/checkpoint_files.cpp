// See checkpoint_files.h.
#include "engine/core/run/checkpoint_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace tokamak {

std::string checkpoint_path(const std::string& dir, int64_t step) {
  return dir + "/step_" + std::to_string(step) + ".safetensors";
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step_", 0) != 0 || e.path().extension() != ".safetensors") continue;
    char* end = nullptr;
    const long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (end && std::string(end) == ".safetensors") found.emplace_back(step, e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

}  // namespace tokamak
