// See gpu_info.h.
#include "engine/base/machine/gpu_info.h"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>

namespace tokamak {
namespace {

// NVML in its (PCI bus) order; empty when its library or a driver is missing.
std::vector<GpuFacts> nvml_gpus() {
  std::vector<GpuFacts> out;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return out;
  using Device = void*;
  const auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
  const auto shutdown = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlShutdown"));
  const auto count = reinterpret_cast<int (*)(unsigned*)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  const auto by_index = reinterpret_cast<int (*)(unsigned, Device*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  const auto name = reinterpret_cast<int (*)(Device, char*, unsigned)>(dlsym(lib, "nvmlDeviceGetName"));
  const auto capability =
      reinterpret_cast<int (*)(Device, int*, int*)>(dlsym(lib, "nvmlDeviceGetCudaComputeCapability"));
  unsigned n = 0;
  if (init && shutdown && count && by_index && name && capability && init() == 0) {
    if (count(&n) == 0)
      for (unsigned i = 0; i < n; ++i) {
        Device d = nullptr;
        char text[96] = {};
        GpuFacts g;
        if (by_index(i, &d) != 0 || name(d, text, sizeof text) != 0) break;
        g.name = text;
        if (capability(d, &g.major, &g.minor) != 0) g.major = g.minor = 0;
        out.push_back(g);
      }
    shutdown();  // before the library goes: unloading it while initialised can crash at exit on some drivers
  }
  dlclose(lib);
  return out;
}

}  // namespace

const std::vector<GpuFacts>& gpus_seen() {
  static const std::vector<GpuFacts> seen = [] {
    const std::vector<GpuFacts> all = nvml_gpus();
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (!visible) return all;
    std::vector<GpuFacts> picked;
    std::istringstream in(visible);
    std::string entry;
    while (std::getline(in, entry, ',')) {
      char* end = nullptr;
      const long i = std::strtol(entry.c_str(), &end, 10);
      if (entry.empty() || *end != '\0' || i < 0 || i >= static_cast<long>(all.size())) break;
      picked.push_back(all[static_cast<size_t>(i)]);
    }
    return picked;
  }();
  return seen;
}

}  // namespace tokamak
