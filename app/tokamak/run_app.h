// How both `tokamak` binaries end: CLI11's own exit for usage errors, and for anything the engine throws one
// line "tokamak: <message> (hint: ...)" on stderr and exit code 1. tokamak-engine passes describe =
// torch_error_text so a LibTorch error shows its message without its C++ backtrace.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "engine/util/error_text.h"

namespace tokamak::cli {

inline int run_app(CLI::App& app, int argc, char** argv,
                   std::string (*describe)(const std::exception&) = &tokamak::error_text) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokamak: %s\n", describe(e).c_str());
    return 1;
  }
  return 0;
}

}  // namespace tokamak::cli
