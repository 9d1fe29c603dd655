// The device catalog: resources/devices.json built in, the user's file on top (see device_catalog.h).
#include "engine/base/plan/device_catalog.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/nearest.h"

namespace tokamak {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// 0.1, 1, 100000, 1e+06: as a person writes a bound.
std::string plain_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// One entry's fields onto D: every field it gives, checked. FULL: the entry must give them all (a new device).
void read_entry(const json& e, CatalogDevice& d, bool full, const std::string& file) {
  const std::string who = "device '" + d.name + "'";
  const auto bad = [&](const std::string& field, const std::string& want) {
    return Error(file + ": " + who + ": '" + field + "' " + want,
                 "fix that field (resources/devices.json shows every field of an entry)");
  };
  // LOW..HIGH: what a GPU of today or the next decades can have; a typo of a few orders of magnitude is refused.
  const auto number = [&](const char* field, double* out, double scale, double low, double high) {
    if (!e.contains(field)) {
      if (full) throw bad(field, "is missing");
      return;
    }
    const json& v = e[field];
    if (!v.is_number() || !(v.get<double>() >= low) || !(v.get<double>() <= high))
      throw bad(field, "must be a number from " + plain_number(low) + " to " + plain_number(high));
    *out = v.get<double>() * scale;
  };
  const auto text = [&](const char* field, std::string* out, bool required) {
    if (!e.contains(field)) {
      if (full && required) throw bad(field, "is missing");
      return;
    }
    if (!e[field].is_string() || e[field].get<std::string>().empty()) throw bad(field, "must be a non-empty string");
    *out = e[field].get<std::string>();
  };
  text("architecture", &d.architecture, true);
  text("compute_capability", &d.compute_capability, false);
  number("memory_gb", &d.memory_bytes, 1e9, 0.1, 1e5);
  number("memory_bandwidth_gbs", &d.memory_bytes_per_s, 1e9, 1, 1e6);
  number("price_per_hour", &d.price_per_hour, 1, 0, 1e5);
  if (e.contains("match")) {
    if (!e["match"].is_array()) throw bad("match", "must be a list of strings");
    d.match.clear();
    for (const json& m : e["match"]) {
      if (!m.is_string() || m.get<std::string>().empty()) throw bad("match", "must be a list of non-empty strings");
      d.match.push_back(m.get<std::string>());
    }
  }
  if (e.contains("tflops")) {
    const json& t = e["tflops"];
    if (!t.is_object()) throw bad("tflops", "must be an object of precisions (fp32, tf32, bf16, fp16, fp8) to TFLOP/s");
    for (const auto& [precision, v] : t.items()) {
      if (precision != "fp32" && precision != "tf32" && precision != "bf16" && precision != "fp16" && precision != "fp8")
        throw bad("tflops." + precision, "is no precision Tokamak plans for (fp32, tf32, bf16, fp16, fp8)");
      if (!v.is_number() || !(v.get<double>() >= 0.001) || !(v.get<double>() <= 1e6))
        throw bad("tflops." + precision, "must be a number from 0.001 to 1e6");
      d.flops[precision] = v.get<double>() * 1e12;
    }
  }
  if (full && !d.flops.count("fp32")) throw bad("tflops.fp32", "is missing");
  if (e.contains("interconnect")) {
    const json& i = e["interconnect"];
    if (!i.is_object() || !i.contains("kind") || !i["kind"].is_string() || !i.contains("gbs") ||
        !i["gbs"].is_number() || !(i["gbs"].get<double>() >= 0.1) || !(i["gbs"].get<double>() <= 1e6))
      throw bad("interconnect", "must be {\"kind\": \"NVLink 4\", \"gbs\": 450} (per GPU and direction)");
    d.interconnect = i["kind"].get<std::string>(), d.interconnect_bytes_per_s = i["gbs"].get<double>() * 1e9;
  } else if (full) {
    throw bad("interconnect", "is missing");
  }
}

void read_file_into(DeviceCatalog& c, const std::string& text, const std::string& file, bool user) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(file + " is not JSON: " + e.what(), "fix the file, or move it away to use the built-in catalog");
  }
  if (!j.is_object() || !j.contains("devices") || !j["devices"].is_array())
    throw Error(file + ": no \"devices\" list", "the file holds {\"devices\": [{\"name\": …}, …]}, as resources/devices.json");
  if (!user) c.prices_as_of = j.value("prices_as_of", ""), c.price_source = j.value("price_source", "");
  for (const json& e : j["devices"]) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || e["name"].get<std::string>().empty())
      throw Error(file + ": a device without a \"name\"", "give every entry a name");
    const std::string name = e["name"].get<std::string>();
    auto it = std::find_if(c.devices.begin(), c.devices.end(),
                           [&](const CatalogDevice& d) { return lower(d.name) == lower(name); });
    if (it != c.devices.end() && !user) throw Error(file + ": device '" + name + "' twice", "keep one entry of it");
    if (it == c.devices.end()) {
      CatalogDevice d;
      d.name = name, d.match = {name}, d.source = user ? file : "the built-in catalog";
      read_entry(e, d, true, file);
      c.devices.push_back(d);
    } else {
      read_entry(e, *it, false, file);
      it->source += ", changed by " + file;
    }
  }
}

}  // namespace

std::string user_devices_path() { return config_dir() + "/devices.json"; }

DeviceCatalog parse_device_catalog(const std::string& catalog_text, const std::string& user_text,
                                   const std::string& user_path) {
  DeviceCatalog c;
  read_file_into(c, catalog_text, "resources/devices.json", false);
  if (!user_path.empty()) read_file_into(c, user_text, user_path, true);
  return c;
}

DeviceCatalog load_device_catalog() {
  const std::string user = user_devices_path();
  return path_exists(user) ? parse_device_catalog(builtin_devices_json(), read_file(user), user)
                           : parse_device_catalog(builtin_devices_json(), "", "");
}

const CatalogDevice& find_device(const DeviceCatalog& catalog, const std::string& name) {
  std::vector<std::string> names;
  for (const CatalogDevice& d : catalog.devices) {
    if (lower(d.name) == lower(name) || (d.this_machine && lower(name) == "this")) return d;
    names.push_back(d.name);
  }
  throw Error("no device '" + name + "' in the catalog",
              "did you mean '" + nearest_name(name, names) + "'? `tokamak plan --device all` lists them; add your "
              "own in " + user_devices_path());
}

const CatalogDevice* device_for_gpu_name(const DeviceCatalog& catalog, const std::string& gpu_name) {
  const CatalogDevice* best = nullptr;
  size_t longest = 0;  // "H100 PCIe" before "H100": the longest match wins
  for (const CatalogDevice& d : catalog.devices)
    for (const std::string& m : d.match)
      if (lower(gpu_name).find(lower(m)) != std::string::npos && m.size() > longest) best = &d, longest = m.size();
  return best;
}

double device_peak(const CatalogDevice& d, Precision precision, std::string* used) {
  const std::string want = precision == Precision::kBf16 || precision == Precision::kBf16Pure ? "bf16"
                           : precision == Precision::kTf32                                   ? "tf32"
                           : precision == Precision::kFp16                                   ? "fp16"
                                                                                             : "fp32";
  const auto it = d.flops.find(want);
  const std::string got = it != d.flops.end() ? want : "fp32";
  if (used) *used = got;
  return d.flops.at(got);
}

}  // namespace tokamak
