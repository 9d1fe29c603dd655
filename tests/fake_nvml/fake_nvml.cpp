// A stand-in for the NVIDIA driver's libnvidia-ml.so.1 (same soname), for test_machine_health: it answers the NVML
// calls engine/base/run/machine_health.cpp makes, for one GPU at bus id 0000:01:00.0, and keeps the order of
// the calls so the test can see NVML shut down before its library is let go.
#include <cstring>
#include <string>

namespace {
std::string calls;
void said(const char* what) { calls += calls.empty() ? what : std::string(" ") + what; }
int device = 1;  // the handle given out
}  // namespace

extern "C" {
const char* fake_nvml_calls() { return calls.c_str(); }
void fake_nvml_forget() { calls.clear(); }

int nvmlInit_v2() {
  said("init");
  return 0;
}
int nvmlShutdown() {
  said("shutdown");
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** handle) {
  if (std::strcmp(bus_id, "0000:01:00.0") != 0) {
    said("bus-fail");
    return 999;  // NVML_ERROR_UNKNOWN
  }
  said("bus");
  *handle = &device;
  return 0;
}
int nvmlDeviceGetPowerUsage(void*, unsigned int* milliwatts) {
  *milliwatts = 123456;
  return 0;
}
}
