// Fuzz target: the safetensors header parser (the "checkpoints" work: parse_safetensors_header(const char*,
// size_t) in the core). Built only when a core header declares it (tests/fuzz/CMakeLists.txt looks), so this
// file compiles on branches without it. Any input: a tokamak::Error or a parsed header, never a crash.
#include <cstdint>

#include TOKAMAK_SAFETENSORS_HEADER
#include "engine/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tokamak::parse_safetensors_header(reinterpret_cast<const char*>(data), size);
  } catch (const tokamak::Error&) {}
  return 0;
}
