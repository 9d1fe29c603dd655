// GGUF writing (see gguf_file.h). The layout follows ggml's gguf.cpp: every string is a uint64 length and its
// bytes, an array is its element type, a uint64 count and the elements, and tensor offsets count from the start of
// the data section.
#include "engine/torch/model/gguf_file.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {
namespace {

constexpr uint64_t kAlignment = 32;  // general.alignment's default
constexpr int64_t kQ8Block = 32;

// GGUF's value types.
enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9 };

std::string errno_now() { return std::strerror(errno); }

// Appends little-endian values and flushes to the file every few MB, so a 6 GB model never sits in memory twice.
class Out {
 public:
  Out(int fd, std::string path) : fd_(fd), path_(std::move(path)) { buf_.reserve(kFlushAt + 64); }
  template <class T>
  void pod(T v) {
    const char* p = reinterpret_cast<const char*>(&v);  // x86-64 and aarch64 are little-endian, as GGUF is
    bytes(p, sizeof v);
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    if (n >= kFlushAt) {
      flush();
      write_all(c, n);
      written_ += n;
      return;
    }
    buf_.insert(buf_.end(), c, c + n);
    written_ += n;
    if (buf_.size() >= kFlushAt) flush();
  }
  void pad() {
    static const char zeros[kAlignment] = {};
    bytes(zeros, (kAlignment - written_ % kAlignment) % kAlignment);
  }
  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }
  uint64_t written() const { return written_; }

 private:
  static constexpr size_t kFlushAt = 4 << 20;
  void write_all(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw Error("cannot write '" + path_ + "': " + errno_now(), "check the disk's free space");
      p += w, n -= static_cast<size_t>(w);
    }
  }
  int fd_;
  std::string path_;
  std::vector<char> buf_;
  uint64_t written_ = 0;
};

void write_value(Out& out, const GgufWriter::Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint32_t>) out.pod(kU32), out.pod(x);
        else if constexpr (std::is_same_v<T, int32_t>) out.pod(kI32), out.pod(x);
        else if constexpr (std::is_same_v<T, float>) out.pod(kF32), out.pod(x);
        else if constexpr (std::is_same_v<T, bool>) out.pod(kBool), out.pod<uint8_t>(x ? 1 : 0);
        else if constexpr (std::is_same_v<T, std::string>) out.pod(kString), out.str(x);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          out.pod(kArray), out.pod(kString), out.pod<uint64_t>(x.size());
          for (const std::string& s : x) out.str(s);
        } else {
          out.pod(kArray), out.pod(kI32), out.pod<uint64_t>(x.size());
          out.bytes(x.data(), x.size() * sizeof(int32_t));
        }
      },
      v);
}

void write_tensor_bytes(Out& out, const at::Tensor& t, GgmlType type) {
  const at::Tensor f = t.detach().to(at::kCPU, at::kFloat).contiguous();
  if (type == GgmlType::kF32) return out.bytes(f.data_ptr(), f.nbytes());
  if (type == GgmlType::kF16 || type == GgmlType::kBF16) {  // round to nearest even, as ggml's converters do
    const at::Tensor h = f.to(type == GgmlType::kF16 ? at::kHalf : at::kBFloat16);
    return out.bytes(h.data_ptr(), h.nbytes());
  }
  std::vector<uint8_t> q(ggml_bytes(type, f.numel()));
  quantize_q8_0(f.data_ptr<float>(), f.numel(), q.data());
  out.bytes(q.data(), q.size());
}

// Opens an unnamed file in PATH's folder; -1 where the filesystem has no O_TMPFILE.
std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

int open_unnamed(const std::string& path) {
  const std::string dir = folder_of(path);
  return ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
}

// Gives the unnamed file its name: linked under a fresh temporary name, then renamed onto PATH (linkat will not
// replace a file that is there).
void name_unnamed(int fd, const std::string& path) {
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp-%d-%08x", static_cast<int>(::getpid()), rd());
  const std::string tmp = path + suffix;
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0)
    throw Error("cannot write '" + path + "': " + errno_now(), "check that its folder is writable");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_now();
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + why, "check that its folder is writable");
  }
  const int dfd = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) ::fsync(dfd), ::close(dfd);  // the new name survives a power cut too
}

}  // namespace

uint64_t ggml_bytes(GgmlType type, int64_t n) {
  switch (type) {
    case GgmlType::kF32:
      return 4 * static_cast<uint64_t>(n);
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return 2 * static_cast<uint64_t>(n);
    case GgmlType::kQ8_0:
      return static_cast<uint64_t>(n / kQ8Block) * (2 + kQ8Block);
  }
  return 0;
}

bool ggml_fits(GgmlType type, int64_t row) { return type != GgmlType::kQ8_0 || row % kQ8Block == 0; }

void quantize_q8_0(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / kQ8Block; ++b, x += kQ8Block, out += 2 + kQ8Block) {
    float amax = 0;
    for (int64_t j = 0; j < kQ8Block; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.f, id = d != 0 ? 1.f / d : 0.f;
    const at::Half h(d);
    std::memcpy(out, &h.x, 2);
    for (int64_t j = 0; j < kQ8Block; ++j)
      out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[j] * id)));  // half away from zero
  }
}

void GgufWriter::set(const std::string& key, Value value) {
  for (auto& [k, v] : kv_)
    if (k == key) return void(v = std::move(value));
  kv_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, const at::Tensor& tensor, GgmlType type) {
  if (!ggml_fits(type, tensor.size(-1)))
    throw Error("tensor " + name + " has rows of " + std::to_string(tensor.size(-1)) + " values, not a multiple of 32",
                "store it as f32, f16 or bf16");
  tensors_.push_back({name, tensor, type});
}

void GgufWriter::write(const std::string& path) const {
  auto write_to = [&](int fd, const std::string& shown) {
    Out out(fd, shown);
    out.bytes("GGUF", 4);
    out.pod<uint32_t>(3);
    out.pod<uint64_t>(tensors_.size());
    out.pod<uint64_t>(kv_.size());
    for (const auto& [key, value] : kv_) out.str(key), write_value(out, value);
    uint64_t offset = 0;
    for (const Tensor& t : tensors_) {
      out.str(t.name);
      out.pod<uint32_t>(static_cast<uint32_t>(t.data.dim()));
      for (int64_t d = t.data.dim() - 1; d >= 0; --d) out.pod<uint64_t>(t.data.size(d));  // innermost first
      out.pod(static_cast<uint32_t>(t.type));
      out.pod<uint64_t>(offset);
      offset += ggml_bytes(t.type, t.data.numel());
      offset += (kAlignment - offset % kAlignment) % kAlignment;
    }
    out.pad();
    for (const Tensor& t : tensors_) write_tensor_bytes(out, t.data, t.type), out.pad();
    out.flush();
    if (::fsync(fd) != 0) throw Error("cannot write '" + shown + "': fsync: " + errno_now(), "check the disk");
  };
  const int fd = open_unnamed(path);
  if (fd < 0) {  // no O_TMPFILE here: a named temporary, renamed when whole
    return write_atomically(path, [&](const std::string& tmp) {
      const int f = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (f < 0) throw Error("cannot write '" + path + "': " + errno_now(), "check that its folder is writable");
      try {
        write_to(f, path);
      } catch (...) {
        ::close(f);
        throw;
      }
      ::close(f);
    });
  }
  try {
    write_to(fd, path);
    name_unnamed(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace tokamak
