// The machine's health while a run trains, as metrics of the run: on a CPU what Linux says (the cores' clock, a
// temperature where a sensor exists, the load, the cores other processes use, swap in use); on a GPU, through NVML
// when the driver's library is there (power, temperature, SM and memory clocks, utilisation, throttle reasons).
// NVML is opened at run time (dlopen): a host without it trains the same and says once that it cannot see them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "engine/base/run/metrics.h"

namespace tokamak {

class MachineHealth {
 public:
  // gpu_pci_bus_id: the GPU's PCI bus id as CUDA names it ("0000:3B:00.0"); "" for a CPU run.
  explicit MachineHealth(const std::string& gpu_pci_bus_id = {});
  ~MachineHealth();

  // Adds what can be read now: cpu_mhz, cpu_temp_c, load_1m, others_cores (since the last call), swap_used;
  // gpu_power_w, gpu_temp_c, gpu_sm_mhz, gpu_mem_mhz, gpu_util, gpu_mem_util, gpu_throttle (NVML's reason bits).
  // A value this machine does not expose is left out, not written as 0. Read at most once a second: a report closer
  // to the last one (a bench reports every step) gets the same values again, so the readings (six NVML calls, four
  // /proc files) cost a run at most one read a second.
  void add_to(Metrics& metrics);
  // Why the GPU's values are missing ("" when they are read, or for a CPU run): for one warning at the start.
  const std::string& gpu_note() const { return gpu_note_; }

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string gpu_note_;
  uint64_t last_busy_ = 0, last_self_ = 0;  // jiffies: all cores' busy time, this process's
  double last_s_ = -1;
  Metrics last_;  // the last reading, given again within a second of it
  void read(Metrics& metrics);
};

}  // namespace tokamak
