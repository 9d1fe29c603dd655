#include "engine/fleet/remote/host_facts.h"

#include <cstdlib>
#include <sstream>

#include "engine/fleet/remote/ssh_command.h"

namespace tokamak {

std::string host_facts_script(const std::string& torch_python) {
  // Each probe prints one key=value line, or nothing; none may end the script (no set -e).
  std::string s = R"SH(
echo "arch=$(uname -m)"
echo "home=$HOME"
[ -r /etc/os-release ] && echo "os=$(. /etc/os-release && echo "${PRETTY_NAME:-$NAME}")"
echo "glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
cxx=$( (/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null) | awk '/libstdc\+\+\.so\.6 / {print $NF; exit}')
[ -n "$cxx" ] && echo "glibcxx=$(grep -ao 'GLIBCXX_3\.4\.[0-9]*' "$cxx" | sed 's/GLIBCXX_//' | sort -t. -k3,3n | tail -1)"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | sed 's/^/gpu=/'
fi
if command -v python3 >/dev/null 2>&1; then
  echo "python=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)"
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && echo "venv=yes"
  python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=5)' \
    >/dev/null 2>&1 && echo "pypi=yes"
fi
echo "free_kb=$(df -Pk "$HOME" 2>/dev/null | awk 'NR == 2 {print $4}')"
if [ -r "$HOME/.local/lib/tokamak/VERSION" ]; then
  echo "installed=$(sed -n 1p "$HOME/.local/lib/tokamak/VERSION")"
  echo "installed_kit=$(sed -n 2p "$HOME/.local/lib/tokamak/VERSION")"
fi
venv_py=$HOME/.local/lib/tokamak-venv/bin/python
[ -x "$venv_py" ] && echo "venv_torch=$("$venv_py" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
)SH";
  if (!torch_python.empty())
    s += "echo \"torch=$(" + shell_quote(torch_python) +
         " -c 'import torch; print(torch.__version__)' 2>/dev/null)\"\n";
  return s + "exit 0\n";  // a probe that found nothing is a fact, not a failure
}

HostFacts parse_host_facts(const std::string& text) {
  HostFacts f;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "arch") f.arch = value;
    else if (key == "home") f.home = value;
    else if (key == "os") f.os = value;
    else if (key == "glibc") f.glibc = value;
    else if (key == "glibcxx") f.glibcxx = value;
    else if (key == "python") f.python = value;
    else if (key == "venv") f.venv = value == "yes";
    else if (key == "pypi") f.pypi = value == "yes";
    else if (key == "torch") f.torch = value;
    else if (key == "free_kb") f.free_kb = std::atoll(value.c_str());
    else if (key == "installed") f.installed = value;
    else if (key == "installed_kit") f.installed_kit = value;
    else if (key == "venv_torch") f.venv_torch = value, f.own_venv = true;
    else if (key == "gpu") {
      // "NVIDIA H100 80GB HBM3, 580.65.06, 9.0": the name may hold commas of its own, the last two fields do not.
      const size_t last = value.rfind(", "), mid = last == std::string::npos ? last : value.rfind(", ", last - 1);
      if (mid == std::string::npos) continue;
      f.gpus.push_back({value.substr(0, mid), value.substr(mid + 2, last - mid - 2),
                        std::atof(value.substr(last + 2).c_str())});
    }
  }
  return f;
}

bool version_less(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string p, q;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(x, p, '.')), more_b = static_cast<bool>(std::getline(y, q, '.'));
    if (!more_a || !more_b) return !more_a && more_b;
    const long u = std::atol(p.c_str()), v = std::atol(q.c_str());
    if (u != v) return u < v;
  }
}

namespace {

std::string gb(int64_t kb) {
  std::ostringstream o;
  o.precision(2);
  o << std::fixed << static_cast<double>(kb) / (1024.0 * 1024.0) << " GB";
  return o.str();
}

}  // namespace

std::string install_problem(const HostFacts& h, const InstallNeeds& n) {
  // The OS is named where it is the cause (architecture, C library, C++ runtime).
  const std::string where = "the host", system = h.os.empty() ? where : where + " (" + h.os + ")";
  if (h.arch != n.arch)
    return system + " is " + (h.arch.empty() ? "of an unknown architecture" : h.arch) + ", and this kit is built for " +
           n.arch + " (hint: build Tokamak on it instead, docs/REMOTE.md \"Build there\")";
  if (h.glibc.empty() || version_less(h.glibc, n.glibc))
    return system + " has glibc " + (h.glibc.empty() ? "(unknown)" : h.glibc) + ", and the kit needs " + n.glibc +
           " or newer (hint: an image of Ubuntu 22.04 or later, Debian 12, RHEL 9 or Amazon Linux 2023)";
  if (!n.glibcxx.empty() && (h.glibcxx.empty() || version_less(h.glibcxx, n.glibcxx)))
    return "the C++ runtime (libstdc++) of " + system + " serves GLIBCXX up to " +
           (h.glibcxx.empty() ? "(unknown)" : h.glibcxx) + ", and the kit needs " + n.glibcxx +
           " (hint: an image of Ubuntu 22.04 or later or Debian 12; on RHEL 9 or Amazon Linux 2023 build Tokamak "
           "there, docs/REMOTE.md \"Build there\")";
  for (const HostGpu& g : h.gpus) {
    if (std::atoi(g.driver.c_str()) < n.min_driver)
      return where + "'s NVIDIA driver is " + g.driver + ", and LibTorch 2.11's CUDA 13 needs " +
             std::to_string(n.min_driver) + " or newer (hint: update the driver, or choose an image with CUDA 13)";
    if (g.compute_capability < n.min_compute_capability) {
      std::ostringstream cc;
      cc.precision(1);
      cc << std::fixed << g.compute_capability;
      return where + "'s " + g.name + " has compute capability " + cc.str() +
             ", and this build needs 7.5 or newer (hint: a V100 or P100 needs a CUDA 12 build of LibTorch; rent a "
             "T4, an A10, an L4, an A100 or newer)";
    }
  }
  if (n.torch_kb > 0) {
    if (h.python.empty())
      return where + " has no python3 (hint: install python3 and python3-venv there, or pass --torch-python with "
                     "a python that has torch 2.11)";
    if (n.needs_venv && !h.venv)
      return where + "'s python3 " + h.python + " cannot make a venv (hint: sudo apt install python3-venv there)";
    if (!h.pypi && !n.has_wheels)
      return where + " cannot reach PyPI (hint: pass --wheels DIR with torch 2.11 and its wheels, or --torch-python "
                     "with a python there that has torch 2.11)";
  }
  if (!n.torch_python.empty() && h.torch.rfind("2.11", 0) != 0)
    return where + "'s " + n.torch_python + (h.torch.empty() ? " cannot import torch" : " has torch " + h.torch) +
           ", and the engine needs torch 2.11 (hint: leave out --torch-python to install torch 2.11 in a venv of its "
           "own)";
  const int64_t need = n.kit_kb + n.torch_kb + 1024 * 1024;  // and a GB to train with
  if (h.free_kb < need)
    return where + " has " + gb(h.free_kb) + " free in " + (h.home.empty() ? "its home" : h.home) + ", and the install needs " +
           gb(need) + " (hint: free some space, or choose a larger disk)";
  return {};
}

}  // namespace tokamak
