// The fused classifier's row kernel on the CPU: cross-entropy and its gradient for one chunk's logits, in
// place, in two passes over each row (llm.c's fused_classifier, on a CPU). Plain C++, no LibTorch: compiled
// with -ffast-math for this file alone, so that GCC vectorises exp through glibc's vector math library for
// AVX-512, AVX2 or SSE, picked when the program starts (target_clones).
#pragma once
#include <cstdint>

namespace tokamak::kernels {

// Rows [begin, end) of logits (row stride ld >= V; fp32, or bf16 as raw 16-bit words), the first V columns
// of each the real vocabulary and the rest padding: losses[r] = -log softmax(row r)[t] for target t (0 where
// t is `ignore`; one value per row, so the caller's sum does not depend on how rows were split over threads),
// and, when with_grad, each row overwritten with scale · (softmax(row) - onehot(t)) and zeros in its padding
// (all zeros for an ignored row): the mean's 1/N folded in here, so the two gradient matmuls that read these
// rows need no pass of their own to scale. `scratch` holds V floats; bf16 rows use it, fp32 rows work in place.
void softmax_xent_rows_f32(float* logits, int64_t ld, const int64_t* targets, int64_t begin, int64_t end, int64_t V,
                           int64_t ignore, bool with_grad, float scale, double* losses);
void softmax_xent_rows_bf16(uint16_t* logits, int64_t ld, const int64_t* targets, int64_t begin, int64_t end,
                            int64_t V, int64_t ignore, bool with_grad, float scale, float* scratch, double* losses);

}  // namespace tokamak::kernels
