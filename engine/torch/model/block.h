// A transformer block and its parts. Each part has the variants the write-ups compare: LayerNorm and GELU
// written from scratch or the library's kernels; attention with GPT-2's stored causal-mask buffer, a mask
// built on the fly, or fused scaled-dot-product attention (flash on GPUs). speed.layers=fused adds Tokamak's own
// kernels (engine/torch/kernels/): on CUDA the residual add + LayerNorm and bias + GELU dispatched here; speed.fp8 runs the
// MLP's two matmuls in fp8.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <utility>

#include "engine/base/config/choices.h"  // AttentionKind, LayersKind, NormKind, MlpAct, PositionKind

namespace tokamak {

struct BlockOptions {
  int64_t n_embd = 128;
  int64_t n_head = 4;
  int64_t context = 128;
  double dropout = 0.0;
  bool bias = true;
  int64_t n_layer = 4;  // scales the init of residual projections (GPT-2: 0.02 / sqrt(2 * n_layer))
  AttentionKind attention = AttentionKind::kSdpa;
  LayersKind layers = LayersKind::kNative;
  bool fused_glue = false;  // speed.fused_glue: the fused layers' glue kernels (CUDA, bf16)
  bool fp8 = false;         // speed.fp8: the MLP's two matmuls in fp8 under bf16 autocast (kernels/fp8_linear.h)
  // The speedrun's switches (model.norm, model.mlp_act, model.position, model.qk_norm); defaults are GPT-2.
  NormKind norm = NormKind::kLayerNorm;
  MlpAct mlp_act = MlpAct::kGelu;
  PositionKind position = PositionKind::kLearned;
  bool qk_norm = false;
  bool value_embedding = false;  // this block mixes a value embedding into its values (model.value_embeddings)
};

constexpr double kLayerNormEps = 1e-5;  // GPT-2's
constexpr double kRmsNormEps = 1e-6;    // RMSNorm and QK-norm
constexpr double kRopeBase = 10000;     // rotary frequencies: base^(-2i/D), as Su et al. and Llama

// LayerNorm (weight and bias) or RMSNorm (weight only), by model.norm; scratch or library kernels by speed.layers.
class LayerNormImpl : public torch::nn::Module {
 public:
  LayerNormImpl(int64_t dim, LayersKind kind, NormKind norm = NormKind::kLayerNorm);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;  // (C,); bias undefined for RMSNorm
  // speed.fused_glue with fused layers: under bf16 autocast on CUDA the LayerNorm reads the fp32 residual stream and
  // writes bf16 for the matmul after it (kernels::layernorm_glue), where the library's runs in fp32 between casts.
  bool glue = false;

 private:
  LayersKind kind_;
  NormKind norm_;
};

// A Linear layer's forward through at::linear. torch::nn::Linear's own forward is the C++ frontend's functional
// linear, which for a 3-D input runs a matmul and then adds the bias in place as a broadcast: ATen's legacy strided
// kernel, 36 launches and 13.8 ms of a GPT-2 124M step at batch 64 on an H200. at::linear flattens a contiguous
// input into addmm, whose bias rides in the GEMM's epilogue (and is on autocast's list as linear is). On a CUDA
// device only: a CPU keeps the frontend's path (block.cpp says why).
torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x);
torch::Tensor gelu(const torch::Tensor& x, LayersKind kind);  // GPT-2's tanh approximation
// The MLP's nonlinearity: GELU, or ReLU² (relu(x)²).
torch::Tensor mlp_activation(const torch::Tensor& x, MlpAct act, LayersKind kind);
// Rotary position embedding of x (B, H, T, D), D even, for positions first .. first + T - 1: each pair (i, i + D/2)
// of a head's dimensions is rotated by the angle position · base^(-2i/D) (the half-split layout of GPT-NeoX
// and Llama). Angles are computed in fp32, whatever x's dtype.
torch::Tensor apply_rope(const torch::Tensor& x, int64_t first);
// RMS normalisation of the last dimension without a weight (QK-norm).
torch::Tensor rms_normalize(const torch::Tensor& x);

// Keys and values of the tokens seen so far, (B, H, T_past, D) each; undefined before the first call. Sampling
// keeps one per block, so each new token costs one forward of that token alone.
struct KVCache {
  torch::Tensor k, v;
  int64_t length() const { return k.defined() ? k.size(2) : 0; }
};

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const BlockOptions& o);
  // (B, T, C) -> (B, T, C); ve (B, T, C): the value embedding of x's tokens, with BlockOptions::value_embedding
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& ve = {});
  // Inference only (no dropout): x holds the T new tokens, which attend to the cache and to each other
  // causally; their keys and values are appended to the cache. Fused attention whatever the variant.
  torch::Tensor forward_cached(const torch::Tensor& x, KVCache& cache, const torch::Tensor& ve = {});
  // The mean entropy (nats, fp32 scalar) of HEAD's causal attention weights over x (B, T, C), the block's normed
  // input: what fused attention never materialises, computed apart for the per-layer statistics. No gradient.
  torch::Tensor head_entropy(const torch::Tensor& x, int64_t head);
  torch::nn::Linear c_attn{nullptr};  // (3C, C)
  torch::nn::Linear c_proj{nullptr};  // (C, C)
  torch::Tensor value_lambdas;        // (2,): v ← λ0·v + λ1·ve; only with a value embedding
 private:
  BlockOptions o_;
  torch::Tensor mask_;  // (1, 1, context, context) lower-triangular; only for kBufferedMask
  // QK-norm and rotary, on (B, H, T, D) queries and keys at positions first ..
  void position_and_norm(torch::Tensor& q, torch::Tensor& k, int64_t first) const;
  torch::Tensor mix_values(const torch::Tensor& v, const torch::Tensor& ve) const;  // (B, H, T, D) each
};

class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(const BlockOptions& o);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& ve = {});  // ve: see AttentionImpl
  torch::Tensor forward_cached(const torch::Tensor& x, KVCache& cache, const torch::Tensor& ve = {});
  // speed.fused_glue: the residual add across the block boundary. The input stream is x + pending (pending, the
  // previous block's MLP branch, undefined for the first block), added inside ln_1's kernel, which writes the stream
  // and ln_1's output in one pass; the block returns its own stream and MLP branch unadded, {h, m}, for the next
  // block's ln_1 (or ln_f) to add. forward(x) is the same function: forward_deferred(x, {}) summed.
  std::pair<torch::Tensor, torch::Tensor> forward_deferred(const torch::Tensor& x, const torch::Tensor& pending,
                                                           const torch::Tensor& ve = {});
  std::shared_ptr<LayerNormImpl> ln_1, ln_2;
  std::shared_ptr<AttentionImpl> attn;
  torch::nn::Linear c_fc{nullptr};    // (4C, C)
  torch::nn::Linear c_proj{nullptr};  // (C, 4C)
 private:
  BlockOptions o_;
  // Whether `linear` runs in fp8 on x: speed.fp8, bf16 autocast on x's device, shapes _scaled_mm takes.
  bool fp8_here(const torch::Tensor& x, const torch::nn::LinearImpl& linear) const;
  // The block from ln_1's output y1 on, x its input stream: {h, m}, whose sum is the block's output.
  std::pair<torch::Tensor, torch::Tensor> branches(const torch::Tensor& x, const torch::Tensor& y1,
                                                   const torch::Tensor& ve);
};

TORCH_MODULE(Block);

// Runs block.forward(x) without keeping its activations; backward recomputes them (activation checkpointing).
torch::Tensor checkpointed_forward(BlockImpl& block, const torch::Tensor& x);

}  // namespace tokamak
