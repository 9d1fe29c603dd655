// The devices a plan is made for (resources/devices.json, built into the programs, and the user's own
// $XDG_CONFIG_HOME/tokamak/devices.json on top): each one's memory, dense matmul peaks per precision, memory
// bandwidth, interconnect and an hourly price the user can change. LibTorch-free.
#pragma once
#include <map>
#include <string>

#include "engine/base/config/choices.h"
#include <vector>

namespace tokamak {

struct CatalogDevice {
  std::string name;                // "H100 SXM"
  std::vector<std::string> match;  // what a CUDA device name contains when it is this one ("H100 80GB HBM3")
  std::string architecture;        // "Hopper"; "CPU" for this machine
  std::string compute_capability;  // "9.0"; "" for a CPU
  double memory_bytes = 0;
  std::map<std::string, double> flops;  // dense FLOP/s by precision: fp32, tf32, bf16, fp8 (absent: not there)
  double memory_bytes_per_s = 0;
  std::string interconnect;             // "NVLink 4", "PCIe 4"
  double interconnect_bytes_per_s = 0;  // per GPU and direction
  double price_per_hour = 0;            // in the catalog's currency (USD), 0 = free (this machine)
  std::string source;                   // where the entry came from: the catalog, the user's file, measured
  bool this_machine = false;
};

struct DeviceCatalog {
  std::vector<CatalogDevice> devices;
  std::string prices_as_of, price_source;
};

// The built-in catalog, and on top of it the user's file where there is one: an entry whose name is in the catalog
// replaces the fields it gives (a price, say); a new name must give them all. Bad JSON or a bad field throws
// tokamak::Error naming the file, the device and the field.
DeviceCatalog load_device_catalog();
// The same from texts: the catalog's, then the user's (with USER_PATH for errors; "" for none).
DeviceCatalog parse_device_catalog(const std::string& catalog_text, const std::string& user_text,
                                   const std::string& user_path);
// $XDG_CONFIG_HOME/tokamak/devices.json.
std::string user_devices_path();
// resources/devices.json as built in.
const std::string& builtin_devices_json();

// The device named NAME (case ignored; "this" for this machine); throws Error naming the nearest name otherwise.
const CatalogDevice& find_device(const DeviceCatalog& catalog, const std::string& name);
// The catalog device a CUDA device name ("NVIDIA H100 80GB HBM3") is, or nullptr.
const CatalogDevice* device_for_gpu_name(const DeviceCatalog& catalog, const std::string& gpu_name);
// The peak for a config's precision (auto resolved before), by the number format its matmuls run in: the
// format's own, else fp32's (a device without bf16 runs the plan in fp32: see `plan`'s basis).
double device_peak(const CatalogDevice& d, Precision precision, std::string* used = nullptr);

}  // namespace tokamak
