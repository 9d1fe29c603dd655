// deviceInfo(): this machine's CPU and GPUs by name, read without LibTorch (engine/base/machine).
#include "ui/device/device_info.h"

#include "engine/base/machine/cpu_info.h"
#include "engine/base/machine/gpu_info.h"

namespace tokamak::ui {

const DeviceInfo& deviceInfo() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    d.cpuName = QString::fromStdString(cpu_model());
    for (const GpuFacts& g : gpus_seen()) d.gpuNames << QString::fromStdString(g.name);
    return d;
  }();
  return info;
}

}  // namespace tokamak::ui
