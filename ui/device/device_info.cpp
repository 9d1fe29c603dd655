// deviceInfo(): engine/device/cpu_setup.h's queries, once. c10's header comes before Qt's (QT_NO_KEYWORDS aside,
// LibTorch headers must not see Qt's macros).
#include "engine/device/cpu_setup.h"

#include "ui/device/device_info.h"

namespace tokamak::ui {

const DeviceInfo& deviceInfo() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    d.cpuName = QString::fromStdString(device_name(c10::Device(c10::kCPU)));
    const int n = cuda_device_count();
    for (int i = 0; i < n; ++i)
      d.gpuNames << QString::fromStdString(device_name(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(i))));
    return d;
  }();
  return info;
}

}  // namespace tokamak::ui
