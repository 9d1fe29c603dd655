// GPT-2 family model: token + position embeddings, n_layer pre-LayerNorm blocks, a final LayerNorm and a
// head tied (or not) to the token embedding. The write-ups' model-side switches are options here.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <vector>

#include "engine/torch/model/block.h"

namespace tokamak {

struct ModelConfig;
struct SpeedConfig;

struct GPTOptions {
  BlockOptions block;
  int64_t n_layer = 4;
  int64_t context = 128;
  int64_t vocab_size = 50257;    // real tokens
  int64_t padded_vocab = 50304;  // embedding rows (>= vocab_size)
  bool tie_weights = true;
  bool checkpoint_blocks = false;  // activation checkpointing, per block
  double logit_softcap = 0;        // > 0: logits = cap · tanh(logits / cap) (model.logit_softcap)
  bool zero_init_proj = false;     // c_proj weights (and an untied head) start at zero (model.zero_init_proj)
  bool unet_skips = false;         // model.unet_skips: block outputs of the first half added to the second's inputs
  int64_t value_embeddings = 0;    // model.value_embeddings: tables mixed into the values of the first/last blocks

  static GPTOptions from_config(const ModelConfig& model, const SpeedConfig& speed);
};

// Parameters of a model with these options, without building it (the studio shows it as sizes change).
int64_t count_parameters(const GPTOptions& options);

struct GPTOutput {
  torch::Tensor logits;  // (B, T, vocab_size) — padded columns already dropped; undefined when speed.layers=fused
                         // computed the loss (the fused classifier never stores the logits)
  torch::Tensor loss;    // scalar mean cross-entropy, undefined without targets
};

class GPTImpl : public torch::nn::Module {
 public:
  explicit GPTImpl(const GPTOptions& options);
  // idx: (B, T) int64 with T <= context; targets: (B, T) int64 or undefined.
  GPTOutput forward(const torch::Tensor& idx, const torch::Tensor& targets = {});
  // Inference with a KV cache (one per block; empty to start): idx holds only the new tokens, which come
  // after cache[0].length() earlier ones; returns their logits (B, T, vocab_size). The caller keeps the total
  // within model.context.
  torch::Tensor forward_cached(const torch::Tensor& idx, std::vector<KVCache>& cache);
  // What the per-layer statistics read of a forward (engine/torch/train/layer_stats.h), without gradients, on idx
  // (B, T): each block's output RMS (the residual stream) and head 0's attention entropy, (n_layer,) fp32 each.
  struct Probe {
    torch::Tensor act_rms, attn_entropy;
  };
  Probe probe(const torch::Tensor& idx);
  // Parameters, tied ones counted once (what GPT-2's papers count).
  int64_t num_parameters() const;
  // Parameters without the lookup tables (position, value and an untied token embedding): the N of MFU's 6N.
  int64_t num_flop_parameters() const;
  const GPTOptions& options() const { return options_; }
  // speed.fused_glue with fused LayerNorm and GELU layers and no U-net skips: each block's last residual add is done
  // by the next LayerNorm's kernel (BlockImpl::forward_deferred), except in checkpointed blocks.
  bool defers_residual() const;

 private:
  void init_weights();
  torch::Tensor logits_of(const torch::Tensor& x);  // final-norm output -> (B, T, vocab_size), soft-capped
  torch::Tensor embed(const torch::Tensor& idx, int64_t first);
  // Block i's output from block i's input, with the U-net skips (model.unet_skips): `skips` holds the first
  // half's outputs; `run` is the block's own forward (plain, checkpointed or cached).
  template <class Run>
  torch::Tensor run_blocks(torch::Tensor x, const Run& run);
  // The blocks and ln_f with the residual add across each boundary (defers_residual): ln_f's output.
  torch::Tensor deferred_blocks(const torch::Tensor& idx, torch::Tensor x);
  // Block `layer`'s value embedding of idx (B, T) -> (B, T, C), or undefined when it has none.
  torch::Tensor value_embedding(const torch::Tensor& idx, size_t layer);
  GPTOptions options_;
  torch::nn::Embedding wte{nullptr};  // (padded_vocab, C)
  torch::nn::Embedding wpe{nullptr};  // (context, C); none with model.position=rope
  torch::nn::ModuleList blocks{nullptr};
  std::shared_ptr<LayerNormImpl> ln_f;
  torch::Tensor lm_head;       // (padded_vocab, C); the same tensor as wte->weight when tied
  torch::Tensor skip_weights;  // (n_layer / 2,): model.unet_skips' weights, ones at the start; else undefined
  torch::nn::ModuleList value_embeds{nullptr};  // model.value_embeddings tables, (padded_vocab, C) each
  double dropout_ = 0.0;
};
TORCH_MODULE(GPT);

}  // namespace tokamak
