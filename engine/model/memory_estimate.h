// A memory estimate for one training process (one rank), before anything is built: weights, gradients, AdamW's
// two states (sharded over dist.gpus ranks with dist.zero=1), and activations per Korthikanti et al., "Reducing
// Activation Recomputation in Large Transformer Models" (2022). The studio shows it as sizes and switches change, and
// next to the measured peak after a run.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

namespace tokamak {

struct Config;

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
MemoryEstimate estimate_memory(const Config& config);
// The same for a CUDA fused classifier that holds at most CUDA_CHUNK_BYTES of logits at once (the default above
// holds kernels::kClassifierCudaChunkBytes; runs recorded before it held 1 GiB).
MemoryEstimate estimate_memory(const Config& config, int64_t cuda_chunk_bytes);

// The memory of the device `config.device` names: physical memory for "cpu", the card's for CUDA.
int64_t device_memory_bytes(const std::string& device);
// Why `config` cannot fit in `available` bytes, naming the estimate, what is available and how to fit or
// override; "" when it fits or config.memory_check is false.
std::string memory_problem(const Config& config, int64_t available);
// Throws Error with memory_problem() against the config's device, before anything is allocated.
void check_memory(const Config& config);

}  // namespace tokamak
