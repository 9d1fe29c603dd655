// What this build reads and writes, and the version that names it. The version is CMakeLists.txt's project
// VERSION (the one place); its minor number is raised with any of the formats below, so two builds whose
// major.minor agree read each other's stores, configs and journals. tests/test_store_versions.cpp keeps the history
// and fails when a format changed without a new version.
#pragma once
#include <string>

namespace tokamak {

struct Formats {
  int store_schema = 0;  // the run store's PRAGMA user_version (store_schema.cpp)
  int config_keys = 0;   // the config's key layout: 2 since the sections were split by concern (renamed_keys.h), 3 with health, 4 with fp16's loss scale, 5 with the metrics section
  int journal = 0;       // the events' shape in events.jsonl and on --json (journal_events.h)
};
inline bool operator==(const Formats& a, const Formats& b) {
  return a.store_schema == b.store_schema && a.config_keys == b.config_keys && a.journal == b.journal;
}

inline constexpr Formats kFormats{10, 5, 1};

// `tokamak --version`: "0.6.0 (store schema 10, config keys 5, journal 1)".
std::string version_line();

// What another build's --version said. A build before the formats were printed said its version alone
// ("0.1.0"): its formats are unknown and taken as older.
struct OtherBuild {
  std::string version;
  Formats formats;  // all 0 when not printed
  bool known() const { return formats.store_schema > 0; }
};
OtherBuild parse_version_line(const std::string& line);

// "" when a build that printed LINE reads what this one writes and the other way round; otherwise what
// differs, in words: "store schema 7 against 8, config keys unknown against 2".
std::string format_mismatch(const OtherBuild& other);

}  // namespace tokamak
