// Device queries. CUDA calls are compiled only when LibTorch is a CUDA build (TOKAMAK_WITH_CUDA).
#include "engine/train/device.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <thread>

#ifdef TOKAMAK_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace tokamak {

int cuda_device_count() { return static_cast<int>(torch::cuda::device_count()); }

c10::Device parse_device(const std::string& name) {
  if (name == "cuda") return c10::Device(c10::kCUDA, 0);
  return c10::Device(name);
}

int configure_cpu(int64_t threads) {
  // LibTorch's CPU allocator has no cache: every step frees and re-allocates the same large tensors (the
  // logits alone are B·T·V floats), and glibc serves each with a fresh mmap that the kernel must zero page by
  // page (a nano step 2.7× slower; docs/PERFORMANCE.md). The engine links jemalloc, which keeps freed memory
  // for reuse in every thread alike. glibc's mallopt() cannot do that: its settings hold only in the main
  // arena, and a thread with an arena of its own (an embedder's, a test's) still gets a fresh mmap for every
  // block over 64 MB — a third of the speed (issue 17). So the settings below are only the fallback for a
  // process whose malloc is glibc's after all (jemalloc answers to mallctl; glibc has no such symbol).
  if (!::dlsym(RTLD_DEFAULT, "mallctl")) {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
    mallopt(M_TOP_PAD, 64 << 20);
  }
  int n = threads > 0 ? static_cast<int>(threads) : static_cast<int>(std::thread::hardware_concurrency());
  if (n < 1) n = 1;
  at::set_num_threads(n);
  return at::get_num_threads();
}

static std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "CPU";
}

std::string device_name(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->name;
#endif
  return cpu_model();
}

std::string cuda_runtime_version() {
#ifdef TOKAMAK_WITH_CUDA
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
#endif
  return "";
}

std::string host_name() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

static int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

MemoryUse memory_use(const c10::Device& device) {
  MemoryUse m;
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda()) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
    const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    m.allocated = stats.allocated_bytes[agg].current;
    m.reserved = stats.reserved_bytes[agg].current;
    m.peak = stats.allocated_bytes[agg].peak;
    return m;
  }
#endif
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  m.allocated = resident_bytes();
  m.peak = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return m;
}

void reset_peak_memory(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
#endif
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index() < 0 ? 0 : device.index());
}

double peak_flops(const std::string& name, const std::string& precision) {
  struct Peak {
    const char* match;
    double fp32, tf32, half;  // dense TFLOP/s from the datasheets
  };
  static const Peak table[] = {
      {"H200", 67, 494.5, 989}, {"H100", 67, 494.5, 989}, {"A100", 19.5, 156, 312},
      {"L40S", 91.6, 183, 362}, {"A10", 31.2, 62.5, 125}, {"4090", 82.6, 82.6, 165},
      {"V100", 15.7, 15.7, 125},
  };
  for (const Peak& p : table) {
    if (name.find(p.match) == std::string::npos) continue;
    double tflops = precision == "fp32" ? p.fp32 : precision == "tf32" ? p.tf32 : p.half;
    return tflops * 1e12;
  }
  return -1;
}

}  // namespace tokamak
