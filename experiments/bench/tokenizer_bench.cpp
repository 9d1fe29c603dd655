// Tokenizer throughput: Tokamak's GPT-2 encoder on one file, single-threaded and with encode_parallel,
// best of several runs, in MB/s of input. Built and run by tokenizer_bench.sh next to tiktoken's numbers.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace {

template <class F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string path = argc > 1 ? argv[1] : tokamak::asset_path("jargon.txt");
    const int threads = argc > 2 ? std::atoi(argv[2]) : static_cast<int>(std::thread::hardware_concurrency());
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
    const std::string text = tokamak::read_file(path);
    const tokamak::Tokenizer& tok = tokamak::Tokenizer::gpt2();
    const double mb = text.size() / 1e6;
    size_t n = 0;
    const double one = best_seconds(repeats, [&] { n = tok.encode(text).size(); });
    std::printf("tokamak encode          1 thread : %7.1f MB/s  (%zu tokens, %.1f ms)\n", mb / one, n, one * 1e3);
    for (int t = 1; t <= threads; t *= 2) {
      const double par = best_seconds(repeats, [&] { n = tok.encode_parallel(text, t).size(); });
      std::printf("tokamak encode_parallel %d thread%s: %7.1f MB/s  (%zu tokens, %.1f ms)\n", t, t > 1 ? "s" : " ",
                  mb / par, n, par * 1e3);
      if (t < threads && t * 2 > threads) t = threads / 2;  // end on `threads` itself
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
