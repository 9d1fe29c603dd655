// Launchers of the kernels in engine/torch/kernels/*.cu. They take plain pointers and a stream, so the .cu files
// include no ATen (nvcc compiles each in seconds for sm_80 and sm_90) and the ATen glue around them is ordinary
// C++ (engine/torch/kernels/*_cuda.cpp). Only in builds with TOKAMAK_WITH_CUDA. Shapes are row-major.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace tokamak::kernels::cuda {

enum class DType { kFloat, kBFloat16 };  // the element type behind the void pointers

// classifier.cu — one block per row of logits (rows, Vp), Vp >= V: each row's log-sum-exp over its first V
// columns, losses[row] = lse - logit[target] (0 for an ignored target, -100), and with with_grad the row
// replaced in place by dlogits = (softmax - onehot) / *n_valid (0 in padded columns and ignored rows).
// n_valid is read on the device, so nothing waits for the host.
void softmax_ce_grad(DType dtype, void* logits, int64_t rows, int64_t V, int64_t Vp, const int64_t* targets,
                     float* losses, const float* n_valid, bool with_grad, cudaStream_t stream);

// residual_layernorm.cu — h = x + residual and y = layer_norm(h) (eps 1e-5), one warp per row of (N, C);
// mean and rstd (N,) fp32 are kept for backward.
void residual_layernorm_forward(DType dtype, const void* x, const void* residual, const void* weight, const void* bias,
                                void* h, void* y, float* mean, float* rstd, int64_t N, int64_t C, cudaStream_t stream);
// dh += layer_norm's input gradient for dy; dweight and dbias (C,) fp32 get the row sums added (zero them
// first). h is the forward's h.
void layernorm_backward(DType dtype, const void* dy, const void* h, const void* weight, const float* mean,
                        const float* rstd, void* dh, float* dweight, float* dbias, int64_t N, int64_t C,
                        cudaStream_t stream);

// residual_layernorm.cu, speed.fused_glue — the dtypes of a block under bf16 autocast, no casts around it: x (the
// residual stream) and h fp32, the branch, y, dy and dbranch bf16, weight and bias fp32. C a multiple of 8 and at
// most kMixedMaxC. Backward out of place: dh_out = dh_in (may be null) + layer_norm's input gradient, and dbranch
// the same values in bf16; dweight and dbias get the row sums added (zero them first). A LayerNorm alone (ln_1,
// ln_f): branch, h and dbranch null (h is x, dh_out x's gradient).
constexpr int64_t kMixedMaxC = 2048;
void residual_layernorm_forward_mixed(const float* x, const void* branch, const float* weight, const float* bias,
                                      float* h, void* y, float* mean, float* rstd, int64_t N, int64_t C,
                                      cudaStream_t stream);
void layernorm_backward_mixed(const void* dy, const float* h, const float* weight, const float* mean, const float* rstd,
                              const float* dh_in, float* dh_out, void* dbranch, float* dweight, float* dbias, int64_t N,
                              int64_t C, cudaStream_t stream);

// bias_gelu.cu — in place over d (N, C): d = d · gelu_tanh'(pre), and dbias (C,) fp32 += its column sums (zero
// it first): the GELU backward and the bias gradient in one pass over the activations.
void gelu_backward_bias(DType dtype, void* d, const void* pre, float* dbias, int64_t N, int64_t C, cudaStream_t stream);

// bias_gelu.cu, speed.fused_glue — out of place, bf16 only, C a multiple of 8: out = d · gelu_tanh'(pre), dbias
// (C,) fp32 += its column sums (zero it first). No clone of d before it.
void gelu_backward_bias_out(const void* d, const void* pre, void* out, float* dbias, int64_t N, int64_t C,
                            cudaStream_t stream);

// qkv_heads.cu, speed.fused_glue — dqkv (B, T, 3, H, D) contiguous from the three heads' gradients (B, H, T, D),
// each with its own strides in bytes (a null source writes zeros). Any dtype: a row of D elements is row_bytes, a
// multiple of 16, and every source pointer and stride is a multiple of 16 bytes too.
struct HeadSources {
  const void* data[3];
  int64_t stride_b[3], stride_h[3], stride_t[3];
};
void heads_to_qkv(const HeadSources& src, void* dqkv, int64_t B, int64_t T, int64_t H, int64_t row_bytes,
                  cudaStream_t stream);

// fp8_cast.cu, speed.fp8 — out[i] = fp8(x[i] · *scale) for n elements, x fp32 or bf16, e4m3 (e4m3 = true) or e5m2,
// rounded to nearest and saturated to the format's largest value; the scale is read on the device.
void scale_cast_fp8(DType dtype, const void* x, const float* scale, void* out, int64_t n, bool e4m3,
                    cudaStream_t stream);

}  // namespace tokamak::kernels::cuda
