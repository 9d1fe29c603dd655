#include "engine/fleet/remote/engine_kit.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/fleet/remote/remote_host.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/process.h"
#include "engine/base/util/sha256.h"
#include "engine/base/util/version.h"

namespace tokamak {
namespace {

// Run here with bash: PROGRAMS ASSET... OUT. The libraries are what ldd resolves, less those the host must
// bring itself (the same rule as scripts/gpu-kit.sh's); the floors are the newest symbol versions asked for.
const char kPackScript[] = R"SH(
set -euo pipefail
programs=$1 tiktoken=$2 jargon=$3 out=$4
stage=$(mktemp -d "${TMPDIR:-/tmp}/tokamak-engine-kit-XXXXXX")
trap 'rm -rf "$stage"' EXIT
kit=$stage/tokamak-kit
mkdir -p "$kit/bin" "$kit/lib" "$kit/share/tokamak/assets"
cp "$programs/tokamak" "$programs/tokamak-engine" "$kit/bin/"
skip='/torch/lib/|/nvidia/|libcuda\.|libcudart|libnv|libcublas|libcudnn|libnccl|libcusparse|libcufft|libcurand|libcusolver|libcupti'
skip+='|/libc\.so|/libm\.so|/libmvec\.so|/libdl\.so|/libpthread\.so|/librt\.so|/libutil\.so|/libresolv\.so|/libanl\.so|/libnss_|/ld-linux|linux-vdso'
skip+='|/libstdc\+\+\.so|/libgcc_s\.so'
for b in "$kit"/bin/*; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | grep -Ev "$skip" |
  while read -r lib; do cp -L "$lib" "$kit/lib/"; done
if ldd "$kit/bin/tokamak-engine" | grep -q "not found"; then
  echo "a library of tokamak-engine is not found here: $(ldd "$kit/bin/tokamak-engine" | grep 'not found' | head -1)" >&2
  exit 3
fi
strip --strip-unneeded "$kit"/bin/* "$kit"/lib/* 2>/dev/null || true
cp "$tiktoken" "$jargon" "$kit/share/tokamak/assets/"  # where an installed tokamak looks (files.h)
floor() { for f in "$kit"/bin/* "$kit"/lib/*; do objdump -T "$f" 2>/dev/null; done | grep -o "$1_[0-9.]*" |
  sed "s/$1_//" | sort -uV | tail -1; }
echo "glibc=$(floor GLIBC)"
echo "glibcxx=$(floor GLIBCXX)"
echo "unpacked_kb=$(du -sk "$kit" | cut -f1)"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out.tmp" tokamak-kit
mv "$out.tmp" "$out"
)SH";

std::string field(const std::string& text, const std::string& key) {
  const size_t at = text.find(key + "=");
  if (at == std::string::npos) return {};
  const size_t end = text.find('\n', at);
  return text.substr(at + key.size() + 1, end == std::string::npos ? std::string::npos : end - at - key.size() - 1);
}

}  // namespace

EngineKit engine_kit(const std::string& programs_dir, const std::function<void(const std::string&)>& progress) {
  for (const char* p : {"tokamak", "tokamak-engine"})
    if (!path_exists(programs_dir + "/" + p))
      throw Error("no " + std::string(p) + " in " + programs_dir + " to install from",
                  "run the tokamak that was built beside tokamak-engine (build/app/tokamak)");
  // One kit per build: named by the programs' own hashes, so a rebuild packs again and a second install does not.
  const std::string id = sha256_of_file(programs_dir + "/tokamak-engine").substr(0, 12) +
                         sha256_of_file(programs_dir + "/tokamak").substr(0, 4);
  const std::string base = cache_dir() + "/kits/tokamak-kit-" + id;
  EngineKit kit;
  kit.path = base + ".tar.gz";
  if (path_exists(kit.path) && path_exists(base + ".json")) {
    const nlohmann::json j = nlohmann::json::parse(read_file(base + ".json"), nullptr, false);
    if (j.is_object() && j.value("path", "") == kit.path) {
      kit.sha256 = j.value("sha256", ""), kit.version = j.value("version", "");
      kit.bytes = j.value("bytes", int64_t{0}), kit.unpacked_kb = j.value("unpacked_kb", int64_t{0});
      kit.glibc = j.value("glibc", ""), kit.glibcxx = j.value("glibcxx", "");
      if (!kit.sha256.empty() && kit.sha256 == sha256_of_file(kit.path)) return kit;
    }
  }
  progress("packing the engine kit (tokamak, tokamak-engine, their libraries and the assets) into " + kit.path);
  const ProcessResult r = run_process({"bash", "-c", kPackScript, "pack", programs_dir, asset_path("gpt2.tiktoken"),
                                       asset_path("jargon.txt"), kit.path},
                                      {}, 900);
  if (r.code != 0) {
    const std::string why = r.err.empty() ? "exit " + std::to_string(r.code) : r.err.substr(0, r.err.find('\n'));
    throw Error("packing the engine kit failed: " + why, "ldd, strip, objdump, tar and gzip must be installed here");
  }
  kit.sha256 = sha256_of_file(kit.path);
  kit.version = version_line();
  kit.bytes = static_cast<int64_t>(std::filesystem::file_size(kit.path));
  kit.unpacked_kb = std::atoll(field(r.out, "unpacked_kb").c_str());
  kit.glibc = field(r.out, "glibc"), kit.glibcxx = field(r.out, "glibcxx");
  const nlohmann::json j = {{"path", kit.path},       {"sha256", kit.sha256},           {"version", kit.version},
                            {"bytes", kit.bytes},     {"unpacked_kb", kit.unpacked_kb}, {"glibc", kit.glibc},
                            {"glibcxx", kit.glibcxx}};
  write_file_atomically(base + ".json", j.dump(1) + "\n");
  return kit;
}

uint64_t push_file(const RemoteHost& host, const std::string& local, const std::string& sha256,
                   const std::string& remote_path, const std::function<void(uint64_t, uint64_t)>& progress) {
  const uint64_t total = std::filesystem::file_size(local);
  const std::string part = remote_path + ".part";
  // What a cut push left: its size, and whether those bytes are the start of this file (by their sha256).
  uint64_t at = 0;
  const std::string size = host.run({"sh", "-c", "mkdir -p \"$(dirname \"$1\")\" && stat -c %s \"$1\" 2>/dev/null || echo 0",
                                     "size", part});
  at = std::strtoull(size.c_str(), nullptr, 10);
  if (at > total) at = 0;
  std::ifstream in(local, std::ios::binary);
  if (!in) throw Error("cannot read " + local, "pack the kit again");
  if (at > 0) {
    const std::string there =
        host.run({"sh", "-c", "head -c \"$2\" \"$1\" | sha256sum | cut -d' ' -f1", "head", part, std::to_string(at)}, {},
                 300);
    const ProcessResult mine =
        run_process({"sh", "-c", "head -c \"$2\" \"$1\" | sha256sum | cut -d' ' -f1", "head", local, std::to_string(at)});
    const std::string here = mine.out.substr(0, 64);
    if (there.substr(0, 64) != here) at = 0;  // not this file's bytes: start again
    in.seekg(static_cast<std::streamoff>(at));
  }
  const uint64_t resumed = at;
  if (at == 0) host.run({"sh", "-c", ": > \"$1\"", "truncate", part});
  constexpr uint64_t kPiece = 8ull << 20;  // a lost connection loses at most one piece
  std::string piece;
  progress(at, total);
  while (at < total) {
    piece.resize(std::min(kPiece, total - at));
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    host.run({"sh", "-c", "cat >> \"$1\"", "append", part}, piece, 300);
    at += piece.size();
    progress(at, total);
  }
  const std::string there = host.run({"sh", "-c", "sha256sum \"$1\" | cut -d' ' -f1", "sum", part}, {}, 300);
  if (there.substr(0, 64) != sha256) {
    host.run({"rm", "-f", part});
    throw Error("the kit arrived at the host damaged (its sha256 differs)", "run the install again: it starts afresh");
  }
  host.run({"mv", "-f", part, remote_path});
  return resumed;
}

}  // namespace tokamak
