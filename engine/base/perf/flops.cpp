// FLOPs per token and the peak-FLOP/s table (see flops.h).
#include "engine/base/perf/flops.h"

namespace tokamak {

double flops_per_token(int64_t n, int64_t n_layer, int64_t n_embd, int64_t context) {
  return 6.0 * static_cast<double>(n) + 12.0 * n_layer * n_embd * static_cast<double>(context);
}

double peak_flops(const std::string& name, const std::string& precision) {
  struct Peak {
    const char* match;
    double fp32, tf32, half;  // dense TFLOP/s from the datasheets
  };
  static const Peak table[] = {
      {"H200", 67, 494.5, 989}, {"H100", 67, 494.5, 989},  {"A100", 19.5, 156, 312},  {"L40S", 91.6, 183, 362},
      {"A10", 31.2, 62.5, 125}, {"4090", 82.6, 82.6, 165}, {"V100", 15.7, 15.7, 125},
  };
  for (const Peak& p : table) {
    if (name.find(p.match) == std::string::npos) continue;
    double tflops = precision == "fp32" ? p.fp32 : precision == "tf32" ? p.tf32 : p.half;
    return tflops * 1e12;
  }
  return -1;
}

}  // namespace tokamak
