// `tokamak remote install` and `uninstall`: Tokamak on an SSH host in one command, on the Linux images GPU clouds
// hand out. Install looks at the host first (host_facts.h) and refuses in one line what cannot work before anything
// is pushed; then it pushes the engine kit (engine_kit.h, resumable), gives torch 2.11 a venv of its own (pip from
// PyPI, or wheels pushed from here, or a python the user names), writes the wrapper that finds LibTorch's and
// CUDA's libraries in that venv, links it into a folder of a non-interactive login's PATH when one is the user's,
// and proves it: `tokamak --version` through the same format check `remote test` does, then 3 training steps.
// Everything it makes is listed in <home>/.local/lib/tokamak/MANIFEST, which uninstall follows and nothing else.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "engine/fleet/remote/host_facts.h"

namespace tokamak {

class RemoteHost;

struct InstallOptions {
  std::string programs_dir;  // this build's tokamak and tokamak-engine
  std::string torch_python;  // a python on the host whose torch is 2.11 ("" = a venv of the install's own)
  std::string wheels;        // a folder here with torch 2.11's wheels and their dependencies (a host without PyPI)
  bool smoke = true;         // the 3 training steps at the end
};

// WHAT is said when a step begins (TOTAL 0) and as a push goes (DONE of TOTAL bytes).
using InstallProgress = std::function<void(const std::string& what, int64_t done, int64_t total)>;

struct InstallResult {
  bool changed = false;  // false: the host had this very kit, and nothing was done
  std::string command;   // tokamak there: "tokamak" when it is on a non-interactive login's PATH, else its full path
  std::string version;   // the version it reports
  std::string smoke;     // the smoke run's line for step 3 ("" when not run)
  std::string summary;   // one line for the user
  uint64_t resumed_at = 0;  // the byte the kit's push went on from (0: from the start)
};

// Where an install lives under the host's home: the kit's folder, and torch's venv (kept across upgrades).
std::string install_dir(const std::string& home);
std::string install_venv(const std::string& home);

// Throws an Error of one line (a refusal names its fix) when the host cannot take it or a step fails there.
InstallResult install_on_host(const RemoteHost& host, const InstallOptions& o, const InstallProgress& progress);

// Removes what install made, by its MANIFEST, and nothing else; one line saying what went.
std::string uninstall_from_host(const RemoteHost& host);

}  // namespace tokamak
