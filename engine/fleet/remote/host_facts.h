// What `tokamak remote install` looks at on a host before it pushes anything (one ssh command): its OS, C library
// and C++ runtime, CPU architecture, GPUs and driver, Python and its venv module, free disk, whether it reaches
// PyPI, and what an earlier install left. install_problem() turns the facts into the one-line refusal of the first
// thing that cannot work, naming the fix, or "".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

struct HostGpu {
  std::string name, driver;  // "NVIDIA H100 80GB HBM3", "580.65.06"
  double compute_capability = 0;
};

struct HostFacts {
  std::string os, arch, home;  // "Ubuntu 22.04.4 LTS", "x86_64", "/home/ubuntu"
  std::string glibc;           // "2.35"
  std::string glibcxx;         // the newest GLIBCXX_ version its libstdc++ serves: "3.4.30"
  std::vector<HostGpu> gpus;
  std::string python;        // the python3 that installs run with: "3.10"; "" when there is none
  bool venv = false;         // it can make a venv (python3-venv's venv and ensurepip)
  bool pypi = false;         // it reached https://pypi.org within 5 s
  std::string torch;         // with --torch-python: that python's torch.__version__ ("" when it has none)
  int64_t free_kb = 0;       // free in $HOME
  std::string installed;     // the version line of an earlier install ("" when none)
  std::string installed_kit; // and the sha256 of the kit it came from
  bool own_venv = false;     // the venv an earlier install made is there
  std::string venv_torch;    // and the torch it has ("" when none)
};

// The shell script the host runs (sh; no bash assumed); TORCH_PYTHON, when given, is asked its torch version.
std::string host_facts_script(const std::string& torch_python);
// Its output ("key=value" lines) back into facts; unknown lines are left alone.
HostFacts parse_host_facts(const std::string& text);

// What an install needs of a host, from the kit about to be pushed.
struct InstallNeeds {
  std::string arch = "x86_64";
  std::string glibc;                 // the newest GLIBC_ symbol version the kit's files ask for: "2.34"
  std::string glibcxx;               // the same for GLIBCXX_, which the host's libstdc++ must serve
  int min_driver = 580;              // CUDA 13's driver
  double min_compute_capability = 7.5;
  int64_t kit_kb = 0;                // unpacked
  int64_t torch_kb = 0;              // 0 when torch is already there (--torch-python)
  bool needs_venv = true;            // torch goes into a venv of the install's own
  bool has_wheels = false;           // --wheels: torch's wheels are pushed, PyPI is not needed
  std::string torch_python;          // --torch-python: that python must have torch 2.11
};

// "" when the host can take the install; else one line naming the first thing that cannot work and its fix.
std::string install_problem(const HostFacts& host, const InstallNeeds& needs);

// a < b for dotted versions ("2.31" < "2.34", "3.4.29" < "3.4.30").
bool version_less(const std::string& a, const std::string& b);

}  // namespace tokamak
