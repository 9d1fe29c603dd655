// Fuzz target: the user's devices.json (engine/base/plan/device_catalog.h), laid over the catalog built in. Anything but
// a tokamak::Error is a bug, and every device that reads back has numbers a plan can divide by.
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/base/util/error.h"
#include "engine/base/plan/device_catalog.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const DeviceCatalog c = parse_device_catalog(builtin_devices_json(), text, "devices.json");
    for (const CatalogDevice& d : c.devices) {
      fuzz::require(std::isfinite(d.memory_bytes) && d.memory_bytes > 0, "a device without memory");
      fuzz::require(std::isfinite(d.memory_bytes_per_s) && d.memory_bytes_per_s > 0, "a device without bandwidth");
      for (const auto& [precision, flops] : d.flops)
        fuzz::require(std::isfinite(flops) && flops > 0, "a peak that is not a positive number");
    }
  } catch (const Error&) {
  }
  return 0;
}
