#include "engine/base/util/version.h"

#include <cstdio>

namespace tokamak {

std::string version_line() {
  return std::string(TOKAMAK_VERSION) + " (store schema " + std::to_string(kFormats.store_schema) + ", config keys " +
         std::to_string(kFormats.config_keys) + ", journal " + std::to_string(kFormats.journal) + ")";
}

OtherBuild parse_version_line(const std::string& line) {
  OtherBuild b;
  const size_t space = line.find(' ');
  b.version = line.substr(0, space);
  if (space == std::string::npos) return b;
  Formats f;
  if (std::sscanf(line.c_str() + space, " (store schema %d, config keys %d, journal %d)", &f.store_schema,
                  &f.config_keys, &f.journal) == 3 &&
      f.store_schema > 0)
    b.formats = f;
  return b;
}

std::string format_mismatch(const OtherBuild& other) {
  if (other.formats == kFormats) return "";
  if (!other.known()) return "it does not say which store schema, config keys and journal it reads (an older build)";
  std::string out;
  const auto differ = [&](const char* what, int theirs, int ours) {
    if (theirs == ours) return;
    out += (out.empty() ? "" : ", ") + std::string(what) + " " + std::to_string(theirs) + " there, " +
           std::to_string(ours) + " here";
  };
  differ("store schema", other.formats.store_schema, kFormats.store_schema);
  differ("config keys", other.formats.config_keys, kFormats.config_keys);
  differ("journal", other.formats.journal, kFormats.journal);
  return out;
}

}  // namespace tokamak
