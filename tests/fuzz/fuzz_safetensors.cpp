// Fuzz target: the safetensors header parser (parse_safetensors_header, in the core), which every checkpoint
// and Hugging Face file passes before anything is allocated. Any input: a tokamak::Error or a parsed header,
// never a crash.
#include <cstdint>

#include "engine/base/util/safetensors.h"
#include "engine/base/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tokamak::parse_safetensors_header(reinterpret_cast<const char*>(data), size);
  } catch (const tokamak::Error&) {}
  return 0;
}
