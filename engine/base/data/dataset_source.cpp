// Turns a dataset source (default corpus, file, folder, glob) into the list of files it stands for.
#include "engine/base/data/dataset_source.h"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "engine/base/data/hub_catalog.h"
#include "engine/base/data/jsonl.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace fs = std::filesystem;

namespace tokamak {
namespace {

const char* kSourceHint =
    "give a UTF-8 text file, a JSON-lines file (.jsonl), a folder of text files, llm.c .bin shards (a file, a folder "
    "or a glob such as "
    "'data/*.bin'), or leave data.path empty for the default corpus";

bool has_bin_extension(const fs::path& p) { return p.extension() == ".bin"; }

bool is_hidden(const fs::path& p) {
  std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

// Text has no NUL bytes; binary formats almost always have one near the start.
bool looks_binary(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char buf[8192];
  in.read(buf, sizeof buf);
  return std::find(buf, buf + in.gcount(), '\0') != buf + in.gcount();
}

// A file-name-safe short name for cache folders.
std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  if (out.size() > 40) out.resize(40);
  return out.empty() ? "dataset" : out;
}

// What a path is when it is neither a regular file nor a folder (it exists); nullptr for a regular file.
const char* special_file_kind(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec) return "unreadable";
  switch (st.type()) {
    case fs::file_type::regular:
      return nullptr;
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

std::string folder_name(const std::string& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

ResolvedSource from_glob(const std::string& pattern) {
  glob_t g{};
  int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
  ResolvedSource r;
  r.kind = ResolvedSource::Kind::kShards;
  r.label = pattern;
  r.stem = "glob";
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i)
      if (fs::is_regular_file(g.gl_pathv[i])) r.files.push_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  if (r.files.empty()) throw Error("dataset pattern '" + pattern + "' matches no files", kSourceHint);
  std::sort(r.files.begin(), r.files.end());  // glob sorts already; stated so the order is a contract
  return r;
}

ResolvedSource from_folder(const std::string& dir) {
  std::vector<fs::path> files;
  std::vector<std::string> skipped;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw Error("cannot read folder '" + dir + "': " + ec.message(), "check its permissions");
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error("cannot read folder '" + dir + "': " + ec.message(), "check its permissions");
    if (is_hidden(it->path())) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    std::error_code type_ec;
    const bool regular = it->is_regular_file(type_ec);  // follows symlinks: a loop or a dangling link fails
    if (type_ec) skipped.push_back("skipped '" + it->path().string() + "' in dataset folder: " + type_ec.message());
    else if (regular) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());

  ResolvedSource r;
  r.warnings = std::move(skipped);
  r.label = folder_name(dir) + "/";
  r.stem = sanitize(folder_name(dir));
  bool any_bin = std::any_of(files.begin(), files.end(), has_bin_extension);
  if (any_bin) {
    r.kind = ResolvedSource::Kind::kShards;
    for (const auto& f : files)
      if (has_bin_extension(f)) r.files.push_back(f.string());
    return r;
  }
  r.kind = ResolvedSource::Kind::kText;
  for (const auto& f : files)
    if (fs::file_size(f, ec) > 0 && !looks_binary(f)) r.files.push_back(f.string());
  if (r.files.empty())
    throw Error("folder '" + dir + "' has no text files or .bin shards (hidden, empty and binary files are skipped)",
                kSourceHint);
  return r;
}

}  // namespace

bool is_val_shard_name(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  return name.find("_val_") != std::string::npos || name.rfind("val_", 0) == 0;
}

ResolvedSource resolve_source(const std::string& source) {
  if (source.empty() || source == "default") {
    ResolvedSource r;
    r.label = "jargon.txt";
    r.stem = "jargon";
    r.files.push_back(asset_path("jargon.txt"));
    return r;
  }
  if (!path_exists(source)) {
    if (source.find_first_of("*?[") != std::string::npos) return from_glob(source);
    // A dataset fetched or prepared under data_dir()/datasets/ (`tokamak datasets` lists them), by its name
    // or as NAME/FILE (data.val_path=fineweb10B/fineweb_val_000000.bin).
    if (source[0] != '/' && source[0] != '.') {
      const std::string name = source.substr(0, source.find('/'));
      const std::string fetched = data_dir() + "/datasets/" + source;
      if (path_exists(fetched)) return resolve_source(fetched);
      if (find_hub_dataset(name) && !is_directory(data_dir() + "/datasets/" + name))
        throw Error("dataset '" + name + "' is not on this machine (" + data_dir() + "/datasets/" + name + ")",
                    "get it with `tokamak datasets get " + name + " --shards N` (docs/DATASETS.md)");
    }
    throw Error("dataset path '" + source + "' does not exist", kSourceHint);
  }
  if (is_directory(source)) return from_folder(source);
  if (const char* kind = special_file_kind(source))
    throw Error("dataset path '" + source + "' is " + kind + ", not a file", kSourceHint);

  ResolvedSource r;
  r.label = fs::path(source).filename().string();
  r.stem = sanitize(fs::path(source).stem().string());
  r.files.push_back(source);
  std::error_code ec;
  if (has_bin_extension(source) || looks_like_shard(source)) {
    r.kind = ResolvedSource::Kind::kShards;
    return r;
  }
  if (fs::file_size(source, ec) == 0)
    throw Error("dataset file '" + source + "' is empty", "give a file with some text in it");
  if (is_jsonl_path(source)) r.kind = ResolvedSource::Kind::kJsonl;
  return r;
}

}  // namespace tokamak
