// safetensors header parsing and durable writing (see safetensors.h).
#include "engine/base/util/safetensors.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

// safetensors' own reader refuses headers over 100 MB; a header that long is damage, not a model.
constexpr uint64_t kMaxHeader = 100ull * 1024 * 1024;
const char* const kDamaged = "the file is damaged or is not a safetensors file";

[[noreturn]] void bad(const std::string& why) { throw Error("safetensors header: " + why, kDamaged); }

uint64_t read_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

SafetensorsTensor parse_entry(const std::string& name, const nlohmann::json& e, uint64_t data_size) {
  if (!e.is_object()) bad("entry '" + name + "' is not an object");
  SafetensorsTensor t;
  t.name = name;
  auto dtype = e.find("dtype");
  if (dtype == e.end() || !dtype->is_string()) bad("entry '" + name + "' has no dtype");
  t.dtype = dtype->get<std::string>();
  const size_t width = safetensors_dtype_bytes(t.dtype);
  if (width == 0) bad("entry '" + name + "' has unknown dtype '" + t.dtype + "'");
  auto shape = e.find("shape");
  if (shape == e.end() || !shape->is_array()) bad("entry '" + name + "' has no shape");
  uint64_t numel = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) bad("entry '" + name + "' has a shape that is not sizes");
    const auto dim = d.get<int64_t>();
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dim), &numel)) bad("entry '" + name + "' is too large");
    t.shape.push_back(dim);
  }
  auto offsets = e.find("data_offsets");
  if (offsets == e.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    bad("entry '" + name + "' has no data_offsets [begin, end]");
  t.begin = (*offsets)[0].get<uint64_t>();
  t.end = (*offsets)[1].get<uint64_t>();
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(width), &bytes)) bad("entry '" + name + "' is too large");
  if (t.begin > t.end || t.end > data_size)
    bad("entry '" + name + "' lies outside the file's " + std::to_string(data_size) + " data bytes (truncated?)");
  if (t.end - t.begin != bytes)
    bad("entry '" + name + "' has " + std::to_string(t.end - t.begin) + " bytes but its shape needs " +
        std::to_string(bytes));
  return t;
}

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const void* data, size_t size, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, std::min<size_t>(size, 1u << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const bool full = errno == ENOSPC || errno == EDQUOT;
      throw Error("cannot write '" + path + "': " + errno_text(),
                  full ? "free some disk space (or set checkpoint.dir elsewhere)" : "check the folder");
    }
    p += n, size -= static_cast<size_t>(n);
  }
}

}  // namespace

const SafetensorsTensor* SafetensorsHeader::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

size_t safetensors_dtype_bytes(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL") return 1;
  return 0;
}

SafetensorsHeader parse_safetensors_header(const char* data, size_t size) {
  return parse_safetensors_header(data, size, size);
}

SafetensorsHeader parse_safetensors_header(const char* data, size_t size, uint64_t file_size) {
  if (size < 8 || file_size < 8)
    bad("the file has " + std::to_string(file_size) + " bytes, fewer than the 8 of its length");
  const uint64_t n = read_le64(data);
  if (n > kMaxHeader) bad("header length " + std::to_string(n) + " is implausible");
  if (8 + n > file_size) bad("header length " + std::to_string(n) + " runs past the end of the file (truncated?)");
  if (8 + n > size) bad("header of " + std::to_string(n) + " bytes was not read whole");
  SafetensorsHeader h;
  h.data_start = 8 + n;
  const uint64_t data_size = file_size - h.data_start;
  nlohmann::json j = nlohmann::json::parse(data + 8, data + 8 + n, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) bad("header is not valid JSON");
  if (!j.is_object()) bad("header is not a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) bad("__metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) bad("__metadata__ value of '" + m.key() + "' is not a string");
        h.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    h.tensors.push_back(parse_entry(it.key(), *it, data_size));
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < h.tensors.size(); ++i)
    if (h.tensors[i].begin < h.tensors[i - 1].end)
      bad("entries '" + h.tensors[i - 1].name + "' and '" + h.tensors[i].name + "' overlap");
  return h;
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read '" + path + "': " + errno_text(), "check the path and its permissions");
  struct stat st {};
  ::fstat(fd, &st);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  char len[8] = {};
  const ssize_t got = ::pread(fd, len, 8, 0);
  std::string buf;
  if (got == 8) {
    const uint64_t n = read_le64(len);
    // Allocate only once the length is known to fit the file (and the parser's own limit).
    if (n <= kMaxHeader && 8 + n <= file_size) {
      buf.resize(8 + n);
      if (::pread(fd, buf.data(), buf.size(), 0) != static_cast<ssize_t>(buf.size())) buf.assign(len, 8);
    } else {
      buf.assign(len, 8);
    }
  } else if (got > 0) {
    buf.assign(len, static_cast<size_t>(got));
  }
  ::close(fd);
  return parse_safetensors_header(buf.data(), buf.size(), file_size);
}

void read_safetensors_bytes(const std::string& path, const SafetensorsHeader& h, const SafetensorsTensor& t,
                            void* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read '" + path + "': " + errno_text(), "check the path and its permissions");
  char* p = static_cast<char*>(out);
  uint64_t offset = h.data_start + t.begin, left = t.end - t.begin;
  while (left > 0) {
    ssize_t n = ::pread(fd, p, std::min<uint64_t>(left, 1u << 30), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw Error("cannot read tensor '" + t.name + "' of '" + path + "' (file shrank while reading?)", kDamaged);
    }
    p += n, offset += static_cast<uint64_t>(n), left -= static_cast<uint64_t>(n);
  }
  ::close(fd);
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsBlob>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned (the format allows it)
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((static_cast<uint64_t>(json.size()) >> (8 * i)) & 0xff);

  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp-%d-%08x", static_cast<int>(::getpid()), rd());
  const std::string tmp = path + suffix;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot write '" + path + "': " + errno_text(), "check that its folder is writable");
  try {
    write_all(fd, len, 8, path);
    write_all(fd, json.data(), json.size(), path);
    for (const auto& t : tensors) write_all(fd, t.data, t.bytes, path);
    if (::fsync(fd) != 0) throw Error("cannot write '" + path + "': fsync: " + errno_text(), "check the disk");
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + why, "check that its folder is writable");
  }
  // The rename is durable only once the folder's entry is on disk.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

int remove_stale_temporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const size_t at = name.rfind(".tmp-");
    if (at == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    if (::unlink((dir + "/" + name).c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

std::string crc32_hex(const void* data, size_t size) {
  const uLong crc = crc32_z(crc32_z(0L, Z_NULL, 0), static_cast<const Bytef*>(data), size);
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc));
  return buf;
}

}  // namespace tokamak
