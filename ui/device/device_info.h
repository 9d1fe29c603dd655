// What this machine can train on, for the setup panel: the CPU and each CUDA GPU by name (NVML's, numbered as CUDA
// numbers them: engine/base/machine/gpu_info.h). Asked once and cached, because opening NVML takes a moment.
#pragma once
#include <QString>
#include <QStringList>

namespace tokamak::ui {

struct DeviceInfo {
  QString cpuName;
  QStringList gpuNames;  // index = CUDA device index
  int gpuCount() const { return static_cast<int>(gpuNames.size()); }
};

const DeviceInfo& deviceInfo();

}  // namespace tokamak::ui
