// The safetensors format (https://huggingface.co/docs/safetensors), read and written by the project so that a
// checkpoint is data only: an 8-byte little-endian header length, a JSON header {name: {dtype, shape,
// data_offsets}} with an optional "__metadata__" of string → string, then the raw little-endian bytes.
// No LibTorch here: the header parser is fuzzed on its own, and `tokamak` (the light front) reads headers.
// Every size and offset is checked against the file before anything is allocated from it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tokamak {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // "F32", "BF16", "I64", "U8", ... (dtype_bytes() knows them)
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range relative to the start of the data section
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;       // in file order
  std::map<std::string, std::string> metadata;  // "__metadata__"
  uint64_t data_start = 0;                      // 8 + header length: where the data section begins
  const SafetensorsTensor* find(const std::string& name) const;
};

// Bytes per element of a safetensors dtype; 0 when the dtype is unknown.
size_t safetensors_dtype_bytes(const std::string& dtype);

// Parses the header at the start of `data`, whose `size` bytes are the whole file (offsets are checked
// against it). Throws tokamak::Error with a one-line reason on anything malformed: short input, a header
// length past the end, invalid JSON, unknown dtypes, negative or overflowing shapes, offsets outside the data
// or not matching the shape, overlapping tensors, non-string metadata.
SafetensorsHeader parse_safetensors_header(const char* data, size_t size);
// The same, when only the first `size` bytes of a file of `file_size` bytes are at hand (header reads).
SafetensorsHeader parse_safetensors_header(const char* data, size_t size, uint64_t file_size);

// Reads and parses only the header of a file (no tensor bytes). `what` names the file in errors.
SafetensorsHeader read_safetensors_header(const std::string& path);
// Reads tensor `t`'s bytes into `out` (which holds t.end - t.begin bytes).
void read_safetensors_bytes(const std::string& path, const SafetensorsHeader& header, const SafetensorsTensor& t,
                            void* out);

// One tensor to write: its bytes are borrowed for the duration of the call.
struct SafetensorsBlob {
  std::string name, dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t bytes = 0;
};

// Writes a safetensors file durably: a unique temporary name in the same folder, fsync of the file, rename
// over `path`, fsync of the folder. A crash leaves either the old file or the new one (and perhaps a
// temporary, which remove_stale_temporaries() cleans).
void write_safetensors(const std::string& path, const std::vector<SafetensorsBlob>& tensors,
                       const std::map<std::string, std::string>& metadata);

// Temporaries are named NAME.tmp-PID-RANDOM; this removes those in `dir` whose process is gone.
// Returns how many were removed.
int remove_stale_temporaries(const std::string& dir);

// CRC-32 (zlib) of a byte range, as 8 hex digits: the per-part checksum of checkpoints.
std::string crc32_hex(const void* data, size_t size);

}  // namespace tokamak
