// Device queries. CUDA calls are compiled only when LibTorch is a CUDA build (TOKAMAK_WITH_CUDA).
#include "engine/torch/device/device.h"

#include "engine/torch/device/cpu_peak.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/base/util/proc_files.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <torch/cuda.h>
#include <torch/version.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

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

bool fast_bf16(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda() && cuda_device_count() > 0 && device.index() < cuda_device_count())
    return at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->major >= 8;
#endif
  if (device.is_cuda()) return false;
  const bool cpu = cpu_has_bf16_instructions();
  // With the instructions, bf16 still has to be measured faster than fp32 here (cpu_peak.h): until both rates are
  // known the flags decide, and a run's start measures them (train(), engine/torch/train/trainer.cpp).
  return cpu && cpu_bf16_pays(at::get_num_threads()).value_or(true);
}

bool fast_fp16(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  // Turing (7.5) has fp16 tensor cores and no bf16; Volta (7.0) needs CUDA 12, which this build is not.
  if (device.is_cuda() && cuda_device_count() > 0 && device.index() < cuda_device_count())
    return at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->major == 7;
#endif
  return false;  // a CPU emulates fp16 matmuls unless it has AVX-512 FP16: never picked on a CPU
}

std::string bf16_device_problem(Precision precision, const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  if ((precision != Precision::kBf16 && precision != Precision::kBf16Pure) || !device.is_cuda() || cuda_device_count() == 0 ||
      device.index() >= cuda_device_count())
    return "";
  const auto* p = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
  if (p->major >= 8) return "";
  return "speed.precision=" + name_of(precision) + " needs bf16 tensor cores (compute capability 8.0 or later), but " +
         device.str() + " (" + p->name + ") is " + std::to_string(p->major) + "." + std::to_string(p->minor) +
         ": its bf16 matmuls would be emulated";
#else
  (void)precision;
  (void)device;
  return "";
#endif
}


Precision resolved_precision(Precision precision, const std::string& device) {
  if (precision != Precision::kAuto) return precision;
  try {
    const c10::Device d = parse_device(device);
    if (fast_bf16(d)) return Precision::kBf16;
    return fast_fp16(d) ? Precision::kFp16 : Precision::kFp32;
  } catch (const std::exception&) {  // a device LibTorch cannot parse: config_problems() names it
    return Precision::kFp32;
  }
}

std::string device_name(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->name;
#endif
  return cpu_model();
}

std::string pci_bus_id(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  char id[32] = {};
  if (device.is_cuda() && cudaDeviceGetPCIBusId(id, sizeof id, device.index() < 0 ? 0 : device.index()) == cudaSuccess)
    return id;
#endif
  return "";
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
  std::istringstream in(read_proc_file("/proc/self/statm").value_or(""));
  int64_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// The high-water mark of resident memory (VmHWM), which reset_peak_memory can set back; -1 if unreadable.
static int64_t peak_resident_bytes() {
  std::istringstream in(read_proc_file("/proc/self/status").value_or(""));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // "VmHWM:   123456 kB"
  return -1;
}

// Bytes jemalloc holds for reuse (resident minus in use): what the training process keeps by its allocator
// settings (app/tokamak-engine/malloc_conf.cpp) beyond its tensors. 0 where the malloc is not jemalloc (glibc's has no
// mallctl; the studio process, a test linking no jemalloc).
static int64_t allocator_held_bytes() {
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  static const auto mallctl = reinterpret_cast<Mallctl>(::dlsym(RTLD_DEFAULT, "mallctl"));
  if (!mallctl) return 0;
  uint64_t epoch = 1;
  size_t len = sizeof epoch;
  mallctl("epoch", &epoch, &len, &epoch, len);  // refreshes the statistics below
  size_t resident = 0, allocated = 0;
  len = sizeof(size_t);
  if (mallctl("stats.resident", &resident, &len, nullptr, 0) != 0) return 0;
  len = sizeof(size_t);
  if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) != 0) return 0;
  return resident > allocated ? static_cast<int64_t>(resident - allocated) : 0;
}

#ifdef TOKAMAK_WITH_CUDA
// The caching allocator sets itself up at the first CUDA allocation; before that (and on a machine without a
// GPU) asking it for statistics throws "did you call init?". Nothing allocated means nothing to report or reset.
static bool cuda_allocator_ready(const c10::Device& device) {
  c10::cuda::CUDACachingAllocator::CUDAAllocator* a = c10::cuda::CUDACachingAllocator::get();
  return a && a->initialized() && (device.index() < 0 ? 0 : device.index()) < cuda_device_count();
}
#endif

MemoryUse memory_use(const c10::Device& device) {
  MemoryUse m;
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda()) {
    if (!cuda_allocator_ready(device)) return m;
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
  m.reserved = allocator_held_bytes();
  m.peak = peak_resident_bytes();
  if (m.peak <= 0) m.peak = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return m;
}

void reset_peak_memory(const c10::Device& device) {
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda() && cuda_allocator_ready(device)) {
    // As on a CPU below: what the caching allocator keeps of what came before (a bench rung, the start's 1 GiB
    // bandwidth copies) goes back to the driver, so reserved memory from here on is this run's own.
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
  }
#endif
  if (device.is_cuda()) return;
  // A CPU's peak is the process's high-water mark of resident memory, which only Linux can reset: hand back
  // what the allocator keeps of the runs before (jemalloc's retained pages would count again), then set the
  // mark to what is resident now. Without this every rung of `bench` after a larger one showed that one's peak.
  trim_cpu_allocator(-1);
  std::ofstream("/proc/self/clear_refs") << "5";
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index() < 0 ? 0 : device.index());
}

}  // namespace tokamak
