// How both `tokamak` binaries end: CLI11's own exit for usage errors, and for anything the engine throws one
// line "tokamak: <message> (hint: ...)" on stderr and exit code 1.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

namespace tokamak::cli {

inline int run_app(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokamak: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace tokamak::cli
