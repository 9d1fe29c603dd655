// See cpu_info.h.
#include "engine/base/machine/cpu_info.h"

#include <unistd.h>

#include <sstream>

#include "engine/base/util/proc_files.h"

namespace tokamak {

std::string cpu_model() {
  std::istringstream in(read_proc_file("/proc/cpuinfo").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "CPU";
}

bool cpu_flag(const std::string& flag) {
  std::istringstream in(read_proc_file("/proc/cpuinfo").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    return (line + " ").find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

bool cpu_has_bf16_instructions() {
  static const bool cpu = cpu_flag("avx512_bf16") || cpu_flag("amx_bf16");
  return cpu;
}

int64_t physical_memory_bytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace tokamak
