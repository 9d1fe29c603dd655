// One JSON event a line on stdout, flushed at once (a reader follows it live): the `--json` output of the CLI's
// host and download commands.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

namespace tokamak::cli {

inline void emit_json_line(const nlohmann::json& j) {
  // Invalid UTF-8 from a host's file names or messages is replaced, never thrown on mid-stream.
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

}  // namespace tokamak::cli
