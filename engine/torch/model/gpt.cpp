// The GPT model (see gpt.h).
#include "engine/torch/model/gpt.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/init.h>

#include <cmath>
#include <tuple>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/plan/memory_estimate.h"
#include "engine/base/util/error.h"
#include "engine/torch/kernels/classifier.h"
#include "engine/torch/kernels/residual_layernorm.h"
#include "engine/torch/metrics/step_profile.h"

namespace tokamak {
namespace {

// Which of model.value_embeddings' k tables block `layer` of n mixes in: table i for block i and for block
// n - k + i (the speedrun's 2024-12-17 layout: the first and the last blocks, in the same order); -1 for none.
int64_t value_table(const GPTOptions& o, int64_t layer) {
  const int64_t k = o.value_embeddings, n = o.n_layer;
  if (layer < k) return layer;
  if (layer >= n - k) return layer - (n - k);
  return -1;
}

}  // namespace

GPTOptions GPTOptions::from_config(const ModelConfig& m, const SpeedConfig& speed) {
  GPTOptions o;
  o.block.n_embd = m.n_embd;
  o.block.n_head = m.n_head;
  o.block.context = m.context;
  o.block.dropout = m.dropout;
  o.block.bias = m.qkv_bias;
  o.block.n_layer = m.n_layer;
  // Values that are not implemented pass (the memory estimate sizes them) and are refused where a layer is built.
  // A config that reaches a model with speed.layers unresolved builds native (train() resolves auto first).
  o.block.attention = speed.attention;
  o.block.layers = speed.layers == LayersKind::kAuto ? LayersKind::kNative : speed.layers;
  o.block.fused_glue = speed.fused_glue;
  o.block.fp8 = speed.fp8;
  o.block.norm = m.norm;
  o.block.mlp_act = m.mlp_act;
  o.block.position = m.position;
  o.block.qk_norm = m.qk_norm;
  o.logit_softcap = m.logit_softcap;
  o.zero_init_proj = m.zero_init_proj;
  o.unet_skips = m.unet_skips;
  o.value_embeddings = m.value_embeddings;
  o.n_layer = m.n_layer;
  o.context = m.context;
  o.vocab_size = m.vocab_size;
  o.padded_vocab = tokamak::padded_vocab(m);
  o.tie_weights = m.tie_weights;
  o.checkpoint_blocks = speed.activation_checkpointing;
  return o;
}

int64_t count_parameters(const GPTOptions& o) {
  ParameterShape s;
  s.n_embd = o.block.n_embd, s.n_layer = o.n_layer, s.context = o.context, s.padded_vocab = o.padded_vocab;
  s.bias = o.block.bias, s.rms_norm = o.block.norm == NormKind::kRmsNorm;
  s.rope = o.block.position == PositionKind::kRope;
  s.tie_weights = o.tie_weights, s.unet_skips = o.unet_skips, s.value_embeddings = o.value_embeddings;
  return count_parameters(s);
}

GPTImpl::GPTImpl(const GPTOptions& o) : options_(o), dropout_(o.block.dropout) {
  const int64_t C = o.block.n_embd;
  wte = register_module("wte", torch::nn::Embedding(o.padded_vocab, C));
  if (o.block.position == PositionKind::kLearned) wpe = register_module("wpe", torch::nn::Embedding(o.context, C));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.n_layer; ++i) {
    BlockOptions bo = o.block;
    bo.value_embedding = value_table(o, i) >= 0;
    blocks->push_back(Block(bo));
  }
  ln_f = register_module("ln_f", std::make_shared<LayerNormImpl>(C, o.block.layers, o.block.norm));
  ln_f->glue = o.block.fused_glue && o.block.layers == LayersKind::kFused;
  lm_head = o.tie_weights ? wte->weight : register_parameter("lm_head", torch::empty({o.padded_vocab, C}));
  if (o.unet_skips) skip_weights = register_parameter("skip_weights", torch::ones({o.n_layer / 2}));
  if (o.value_embeddings > 0) {
    value_embeds = register_module("value_embeds", torch::nn::ModuleList());
    for (int64_t i = 0; i < o.value_embeddings; ++i) value_embeds->push_back(torch::nn::Embedding(o.padded_vocab, C));
  }
  init_weights();
}

void GPTImpl::init_weights() {
  // GPT-2: N(0, 0.02) everywhere, residual projections scaled by 1/sqrt(2 * n_layer), zero biases.
  torch::NoGradGuard no_grad;
  const double std_residual = 0.02 / std::sqrt(2.0 * options_.n_layer);
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    if (p.dim() == 1) {
      // Norms, U-net skips and value-embedding lambdas keep the values they were made with.
      const bool keep = name.find("ln_") != std::string::npos || name == "skip_weights" ||
                        name.find("value_lambdas") != std::string::npos;
      if (!keep) p.zero_();
      continue;
    }
    bool residual = name.size() > 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0;
    torch::nn::init::normal_(p, 0.0, residual ? std_residual : 0.02);
  }
  // model.zero_init_proj (the speedrun, after muP): every block starts as the identity, and an untied head
  // predicts uniformly; the gradients still reach them (a projection's gradient is its input times dy).
  if (options_.zero_init_proj) {
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      const bool proj = name.size() > 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0;
      if (proj || (name == "lm_head" && !options_.tie_weights)) item.value().zero_();
    }
  }
  // Padded rows are never looked up or predicted; keep them zero so they are inert in every sense.
  if (options_.padded_vocab > options_.vocab_size) {
    wte->weight.narrow(0, options_.vocab_size, options_.padded_vocab - options_.vocab_size).zero_();
    if (!options_.tie_weights)
      lm_head.narrow(0, options_.vocab_size, options_.padded_vocab - options_.vocab_size).zero_();
    if (value_embeds)
      for (const auto& table : value_embeds->parameters())
        table.narrow(0, options_.vocab_size, options_.padded_vocab - options_.vocab_size).zero_();
  }
}

template <class Run>
torch::Tensor GPTImpl::run_blocks(torch::Tensor x, const Run& run) {
  const size_t n = blocks->size(), half = n / 2;
  if (!options_.unet_skips) {
    for (size_t i = 0; i < n; ++i) x = run(i, x);
    return x;
  }
  // U-net (the speedrun's 2024-11-10 record): block n - 1 - k starts from x + w · (output of block k) for each
  // k of the first half, so the outputs come back in reverse order; an odd middle block has no partner.
  std::vector<torch::Tensor> outputs;
  for (size_t i = 0; i < half; ++i) outputs.push_back(x = run(i, x));
  for (size_t i = half; i < n; ++i) {
    if (i >= n - half) x = x + skip_weights[static_cast<int64_t>(i - (n - half))] * outputs[n - 1 - i];
    x = run(i, x);
  }
  return x;
}

GPTOutput GPTImpl::forward(const torch::Tensor& idx, const torch::Tensor& targets) {
  const int64_t T = idx.size(1);
  if (T > options_.context)
    throw Error("sequence of " + std::to_string(T) + " tokens is longer than model.context (" +
                    std::to_string(options_.context) + ")",
                "raise model.context or shorten the input");
  auto x = embed(idx, 0);  // (B, T, C)
  if (is_training() && dropout_ > 0)
    x = torch::nn::functional::dropout(x, torch::nn::functional::DropoutFuncOptions().p(dropout_).training(true));
  const bool checkpoint = options_.checkpoint_blocks && is_training() && torch::GradMode::is_enabled();
  if (defers_residual() && !checkpoint) {
    x = deferred_blocks(idx, x);
  } else {
    x = run_blocks(x, [&](size_t i, const torch::Tensor& in) {
      auto& block = blocks->at<BlockImpl>(i);
      const torch::Tensor ve = value_embedding(idx, i);
      // config_problems refuses this pair: the checkpointed block takes its one input only.
      if (checkpoint && ve.defined())
        throw Error("model.value_embeddings cannot run with speed.activation_checkpointing yet",
                    "set speed.activation_checkpointing=false");
      return checkpoint ? checkpointed_forward(block, in) : block.forward(in, ve);
    });
    x = ln_f->forward(x);
  }
  GPTOutput out;
  if (targets.defined() && options_.block.layers == LayersKind::kFused) {
    // config_problems refuses a soft cap with fused layers: the classifier never holds the logits to cap.
    if (options_.logit_softcap > 0)
      throw Error("model.logit_softcap cannot run with speed.layers=fused", "set speed.layers=native");
    // The fused classifier: loss and both gradients in chunks of tokens, no (B, T, V) logits (kernels/). Its time
    // is the step profile's head phase: its gradients are computed here, not in backward.
    StepProfile* profile = active_step_profile();
    if (profile) profile->lap(Phase::kForward);
    out.loss = kernels::fused_classifier(x.reshape({-1, x.size(-1)}), lm_head, targets.reshape({-1}),
                                         {options_.vocab_size, 0});
    if (profile) profile->lap(Phase::kHead);
    return out;
  }
  auto logits = logits_of(x);
  if (targets.defined()) {
    // The loss is computed in fp32 even under autocast (autocast's policy for cross_entropy).
    out.loss = at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat), targets.reshape({-1}));
  }
  out.logits = logits;
  return out;
}

bool GPTImpl::defers_residual() const {
  const BlockOptions& b = options_.block;
  // The fused LayerNorm + residual kernels are LayerNorm's; a U-net skip adds to the stream between blocks.
  return b.fused_glue && b.layers == LayersKind::kFused && b.norm == NormKind::kLayerNorm &&
         b.mlp_act == MlpAct::kGelu && !options_.unet_skips;
}

torch::Tensor GPTImpl::deferred_blocks(const torch::Tensor& idx, torch::Tensor x) {
  // Each block's last residual add happens inside the next block's ln_1 kernel, and the last block's inside ln_f's:
  // one pass over the stream a boundary instead of two (the add, then the LayerNorm reading its result again), and
  // backward writes the stream's gradient and the branch's in one pass, with no sum of two gradients and no cast of
  // the branch's.
  torch::Tensor pending;
  for (size_t i = 0; i < blocks->size(); ++i)
    std::tie(x, pending) = blocks->at<BlockImpl>(i).forward_deferred(x, pending, value_embedding(idx, i));
  if (!pending.defined()) return ln_f->forward(x);
  return kernels::residual_layernorm_glue(x, pending, ln_f->weight, ln_f->bias).second;
}

torch::Tensor GPTImpl::forward_cached(const torch::Tensor& idx, std::vector<KVCache>& cache) {
  cache.resize(blocks->size());
  const int64_t past = cache.front().length(), T = idx.size(1);
  if (past + T > options_.context)
    throw Error("KV cache of " + std::to_string(past + T) + " tokens exceeds model.context (" +
                    std::to_string(options_.context) + ")",
                "start a new cache over the last model.context tokens");
  auto x = embed(idx, past);
  x = run_blocks(x, [&](size_t i, const torch::Tensor& in) {
    return blocks->at<BlockImpl>(i).forward_cached(in, cache[i], value_embedding(idx, i));
  });
  return logits_of(ln_f->forward(x));
}

GPTImpl::Probe GPTImpl::probe(const torch::Tensor& idx) {
  at::NoGradGuard no_grad;
  std::vector<KVCache> cache(blocks->size());  // the cached forward is the inference path: no dropout, any layers
  std::vector<torch::Tensor> rms, entropy;
  run_blocks(embed(idx, 0), [&](size_t i, const torch::Tensor& in) {
    BlockImpl& block = blocks->at<BlockImpl>(i);
    entropy.push_back(block.attn->head_entropy(block.ln_1->forward(in), 0));
    torch::Tensor out = block.forward_cached(in, cache[i], value_embedding(idx, i));
    rms.push_back(out.to(torch::kFloat).square().mean().sqrt());
    return out;
  });
  return {torch::stack(rms), torch::stack(entropy)};
}

torch::Tensor GPTImpl::embed(const torch::Tensor& idx, int64_t first) {
  // Learned positions are added here; rotary ones are applied to queries and keys in each block.
  if (!wpe) return wte(idx);
  return wte(idx) + wpe(torch::arange(first, first + idx.size(1), idx.options()));
}

torch::Tensor GPTImpl::value_embedding(const torch::Tensor& idx, size_t layer) {
  const int64_t t = value_table(options_, static_cast<int64_t>(layer));
  return t < 0 ? torch::Tensor() : value_embeds->at<torch::nn::EmbeddingImpl>(t).forward(idx);
}

torch::Tensor GPTImpl::logits_of(const torch::Tensor& x) {
  auto logits = torch::linear(x, lm_head);  // (B, T, padded_vocab)
  if (options_.padded_vocab > options_.vocab_size) logits = logits.narrow(-1, 0, options_.vocab_size);
  // Soft-capping (Gemma 2, the speedrun): logits stay within ±cap, smoothly; sampling sees the same logits.
  if (options_.logit_softcap > 0) logits = options_.logit_softcap * torch::tanh(logits / options_.logit_softcap);
  return logits;
}

int64_t GPTImpl::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();  // a tied lm_head is the same tensor: listed once
  return n;
}

// Position and value-embedding tables are looked up, not multiplied: no FLOPs.
int64_t GPTImpl::num_flop_parameters() const {
  int64_t tables = wpe ? wpe->weight.numel() : 0;
  // An untied token embedding is a lookup like the others: the head's matmul is counted, its table is not.
  if (!options_.tie_weights) tables += wte->weight.numel();
  if (value_embeds)
    for (const auto& t : value_embeds->parameters()) tables += t.numel();
  return num_parameters() - tables;
}

}  // namespace tokamak
