// See precision_here.h.
#include "engine/base/machine/precision_here.h"

#include <algorithm>

#include "engine/base/config/choices.h"
#include "engine/base/machine/cpu_info.h"
#include "engine/base/machine/gpu_info.h"
#include "engine/base/machine/limits_cache.h"
#include "engine/base/util/cores.h"

namespace tokamak {

Precision cpu_precision_here(int threads) {
  // Until both rates are measured the flags decide, as in a run (whose start measures them).
  return cpu_has_bf16_instructions() && cpu_bf16_pays(threads).value_or(true) ? Precision::kBf16 : Precision::kFp32;
}

Precision precision_here(Precision precision, const std::string& device) {
  if (precision != Precision::kAuto) return precision;
  int index = -1;
  DeviceKind kind;
  try {
    kind = parse_device_kind(device, &index);
  } catch (const std::exception&) {  // config_problems() names it
    return Precision::kFp32;
  }
  if (kind == DeviceKind::kCpu) return cpu_precision_here(std::max(1, cores_given()));
  const std::vector<GpuFacts>& gpus = gpus_seen();
  const size_t i = static_cast<size_t>(std::max(index, 0));
  if (i >= gpus.size()) return Precision::kFp32;
  return gpus[i].major >= 8 ? Precision::kBf16 : gpus[i].major == 7 ? Precision::kFp16 : Precision::kFp32;
}

}  // namespace tokamak
