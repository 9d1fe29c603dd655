// Fuzz target: `tokamak tokenize --decode`, i.e. parse_token_ids on any text, then decoding the ids. Errors
// are allowed (tokamak::Error for a word that is not an id, or an id outside the vocabulary); crashes are
// not. Printing the parsed ids and parsing them again must give the same ids.
#include <cstdint>
#include <string>

#include "engine/base/data/token_ids.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tokenizer& tok = Tokenizer::gpt2();
  std::vector<int32_t> ids;
  try {
    ids = parse_token_ids(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const Error&) {
    return 0;
  }
  std::string printed;
  for (int32_t id : ids) printed += std::to_string(id) + " ";
  fuzz::require(parse_token_ids(printed) == ids, "ids printed and parsed again differ");
  try {
    (void)tok.decode(ids);
  } catch (const Error&) {}
  return 0;
}
