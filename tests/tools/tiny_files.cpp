// tiny-files: the tiny models as files (tests/support/tiny.h), for the suites that link no LibTorch (the studio's):
//   tiny-files checkpoint DIR STEP RUN_UID SEED   writes DIR/step_STEP.safetensors and prints its path
//   tiny-files hf DIR VOCAB_SIZE SEED             writes a Hugging Face GPT-2 folder at DIR
// The same functions as the LibTorch suites call in their own process (tests/support/tiny_files.cpp).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tests/support/tiny.h"

int main(int argc, char** argv) {
  try {
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "checkpoint" && argc == 6) {
      const std::string path = tokamak::test::save_tiny_checkpoint(argv[2], std::atoll(argv[3]), argv[4],
                                                                   std::strtoull(argv[5], nullptr, 10));
      std::printf("%s\n", path.c_str());
      return 0;
    }
    if (what == "hf" && argc == 5) {
      tokamak::test::export_tiny_hf(argv[2], std::atoll(argv[3]), std::strtoull(argv[4], nullptr, 10));
      return 0;
    }
    std::fprintf(stderr, "usage: tiny-files checkpoint DIR STEP RUN_UID SEED | hf DIR VOCAB_SIZE SEED\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiny-files: %s\n", e.what());
    return 1;
  }
}
