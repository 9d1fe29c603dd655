// Fuzz target: the shard reader and the window sampler. The input's first 8 bytes choose the sampler's
// options (batch, context, validation fraction, ranks); the rest is the shard file as found on disk (header
// and tokens, possibly damaged). A bad shard must be a tokamak::Error; every window the sampler hands out
// must lie inside the shard (ASan reads each token of it).
#include <cstdint>
#include <cstring>

#include "engine/base/data/loader_sampling.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  SamplerOptions o;
  o.batch_size = 1 + data[0] % 8;
  o.context = 1 + data[1] % 64;
  o.val_fraction = data[2] / 256.0;
  o.world_size = 1 + data[3] % 4;
  o.rank = data[4] % o.world_size;
  const uint64_t seed = data[5] | (uint64_t(data[6]) << 8);
  const bool split_val = data[7] & 1;
  const std::string& path = fuzz::write_input(data + 8, size - 8, ".bin");
  try {
    MappedShard shard(path);
    std::vector<Segment> train{{shard.tokens(), shard.size()}}, val;
    if (split_val && shard.size() > 2) {
      train[0].size = shard.size() / 2;
      val.push_back({shard.tokens() + shard.size() / 2, shard.size() - shard.size() / 2});
    }
    WindowSampler sampler("fuzz", train, val, o);
    uint64_t sum = 0;
    const uint16_t* end = shard.tokens() + shard.size();
    for (uint64_t s = seed; s < seed + 4; ++s)
      for (const uint16_t* w : sampler.train(s)) {
        fuzz::require(w >= shard.tokens() && w + o.context + 1 <= end, "train window outside the shard");
        for (int64_t k = 0; k <= o.context; ++k) sum += w[k];
      }
    if (sampler.has_val())
      for (int64_t i = 0; i < 3; ++i)
        for (const uint16_t* w : sampler.val(i)) {
          fuzz::require(w >= shard.tokens() && w + o.context + 1 <= end, "val window outside the shard");
          for (int64_t k = 0; k <= o.context; ++k) sum += w[k];
        }
    (void)sum;
  } catch (const Error&) {}
  return 0;
}
