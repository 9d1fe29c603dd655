#include "engine/fleet/remote/host_install.h"

#include <sys/utsname.h>

#include <filesystem>
#include <sstream>
#include <vector>

#include "engine/fleet/remote/engine_kit.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/util/error.h"
#include "engine/base/util/sha256.h"
#include "engine/base/util/version.h"

namespace tokamak {
namespace {

// On the host (sh): DEST TARBALL VERSION KIT PYTHON VENV. Unpacks the kit beside the install, writes the
// wrapper, the VERSION and the MANIFEST, links the wrapper into the first folder of the user's own on PATH (never
// over someone else's tokamak), then swaps the folders: a run training under the old kit keeps its files open.
const char kInstallScript[] = R"SH(
set -eu
dest=$1 tarball=$2 version=$3 kit=$4 py=$5 venv=$6
new=$dest.new
rm -rf "$new" "$dest.old"
mkdir -p "$new"
tar -xzf "$tarball" -C "$new" --strip-components=1
site=$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
libs=$dest/lib
libs=$libs:$site/torch/lib
for d in "$site"/nvidia/*/lib; do if [ -d "$d" ]; then libs=$libs:$d; fi; done
cat >"$new/tokamak" <<EOF
#!/bin/sh
# Tokamak $version, put here by \`tokamak remote install\`; \`tokamak remote uninstall\` removes it.
# LibTorch and CUDA's libraries come from the torch beside $py.
LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dest/bin/tokamak" "\$@"
EOF
chmod +x "$new/tokamak"
printf '%s\n%s\n' "$version" "$kit" >"$new/VERSION"
link=
for d in $(printf '%s' "$PATH" | tr ':' ' '); do
  case $d in "$HOME"/*) ;; *) continue ;; esac
  if [ -e "$d/tokamak" ] || [ -L "$d/tokamak" ]; then
    [ "$(readlink "$d/tokamak")" = "$dest/tokamak" ] || continue
  fi
  if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then
    ln -sfn "$dest/tokamak" "$d/tokamak"
    link=$d/tokamak
    break
  fi
done
{
  echo "# What \`tokamak remote install\` made here; \`tokamak remote uninstall\` removes it and nothing else."
  echo "dir $dest"
  [ -n "$venv" ] && echo "venv $venv"
  [ -n "$link" ] && echo "link $link"
} >"$new/MANIFEST"
if [ -r "$dest/MANIFEST" ]; then  # a link the last install made elsewhere, still ours
  while read -r kind path; do
    if [ "$kind" = link ] && [ "$path" != "$link" ] && [ "$(readlink "$path" 2>/dev/null)" = "$dest/tokamak" ]; then
      rm -f "$path"
    fi
  done <"$dest/MANIFEST"
fi
if [ -d "$dest" ]; then mv "$dest" "$dest.old"; fi
mv "$new" "$dest"
rm -rf "$dest.old" "$tarball"
)SH";

// On the host (sh): DEST VENV. Follows the MANIFEST; a link is removed only while it still points at the install,
// the venv only when it is the one install makes.
const char kUninstallScript[] = R"SH(
set -eu
dest=$1 own_venv=$2
if [ ! -r "$dest/MANIFEST" ]; then echo "none"; exit 0; fi
while read -r kind path; do
  case $kind in
    link) if [ "$(readlink "$path" 2>/dev/null)" = "$dest/tokamak" ]; then rm -f "$path"; echo "gone=$path"; fi ;;
    venv) if [ "$path" = "$own_venv" ] && [ -d "$path" ]; then rm -rf "$path"; echo "gone=$path"; fi ;;
  esac
done <"$dest/MANIFEST"
rm -rf "$dest" "$dest.new" "$dest.old" "$(dirname "$dest")/tokamak-kit.tar.gz.part" "$(dirname "$dest")/tokamak-wheels"
echo "gone=$dest"
)SH";

std::string this_arch() {
  utsname u{};
  return ::uname(&u) == 0 ? u.machine : "";
}

std::string value_of(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return {};
}

// The last line of TEXT that holds WORD ("" when none).
std::string line_with(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string line, found;
  while (std::getline(in, line))
    if (line.find(word) != std::string::npos) found = line;
  return found;
}

// "tokamak" when a non-interactive login there finds the install's own link by that name, else the wrapper's path.
std::string command_there(const RemoteHost& host, const std::string& dest) {
  const std::string out = host.run(
      {"sh", "-c", "echo \"found=$(command -v tokamak)\"; sed -n 's/^link /link=/p' \"$1/MANIFEST\"; true", "where", dest});
  const std::string found = value_of(out, "found");
  return !found.empty() && found == value_of(out, "link") ? "tokamak" : dest + "/tokamak";
}

// torch 2.11 for the install: the python named, or the install's venv (made, then filled by pip from PyPI or from
// wheels pushed here). Returns the python whose torch the wrapper uses.
std::string provide_torch(const RemoteHost& host, const HostFacts& f, const InstallOptions& o,
                          const InstallProgress& progress) {
  if (!o.torch_python.empty()) return o.torch_python;
  const std::string venv = install_venv(f.home), python = venv + "/bin/python";
  if (f.venv_torch.rfind("2.11", 0) == 0) return python;  // kept from an earlier install
  if (!f.own_venv) {
    progress("making torch's venv at " + venv, 0, 0);
    host.run({"python3", "-m", "venv", venv}, {}, 300);
  }
  std::vector<std::string> pip = {python, "-m", "pip", "install", "--progress-bar", "off", "--disable-pip-version-check"};
  if (!o.wheels.empty()) {
    const std::string there = f.home + "/.local/lib/tokamak-wheels";
    for (const auto& e : std::filesystem::directory_iterator(o.wheels)) {
      if (e.path().extension() != ".whl") continue;
      const std::string name = e.path().filename().string();
      progress("pushing " + name, 0, 0);
      push_file(host, e.path().string(), sha256_of_file(e.path().string()), there + "/" + name,
                [&](uint64_t done, uint64_t total) {
                  progress("pushing " + name, static_cast<int64_t>(done), static_cast<int64_t>(total));
                });
    }
    pip.insert(pip.end(), {"--no-index", "--find-links", there});
  }
  pip.push_back("torch==2.11.0");
  progress(o.wheels.empty() ? "installing torch 2.11 from PyPI on the host (about 4 GB with CUDA's libraries)"
                            : "installing torch 2.11 from the pushed wheels",
           0, 0);
  host.run(pip, {}, 3600);
  if (!o.wheels.empty()) host.run({"rm", "-rf", f.home + "/.local/lib/tokamak-wheels"});
  return python;
}

// An install over one of other formats must not leave runs behind that the new build cannot read: a newer one is
// kept (install that version here instead), and an older one only while none of its runs is live.
void check_upgrade(const RemoteHost& host, const HostFacts& f) {
  if (f.installed.empty()) return;
  const OtherBuild there = parse_version_line(f.installed);
  if (format_mismatch(there).empty()) return;
  const OtherBuild here = parse_version_line(version_line());
  if (version_less(here.version, there.version))
    throw Error("the host has Tokamak " + there.version + ", newer than this " + here.version + " (" +
                    format_mismatch(there) + ")",
                "install Tokamak " + there.version + " here, or run `tokamak remote uninstall` first");
  const auto live = host.with_tokamak(install_dir(f.home) + "/tokamak").runs(true);
  if (!live.empty())
    throw Error("the host has " + std::to_string(live.size()) + " run(s) training under Tokamak " + there.version +
                    ", whose formats differ from this " + here.version + "'s (" + format_mismatch(there) + ")",
                "wait for them to end or stop them, then install");
}

}  // namespace

std::string install_dir(const std::string& home) { return home + "/.local/lib/tokamak"; }
std::string install_venv(const std::string& home) { return home + "/.local/lib/tokamak-venv"; }

InstallResult install_on_host(const RemoteHost& host, const InstallOptions& o, const InstallProgress& progress) {
  InstallResult r;
  progress("looking at " + host.target().spec(), 0, 0);
  const HostFacts f = parse_host_facts(host.run({"sh", "-c", host_facts_script(o.torch_python)}, {}, 60));
  if (f.home.empty()) throw Error("the host did not say its home folder", "check that it runs a POSIX sh");
  const EngineKit kit = engine_kit(o.programs_dir, [&](const std::string& s) { progress(s, 0, 0); });
  InstallNeeds needs;
  needs.arch = this_arch();
  needs.glibc = kit.glibc, needs.glibcxx = kit.glibcxx;
  needs.kit_kb = kit.unpacked_kb + kit.bytes / 1024;
  const bool torch_there = !o.torch_python.empty() || f.venv_torch.rfind("2.11", 0) == 0;
  needs.torch_kb = torch_there ? 0 : 4500 * 1024;
  needs.needs_venv = o.torch_python.empty() && !f.own_venv;
  needs.has_wheels = !o.wheels.empty();
  needs.torch_python = o.torch_python;
  if (const std::string why = install_problem(f, needs); !why.empty()) throw Error(why);

  const std::string dest = install_dir(f.home);
  if (f.installed == kit.version && f.installed_kit == kit.sha256 && o.torch_python.empty() == f.own_venv) {
    r.command = command_there(host, dest);
    r.version = parse_version_line(f.installed).version;
    r.summary = "nothing to do: " + host.target().spec() + " has this Tokamak " + r.version + " already (" + r.command +
                ")";
    return r;
  }
  check_upgrade(host, f);

  r.changed = true;
  const std::string tarball = f.home + "/.local/lib/tokamak-kit.tar.gz";
  const std::string pushing = "pushing the engine kit (" + std::to_string(kit.bytes / (1024 * 1024)) + " MB)";
  r.resumed_at = push_file(host, kit.path, kit.sha256, tarball, [&](uint64_t done, uint64_t total) {
    progress(pushing, static_cast<int64_t>(done), static_cast<int64_t>(total));
  });
  const std::string python = provide_torch(host, f, o, progress);
  progress("unpacking the kit and writing the wrapper", 0, 0);
  const std::string venv = o.torch_python.empty() ? install_venv(f.home) : "";
  host.run({"sh", "-c", kInstallScript, "install", dest, tarball, kit.version, kit.sha256,
                                    python, venv},
                                   {}, 600);
  r.command = command_there(host, dest);

  progress("checking `tokamak --version` there", 0, 0);
  r.version = host.with_tokamak(r.command).test_connection(120).version;
  if (o.smoke) {
    progress("training 3 steps there", 0, 0);
    const std::string log = host.run({"sh", "-c", "\"$1\" train --set train.steps=3 --set eval.every=0 "
                                                  "--set sample.every=-1 --set name=install-check 2>&1",
                                      "smoke", r.command},
                                     {}, 900);
    r.smoke = line_with(log, "step 3");
    if (r.smoke.empty())
      throw Error("Tokamak is installed on " + host.target().spec() + ", but its 3-step run did not reach step 3: " +
                      line_with(log, "error"),
                  "run `" + r.command + " train --set train.steps=3` there to see why");
  }
  const std::string before = parse_version_line(f.installed).version;
  const std::string what = f.installed.empty()     ? "installed Tokamak " + r.version
                           : before == r.version   ? "installed this build of Tokamak " + r.version + " over another"
                                                   : "upgraded Tokamak " + before + " to " + r.version;
  r.summary = what + " on " + host.target().spec() + " as " + r.command +
              (r.command == "tokamak" ? "" : " (not on a non-interactive login's PATH there: pass it as --tokamak)");
  return r;
}

std::string uninstall_from_host(const RemoteHost& host) {
  const std::string home = host.run({"sh", "-c", "echo \"$HOME\""});
  const std::string h = home.substr(0, home.find('\n'));
  const std::string out = host.run({"sh", "-c", kUninstallScript, "uninstall", install_dir(h), install_venv(h)}, {}, 300);
  if (out.rfind("none", 0) == 0)
    return "nothing to remove: " + host.target().spec() + " has no Tokamak that `tokamak remote install` put there";
  std::string gone;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("gone=", 0) == 0) gone += (gone.empty() ? "" : ", ") + line.substr(5);
  return "removed from " + host.target().spec() + ": " + gone;
}

}  // namespace tokamak
