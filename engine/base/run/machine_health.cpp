// See machine_health.h.
#include "engine/base/run/machine_health.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "engine/base/util/proc_files.h"

namespace tokamak {
namespace {

double health_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string read_sys_text(const std::string& path) { return read_proc_file(path).value_or(""); }

// The mean of /proc/cpuinfo's "cpu MHz" lines (the current clock on most kernels); -1 when absent.
double cpu_mhz() {
  std::istringstream in(read_sys_text("/proc/cpuinfo"));
  std::string line;
  double sum = 0;
  int n = 0;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) sum += std::atof(line.c_str() + colon + 1), ++n;
    }
  return n ? sum / n : -1;
}

// The hottest thermal zone in °C; -1 when the machine exposes none (most VMs).
double cpu_temp_c() {
  double hottest = -1;
  DIR* d = opendir("/sys/class/thermal");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "thermal_zone", 12) != 0) continue;
    const std::string t = read_sys_text(std::string("/sys/class/thermal/") + e->d_name + "/temp");
    if (!t.empty()) hottest = std::max(hottest, std::atof(t.c_str()) / 1000.0);
  }
  closedir(d);
  return hottest;
}

// /proc/stat's first line: every core's busy jiffies (all but idle and iowait).
uint64_t busy_jiffies() {
  std::istringstream in(read_sys_text("/proc/stat"));
  std::string cpu;
  uint64_t v[10] = {};
  in >> cpu;
  for (uint64_t& x : v) in >> x;
  return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

// This process's user + system jiffies (/proc/self/stat's fields 14 and 15, after the command in parentheses).
uint64_t self_jiffies() {
  const std::optional<ProcStat> s = read_proc_stat(getpid());
  return s ? static_cast<uint64_t>(s->utime + s->stime) : 0;
}

double swap_used_bytes() {
  std::istringstream in(read_sys_text("/proc/meminfo"));
  std::string key;
  double total = -1, free_kb = -1, value;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "SwapTotal:") total = value;
    if (key == "SwapFree:") free_kb = value;
  }
  return total > 0 && free_kb >= 0 ? (total - free_kb) * 1024 : -1;
}

}  // namespace

// NVML's C functions as its documentation gives them; the driver's library is opened at run time, so the build
// needs no NVML header and a host without the driver still runs.
struct MachineHealth::Nvml {
  using Device = void*;
  struct Utilization {
    unsigned int gpu, memory;
  };
  void* lib = nullptr;
  Device device = nullptr;
  int (*power)(Device, unsigned int*) = nullptr;                    // nvmlDeviceGetPowerUsage: mW
  int (*temperature)(Device, int, unsigned int*) = nullptr;         // nvmlDeviceGetTemperature: 0 = the GPU
  int (*clock)(Device, int, unsigned int*) = nullptr;               // nvmlDeviceGetClockInfo: 1 = SM, 2 = memory
  int (*utilization)(Device, Utilization*) = nullptr;               // nvmlDeviceGetUtilizationRates
  int (*throttle)(Device, unsigned long long*) = nullptr;           // nvmlDeviceGetCurrentClocksThrottleReasons
  int (*shutdown)() = nullptr;                                      // nvmlShutdown
  bool initialised = false;
  // NVML is shut down before its library goes: unloading it while initialised can crash at exit on some drivers.
  ~Nvml() {
    if (initialised && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

MachineHealth::MachineHealth(const std::string& gpu_pci_bus_id) {
  last_busy_ = busy_jiffies(), last_self_ = self_jiffies(), last_s_ = health_clock_s();
  if (gpu_pci_bus_id.empty()) return;
  auto n = std::make_unique<Nvml>();
  n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n->lib) {
    gpu_note_ = "NVML (libnvidia-ml.so.1) is not on this host: the GPU's power, temperature and clocks are not "
                "measured";
    return;
  }
  const auto sym = [&](const char* name) { return dlsym(n->lib, name); };
  auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  auto by_bus = reinterpret_cast<int (*)(const char*, Nvml::Device*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  n->power = reinterpret_cast<decltype(n->power)>(sym("nvmlDeviceGetPowerUsage"));
  n->temperature = reinterpret_cast<decltype(n->temperature)>(sym("nvmlDeviceGetTemperature"));
  n->clock = reinterpret_cast<decltype(n->clock)>(sym("nvmlDeviceGetClockInfo"));
  n->utilization = reinterpret_cast<decltype(n->utilization)>(sym("nvmlDeviceGetUtilizationRates"));
  n->throttle = reinterpret_cast<decltype(n->throttle)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  n->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  n->initialised = init && init() == 0;
  if (!n->initialised || !by_bus || by_bus(gpu_pci_bus_id.c_str(), &n->device) != 0) {
    gpu_note_ = "NVML could not open the GPU at " + gpu_pci_bus_id +
                ": its power, temperature and clocks are not measured";
    return;
  }
  nvml_ = std::move(n);
}

MachineHealth::~MachineHealth() = default;

void MachineHealth::add_to(Metrics& m) {
  if (last_s_ >= 0 && !last_.empty() && health_clock_s() - last_s_ < 1.0) {
    for (const MetricValue& v : last_) m.add(v);
    return;
  }
  Metrics now;
  read(now);
  for (const MetricValue& v : now) m.add(v);
  last_ = now;
}

void MachineHealth::read(Metrics& m) {
  const auto put = [&](const char* key, double v) {
    if (v >= 0) m.add(key, v);
  };
  put("cpu_mhz", cpu_mhz());
  put("cpu_temp_c", cpu_temp_c());
  double load[1] = {-1};
  if (getloadavg(load, 1) == 1) put("load_1m", load[0]);
  const uint64_t busy = busy_jiffies(), self = self_jiffies();
  const double t = health_clock_s(), hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (t > last_s_ && busy >= last_busy_ && hz > 0) {
    const double others = (static_cast<double>(busy - last_busy_) - static_cast<double>(self - last_self_)) / hz;
    put("others_cores", std::max(0.0, others / (t - last_s_)));
  }
  last_busy_ = busy, last_self_ = self, last_s_ = t;
  if (const double swap = swap_used_bytes(); swap >= 0) m.add_count("swap_used", static_cast<int64_t>(swap));
  if (!nvml_) return;
  unsigned int v = 0;
  if (nvml_->power && nvml_->power(nvml_->device, &v) == 0) put("gpu_power_w", v / 1000.0);
  if (nvml_->temperature && nvml_->temperature(nvml_->device, 0, &v) == 0) put("gpu_temp_c", v);
  if (nvml_->clock && nvml_->clock(nvml_->device, 1, &v) == 0) put("gpu_sm_mhz", v);
  if (nvml_->clock && nvml_->clock(nvml_->device, 2, &v) == 0) put("gpu_mem_mhz", v);
  Nvml::Utilization u{};
  if (nvml_->utilization && nvml_->utilization(nvml_->device, &u) == 0)
    put("gpu_util", u.gpu / 100.0), put("gpu_mem_util", u.memory / 100.0);
  unsigned long long reasons = 0;
  if (nvml_->throttle && nvml_->throttle(nvml_->device, &reasons) == 0)
    m.add_count("gpu_throttle", static_cast<int64_t>(reasons));
}

}  // namespace tokamak
