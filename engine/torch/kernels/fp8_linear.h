// speed.fp8: a linear layer whose three matmuls (forward, input gradient, weight gradient) run in 8-bit floats
// through at::_scaled_mm, with one dynamic scale a tensor (the "tensorwise" recipe of torchao's float8 training):
// activations and weights in e4m3 (3 mantissa bits, range ±448), gradients in e5m2 (2 bits, range ±57344). Each
// tensor is scaled so that its largest magnitude lands on the format's largest value, clamped and cast; _scaled_mm
// multiplies by the inverse scales again. The master weights stay fp32 (autocast's), their gradient is written in
// fp32, and the scales never leave the device (no host sync: CUDA graphs capture it). The pure scale and
// quantize/dequantize functions run on any device, so a CPU test can check them; LibTorch 2.11's CPU _scaled_mm
// serves as well (slower than bf16 there: the CPU path is for checking numerics, not speed).
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <string>

namespace tokamak::kernels {

constexpr double kE4m3Max = 448;         // float8_e4m3fn's largest finite value: activations and weights
constexpr double kE5m2Max = 57344;       // float8_e5m2's: gradients, which need range more than precision
constexpr double kFp8AmaxFloor = 1e-12;  // the smallest amax a scale is taken from, so a zero tensor's is finite

// A tensor in fp8 with the scale it was multiplied by: x ≈ data / scale.
struct Fp8Tensor {
  at::Tensor data;   // x's shape, float8_e4m3fn or float8_e5m2
  at::Tensor scale;  // () fp32 on x's device: fp8 max / max(amax(|x|), kFp8AmaxFloor)
};

// The largest finite value of an fp8 dtype (kE4m3Max or kE5m2Max); throws for any other dtype.
double fp8_max(at::ScalarType fp8);
// () fp32 on x's device: fp8_max / max(amax(|x|), kFp8AmaxFloor). No host sync.
at::Tensor fp8_scale(const at::Tensor& x, at::ScalarType fp8);
// x · scale, clamped to ±fp8_max (a cast past it gives NaN, not the largest value) and cast.
Fp8Tensor quantize_fp8(const at::Tensor& x, at::ScalarType fp8);
// data / scale in `dtype`.
at::Tensor dequantize_fp8(const Fp8Tensor& q, at::ScalarType dtype = at::kFloat);

// "" when `device` runs fp8 matmuls (a CPU through LibTorch's _scaled_mm; CUDA from compute capability 8.9: Ada,
// Hopper, Blackwell), else one line naming the device and the fix.
std::string fp8_matmul_problem(const c10::Device& device);

// Whether fp8_linear takes these shapes: _scaled_mm wants every dimension a multiple of 16 (x's rows, K and N).
bool fp8_linear_fits(const at::Tensor& x, const at::Tensor& weight);
// x @ weight^T + bias in fp8 (see above): x (..., K) fp32 or bf16, weight (N, K), bias (N,) or undefined →
// (..., N) bf16, as bf16 autocast's linear gives. Gradients: x's in x's dtype, weight's and bias's in theirs.
at::Tensor fp8_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace tokamak::kernels
