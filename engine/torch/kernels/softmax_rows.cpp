// The CPU row kernel of the fused classifier (see softmax_rows.h). Each row: its maximum, exp(l - max) summed
// (kept in the row itself, or in a float scratch row for bf16, both small enough to stay in the core's L2 for
// the next pass), then the scaled probabilities minus the scaled one-hot target written back. Three passes
// over a row that stays in cache and one read and one write of it in memory, instead of the five full passes
// of log_softmax, exp, the target fix-up and the scaling done as separate ATen ops.
#include "engine/torch/kernels/softmax_rows.h"

#include <cmath>
#include <cstring>

#define TK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

namespace tokamak::kernels {
namespace {

// n >= 1. Starts from x[0], not -infinity, which -ffast-math lets the compiler assume never occurs.
TK_CLONES float row_max(const float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

TK_CLONES float exp_in_place_sum(float* x, int64_t n, float m) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - m);
    x[i] = e;
    s += e;
  }
  return s;
}

TK_CLONES void scale_in_place(float* x, int64_t n, float k) {
  for (int64_t i = 0; i < n; ++i) x[i] *= k;
}

// bf16 → float into the scratch row and the row's maximum, in one pass over memory. n >= 1.
TK_CLONES float bf16_to_float_max(const uint16_t* in, float* out, int64_t n) {
  float m;
  {
    const uint32_t bits = static_cast<uint32_t>(in[0]) << 16;
    std::memcpy(&m, &bits, 4);
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    out[i] = v;
    m = v > m ? v : m;
  }
  return m;
}

// Round to nearest even, as LibTorch's float → bf16 conversion (the inputs are finite probabilities).
TK_CLONES void scaled_float_to_bf16(const float* in, uint16_t* out, int64_t n, float k) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i] * k;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    out[i] = static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  }
}

uint16_t to_bf16(float v) {
  uint16_t b;
  scaled_float_to_bf16(&v, &b, 1, 1.0f);
  return b;
}

}  // namespace

void softmax_xent_rows_f32(float* logits, int64_t ld, const int64_t* targets, int64_t begin, int64_t end, int64_t V,
                           int64_t ignore, bool with_grad, float scale, double* losses) {
  for (int64_t r = begin; r < end; ++r) {
    float* row = logits + r * ld;
    const int64_t t = targets[r];
    losses[r] = 0.0;
    if (t == ignore) {
      if (with_grad) std::memset(row, 0, sizeof(float) * ld);
      continue;
    }
    const float target_logit = row[t];
    const float m = row_max(row, V);
    const float s = exp_in_place_sum(row, V, m);
    losses[r] = std::log(static_cast<double>(s)) - static_cast<double>(target_logit - m);
    if (!with_grad) continue;
    scale_in_place(row, V, scale / s);
    row[t] -= scale;
    std::memset(row + V, 0, sizeof(float) * (ld - V));
  }
}

void softmax_xent_rows_bf16(uint16_t* logits, int64_t ld, const int64_t* targets, int64_t begin, int64_t end,
                            int64_t V, int64_t ignore, bool with_grad, float scale, float* scratch, double* losses) {
  for (int64_t r = begin; r < end; ++r) {
    uint16_t* row = logits + r * ld;
    const int64_t t = targets[r];
    losses[r] = 0.0;
    if (t == ignore) {
      if (with_grad) std::memset(row, 0, sizeof(uint16_t) * ld);
      continue;
    }
    const float m = bf16_to_float_max(row, scratch, V);
    const float target_logit = scratch[t];
    const float s = exp_in_place_sum(scratch, V, m);
    losses[r] = std::log(static_cast<double>(s)) - static_cast<double>(target_logit - m);
    if (!with_grad) continue;
    scaled_float_to_bf16(scratch, row, V, scale / s);
    row[t] = to_bf16((scratch[t] / s - 1.0f) * scale);
    std::memset(row + V, 0, sizeof(uint16_t) * (ld - V));
  }
}

}  // namespace tokamak::kernels
