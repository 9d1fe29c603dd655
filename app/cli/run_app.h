// How both `tokamak` binaries end: CLI11's own exit for usage errors, and for anything the engine throws one
// line "tokamak: <message> (hint: ...)" on stderr and exit code 1. tokamak-engine passes describe =
// torch_error_text so a LibTorch error shows its message without its C++ backtrace.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "engine/base/util/error_text.h"

namespace tokamak::cli {

// "tokamak frobnicate" gets only CLI11's "A subcommand is required": name the word and the commands there
// are instead. "" when argv names no unknown command (the error is something else).
inline std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  std::string path = "tokamak";  // CLI11 names the app after argv[0] (a build path) once it has parsed
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return {};
    const auto named = at->get_subcommands([&](CLI::App* s) { return s->check_name(word); });
    if (!named.empty()) {
      at = named.front(), path += " " + word;
      continue;
    }
    if (at->get_require_subcommand_min() == 0) return {};  // a positional argument, not a command
    std::string names;
    for (CLI::App* s : at->get_subcommands([](CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + s->get_name();
    return "'" + word + "' is not a command of " + path + " (hint: the commands are " + names + "; `" + path +
           " --help` describes them)";
  }
  return {};
}

inline int run_app(CLI::App& app, int argc, char** argv,
                   std::string (*describe)(const std::exception&) = &tokamak::error_text) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    // "--steps: must be more than 0, not 0 (hint: …)": the checks of cli_checks.h say the fix themselves.
    std::fprintf(stderr, "tokamak: %s\n", e.what());
    return 1;
  } catch (const CLI::ParseError& e) {
    if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
      std::fprintf(stderr, "tokamak: %s\n", unknown.c_str());
      return e.get_exit_code();
    }
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokamak: %s\n", describe(e).c_str());
    return 1;
  }
  return 0;
}

}  // namespace tokamak::cli
