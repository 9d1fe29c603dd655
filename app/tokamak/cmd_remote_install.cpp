// `tokamak remote install|uninstall --host HOST`: this build's engine on an SSH host in one command
// (engine/fleet/remote/host_install.h). Steps and the push's progress go to stderr, or with --json out as the
// `progress` events the studio already shows (at most one per whole percent), then one result object.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/tokamak/cmd_remote.h"
#include "app/tokamak/json_line.h"
#include "engine/fleet/remote/host_install.h"
#include "engine/base/util/error.h"

namespace tokamak::cli {
namespace {

void install(const RemoteArgs& a) {
  std::error_code ec;
  InstallOptions o;
  o.programs_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string();
  o.torch_python = a.torch_python;
  o.wheels = a.wheels;
  if (!o.wheels.empty() && !std::filesystem::is_directory(o.wheels))
    throw Error("--wheels " + o.wheels + " is not a folder here",
                "give the folder `pip download torch==2.11.0 -d DIR` filled on a machine that reaches PyPI");
  std::string shown_what;
  int shown = -1;
  const InstallResult r = install_on_host(host_of(a), o, [&](const std::string& what, int64_t done, int64_t total) {
    const int percent = total > 0 ? static_cast<int>(100 * done / total) : -1;
    if (what == shown_what && percent == shown) return;
    const bool new_step = what != shown_what;
    shown_what = what, shown = percent;
    if (a.json) emit_json_line({{"event", "progress"}, {"what", what}, {"done", done}, {"total", total}});
    else if (total == 0 || new_step) std::fprintf(stderr, "tokamak remote: %s\n", what.c_str());
    else if (percent % 10 == 0) std::fprintf(stderr, "tokamak remote: %s: %d%%\n", what.c_str(), percent);
  });
  if (a.json) {
    emit_json_line({{"event", "installed"},
                    {"changed", r.changed},
                    {"command", r.command},
                    {"version", r.version},
                    {"smoke", r.smoke},
                    {"resumed_at", r.resumed_at},
                    {"summary", r.summary}});
    return;
  }
  if (r.resumed_at > 0)
    std::fprintf(stderr, "tokamak remote: the kit's push went on from byte %llu of an earlier one\n",
                 static_cast<unsigned long long>(r.resumed_at));
  if (!r.smoke.empty()) std::fprintf(stderr, "tokamak remote: %s\n", r.smoke.c_str());
  std::printf("%s\n", r.summary.c_str());
}

void uninstall(const RemoteArgs& a) {
  const std::string said = uninstall_from_host(host_of(a));
  if (a.json) emit_json_line({{"event", "uninstalled"}, {"summary", said}});
  else std::printf("%s\n", said.c_str());
}

}  // namespace

void add_remote_install_commands(CLI::App* remote, const std::shared_ptr<RemoteArgs>& args,
                                 const std::function<void(CLI::App*)>& common) {
  CLI::App* c = remote->add_subcommand(
      "install", "Put this build of Tokamak and torch 2.11 on the host, check it and train 3 steps there");
  common(c);
  c->add_option("--torch-python", args->torch_python,
                "a python on the host that has torch 2.11 (default: a venv of the install's own, filled by pip)");
  c->add_option("--wheels", args->wheels,
                "a folder here with torch 2.11's wheels, pushed for a host that cannot reach PyPI");
  c->add_flag("--json", args->json, "progress and the result as JSON lines on stdout");
  c->callback([args] { install(*args); });

  c = remote->add_subcommand("uninstall", "Remove what `tokamak remote install` put on the host, and nothing else");
  common(c);
  c->add_flag("--json", args->json, "the result as one JSON object");
  c->callback([args] { uninstall(*args); });
}

}  // namespace tokamak::cli
