// A memory estimate for one training process (one rank), before anything is built: weights, gradients, AdamW's
// two states (sharded over dist.gpus ranks with dist.zero=1), and activations per Korthikanti et al., "Reducing
// Activation Recomputation in Large Transformer Models" (2022). The arithmetic alone, LibTorch-free: the studio shows
// it as sizes and switches change, and a plan sizes a device with it; engine/torch/model/memory_estimate.h makes `auto`
// concrete with LibTorch and checks a run against its device's memory.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

namespace tokamak {

struct Config;
struct ModelConfig;

// The most memory the fused classifier's CPU kernel keeps for the rows' gradients before it takes the weight's
// gradient (one matmul per block of that many bytes of B·T·V gradients; fewer rows than native's logits and their
// copies). engine/torch/kernels/classifier.h runs with these; here because the estimate counts them.
constexpr int64_t kClassifierBlockBytes = int64_t{1} << 30;
// The most bytes of logits the CUDA kernel holds at once (one chunk). GPT-2 at batch 64 × 1024 in bf16 is 6.6 GB:
// one chunk, where 1 GiB chunks made seven, each with its three matmuls at a seventh of the rows (≈20 ms of GEMMs
// against a 15.4 ms floor on an H200) and an add of the weight's gradient.
constexpr int64_t kClassifierCudaChunkBytes = int64_t{8} << 30;

// What a model's parameter count depends on (engine/torch/model/gpt.h's GPTOptions fills it the same way).
struct ParameterShape {
  int64_t n_embd = 0, n_layer = 0, context = 0, padded_vocab = 0;
  bool bias = true;               // the linears' biases (model.qkv_bias)
  bool rms_norm = false;          // RMSNorm: a weight, no bias
  bool rope = false;              // no position table
  bool tie_weights = true;        // the head is the token table
  bool unet_skips = false;        // one weight per skip, n_layer / 2
  int64_t value_embeddings = 0;   // tables, each mixing its first and last blocks' values (two lambdas a block)
};
ParameterShape parameter_shape(const ModelConfig& model);
// Parameters of a model of this shape, without building it; tied weights counted once (what GPT-2's papers count).
int64_t count_parameters(const ParameterShape& shape);

struct MemoryEstimate {
  int64_t parameters = 0;  // count_parameters() of the model the config builds (tied weights counted once)
  int64_t weights = 0;     // bytes: fp32 master weights, or bf16 with speed.precision=bf16-pure
  int64_t gradients = 0;   // bytes: one gradient per weight, in the weights' dtype
  int64_t optimizer = 0;   // bytes: AdamW's exp_avg and exp_avg_sq, in the weights' dtype (per rank: 1/N with ZeRO-1)
  int64_t optimizer_saved = 0;  // bytes of AdamW state a rank does not hold thanks to dist.zero=1 ((N-1)/N of it)
  int64_t activations = 0;      // bytes kept for backward by the transformer blocks (Korthikanti's per-layer term)
  int64_t logits = 0;           // bytes of the output layer at its peak: native, 3 fp32 logits, 12·s·b·v
  int64_t overhead = 0;         // CUDA: what the allocator holds beside the tensors counted here (measured)
  // The peak: weights and AdamW's state are there throughout; the activations and the output layer peak at the
  // start of backward, before any gradient but the head's exists (gradients are set to none between steps), and
  // the gradients are whole only at its end, when the activations are gone: the larger of the two moments.
  int64_t total() const { return weights + optimizer + overhead + std::max(activations + logits, gradients); }
};

// Per layer, 16-bit activations take s·b·h·(34 + 5·a·s/h) bytes (s = context, b = micro-batch, h = width,
// a = heads). Fused attention (speed.attention=sdpa) never stores the a·s² scores: the 5·a·s/h term goes.
// Activation checkpointing keeps only each block's input (2·s·b·h) plus one block's full activations while it
// is recomputed. fp32 and tf32 runs store 4-byte activations: twice the 16-bit figure. Autocast keeps the residual
// stream and the LayerNorms' inputs in fp32 (4·s·b·h more a layer; 2·s·b·h more with the fused bias + GELU on CUDA).
// Checked against every bf16 peak the GPU sittings measured (tests/test_memory_estimate.cpp).
// PRECISION is the run's, `auto` made concrete (engine/torch/model/memory_estimate.h, or precision_here() before a
// run); CUDA_CHUNK_BYTES is what the CUDA fused classifier holds at once (runs recorded before it held 1 GiB).
MemoryEstimate estimate_memory(const Config& config, Precision precision,
                               int64_t cuda_chunk_bytes = kClassifierCudaChunkBytes);

// Why `config` cannot fit in `available` bytes, naming the estimate, what is available and how to fit or
// override; "" when it fits or config.memory_check is false.
std::string memory_problem(const Config& config, Precision precision, int64_t available);

}  // namespace tokamak
