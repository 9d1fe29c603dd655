// A GGUF file (version 3, little-endian), the format llama.cpp, Ollama and LM Studio load: a header, key-value
// metadata, a table of tensors (name, dimensions innermost first, ggml type, offset) and the tensors' bytes, each
// aligned to 32. This writer knows the four types an export offers: F32, F16, BF16 and Q8_0 (blocks of 32 values:
// an fp16 scale amax/127 and 32 int8s, rounded half away from zero, as ggml's reference quantizer does).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tokamak {

enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };

// Bytes of N values of a type (for Q8_0, N a multiple of 32).
uint64_t ggml_bytes(GgmlType type, int64_t n);
// True when a tensor whose innermost dimension is `row` can be stored as `type` (Q8_0 needs rows of 32s).
bool ggml_fits(GgmlType type, int64_t row);
// Q8_0 blocks of `n` floats (n a multiple of 32) into `out` (ggml_bytes(kQ8_0, n) bytes).
void quantize_q8_0(const float* x, int64_t n, uint8_t* out);

class GgufWriter {
 public:
  using Value =
      std::variant<uint32_t, int32_t, float, bool, std::string, std::vector<std::string>, std::vector<int32_t>>;
  void set(const std::string& key, Value value);
  // `tensor` is converted from its float values to `type` while the file is written; kept until then.
  void add_tensor(const std::string& name, const at::Tensor& tensor, GgmlType type);
  // Writes the whole file to `path` durably. It is never seen half-written, even if the process is killed:
  // the bytes go to an unnamed file in the same folder (O_TMPFILE) that gets its name only once complete.
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    at::Tensor data;
    GgmlType type;
  };
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace tokamak
