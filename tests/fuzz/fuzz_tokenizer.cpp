// Fuzz target: the GPT-2 tokenizer. Any bytes encode without crashing; ids are inside the vocabulary; and on
// valid UTF-8 the round trip is exact (decode(encode(s)) == s), the differential check that catches a wrong
// split or merge. The parallel encoder must agree with the serial one.
#include <cstdint>
#include <string>

#include "engine/base/data/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tokenizer& tok = Tokenizer::gpt2();
  const std::string text(reinterpret_cast<const char*>(data), size);
  EncodeStats stats;
  const std::vector<int32_t> ids = tok.encode(text, &stats);
  for (int32_t id : ids) fuzz::require(id >= 0 && id < tok.vocab_size(), "encode gave an id outside the vocabulary");
  const std::string back = tok.decode(ids);
  if (stats.invalid_utf8 == 0) fuzz::require(back == text, "decode(encode(s)) != s on valid UTF-8");
  fuzz::require(tok.encode_parallel(text, 3) == ids, "encode_parallel differs from encode");
  return 0;
}
