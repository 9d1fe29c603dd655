// See checkpoint_files.h.
#include "engine/base/run/checkpoint_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/safetensors.h"

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

std::string checkpoint_run_uid(const std::string& path) {
  if (!path_exists(path))
    throw Error("checkpoint '" + path + "' does not exist",
                "check the path; checkpoints are listed by `tokamak runs show ID`");
  SafetensorsHeader header;
  try {
    header = read_safetensors_header(path);
  } catch (const Error& e) {
    throw Error("checkpoint '" + path + "': " + e.message(), e.hint());
  }
  const auto kind = header.metadata.find("format"), uid = header.metadata.find("run_uid");
  if (kind == header.metadata.end() || kind->second != "tokamak-checkpoint")
    throw Error("'" + path + "' is a safetensors file but not a Tokamak checkpoint",
                "to start from Hugging Face GPT-2 weights, use model.init_from=PATH");
  if (uid == header.metadata.end())
    throw Error("checkpoint '" + path + "' has no run_uid in its metadata", "the file is damaged");
  return uid->second;
}

}  // namespace tokamak
