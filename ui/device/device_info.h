// What this machine can train on, for the setup panel: the CPU and each CUDA GPU by name. Asked once and
// cached, because probing CUDA takes a moment the first time.
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
