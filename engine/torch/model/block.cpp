// Transformer block parts and their variants (see block.h).
#include "engine/torch/model/block.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/rms_norm.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/record_function.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/functional/linear.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "engine/torch/kernels/bias_gelu.h"
#include "engine/torch/kernels/fp8_linear.h"
#include "engine/torch/kernels/qkv_heads.h"
#include "engine/torch/kernels/residual_layernorm.h"

namespace tokamak {

LayerNormImpl::LayerNormImpl(int64_t dim, LayersKind kind, NormKind norm) : kind_(kind), norm_(norm) {
  require_implemented(layers_choices(), "speed.layers", kind);  // a value refused everywhere never builds
  require_implemented(norm_choices(), "model.norm", norm);
  weight = register_parameter("weight", torch::ones({dim}));
  if (norm == NormKind::kLayerNorm) bias = register_parameter("bias", torch::zeros({dim}));
}

torch::Tensor rms_normalize(const torch::Tensor& x) { return at::rms_norm(x, {x.size(-1)}, std::nullopt, kRmsNormEps); }

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  if (norm_ == NormKind::kRmsNorm) {
    if (kind_ == LayersKind::kScratch)
      return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + kRmsNormEps) * weight;
    return at::rms_norm(x, {weight.size(0)}, weight, kRmsNormEps);
  }
  if (kind_ == LayersKind::kScratch) {
    // As the write-ups' first version: mean and biased variance in plain ops, several kernels.
    auto mean = x.mean(-1, /*keepdim=*/true);
    auto var = (x - mean).pow(2).mean(-1, /*keepdim=*/true);
    return (x - mean) * torch::rsqrt(var + kLayerNormEps) * weight + bias;
  }
  if (glue && x.is_cuda() && at::autocast::is_autocast_enabled(at::kCUDA) &&
      at::autocast::get_autocast_dtype(at::kCUDA) == at::kBFloat16) {
    at::Tensor y = kernels::layernorm_glue(x, weight, bias);
    if (y.defined()) return y;
  }
  return at::layer_norm(x, {weight.size(0)}, weight, bias, kLayerNormEps);
}

torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  if (x.is_cuda()) return at::linear(x, layer->weight, layer->bias);
  // A CPU keeps the frontend's path, as every CPU number in docs/PERFORMANCE.md was measured (at::linear's addmm
  // there is not measured yet).
  return torch::nn::functional::linear(x, layer->weight, layer->bias);
}

torch::Tensor gelu(const torch::Tensor& x, LayersKind kind) {
  if (kind == LayersKind::kScratch) {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + torch::tanh(k * (x + 0.044715 * x.pow(3))));
  }
  return torch::gelu(x, "tanh");
}

torch::Tensor mlp_activation(const torch::Tensor& x, MlpAct act, LayersKind kind) {
  if (act == MlpAct::kRelu2) return torch::relu(x).square();
  return gelu(x, kind);
}

torch::Tensor apply_rope(const torch::Tensor& x, int64_t first) {
  const int64_t T = x.size(2), D = x.size(3), half = D / 2;
  auto f32 = x.options().dtype(torch::kFloat);
  auto inv_freq = torch::pow(kRopeBase, -torch::arange(0, half, f32) * (2.0 / static_cast<double>(D)));  // (D/2,)
  auto angles = torch::outer(torch::arange(first, first + T, f32), inv_freq);                            // (T, D/2)
  auto cos = angles.cos().to(x.scalar_type()), sin = angles.sin().to(x.scalar_type());
  auto x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

void AttentionImpl::position_and_norm(torch::Tensor& q, torch::Tensor& k, int64_t first) const {
  if (o_.qk_norm) q = rms_normalize(q), k = rms_normalize(k);  // before the rotation, as the speedrun does
  if (o_.position == PositionKind::kRope) q = apply_rope(q, first), k = apply_rope(k, first);
}

torch::Tensor AttentionImpl::mix_values(const torch::Tensor& v, const torch::Tensor& ve) const {
  if (!o_.value_embedding) return v;
  if (!ve.defined()) throw std::logic_error("a block with a value embedding was run without one");
  const int64_t B = v.size(0), H = v.size(1), T = v.size(2), D = v.size(3);
  // The speedrun's value embeddings: the token's own vector, learned apart, added to the values it attends with;
  // in the values' dtype (under autocast the table is fp32, the values bf16).
  return (value_lambdas[0] * v + value_lambdas[1] * ve.view({B, T, H, D}).transpose(1, 2)).to(v.scalar_type());
}

AttentionImpl::AttentionImpl(const BlockOptions& o) : o_(o) {
  c_attn = register_module("c_attn", torch::nn::Linear(torch::nn::LinearOptions(o.n_embd, 3 * o.n_embd).bias(o.bias)));
  c_proj = register_module("c_proj", torch::nn::Linear(torch::nn::LinearOptions(o.n_embd, o.n_embd).bias(o.bias)));
  if (o.value_embedding) value_lambdas = register_parameter("value_lambdas", torch::tensor({0.5f, 0.5f}));
  if (o.attention == AttentionKind::kBufferedMask)
    mask_ = register_buffer("mask", torch::ones({o.context, o.context}).tril().view({1, 1, o.context, o.context}));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& ve) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = o_.n_head, D = C / H;
  torch::Tensor q, k, v;  // (B, H, T, D)
  if (o_.fused_glue && o_.layers == LayersKind::kFused) {
    // The same views, with one kernel for their gradients instead of a transposing copy each and a cat.
    auto heads = kernels::qkv_heads(linear(c_attn, x), H);
    q = heads[0], k = heads[1], v = mix_values(heads[2], ve);
  } else {
    auto qkv = linear(c_attn, x).split(C, /*dim=*/2);
    q = qkv[0].view({B, T, H, D}).transpose(1, 2);
    k = qkv[1].view({B, T, H, D}).transpose(1, 2);
    v = mix_values(qkv[2].view({B, T, H, D}).transpose(1, 2), ve);
  }
  position_and_norm(q, k, 0);
  const double p = is_training() ? o_.dropout : 0.0;
  torch::Tensor y;
  if (o_.attention == AttentionKind::kSdpa) {
    y = at::scaled_dot_product_attention(q, k, v, {}, p, /*is_causal=*/true);
  } else {
    auto att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(D)));  // (B, H, T, T)
    if (o_.attention == AttentionKind::kBufferedMask) {
      using torch::indexing::Slice;
      att = att.masked_fill(mask_.index({Slice(), Slice(), Slice(0, T), Slice(0, T)}) == 0,
                            -std::numeric_limits<float>::infinity());
    } else {
      auto future = torch::ones({T, T}, x.options().dtype(torch::kBool)).triu(1);
      att = att.masked_fill(future, -std::numeric_limits<float>::infinity());
    }
    att = torch::softmax(att, -1);
    if (p > 0)
      att = torch::nn::functional::dropout(att, torch::nn::functional::DropoutFuncOptions().p(p).training(true));
    y = torch::matmul(att, v);
  }
  y = y.transpose(1, 2).contiguous().view({B, T, C});
  y = linear(c_proj, y);
  if (p > 0) y = torch::nn::functional::dropout(y, torch::nn::functional::DropoutFuncOptions().p(p).training(true));
  return y;
}

torch::Tensor AttentionImpl::forward_cached(const torch::Tensor& x, KVCache& cache, const torch::Tensor& ve) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = o_.n_head, D = C / H;
  auto qkv = linear(c_attn, x).split(C, /*dim=*/2);
  auto q = qkv[0].view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)
  auto k = qkv[1].view({B, T, H, D}).transpose(1, 2);
  auto v = mix_values(qkv[2].view({B, T, H, D}).transpose(1, 2), ve);
  const int64_t past = cache.length();
  position_and_norm(q, k, past);  // the new tokens sit at positions past ..; the cache holds rotated keys
  cache.k = past ? torch::cat({cache.k, k}, 2) : k;
  cache.v = past ? torch::cat({cache.v, v}, 2) : v;
  torch::Tensor y;
  if (past == 0) {
    y = at::scaled_dot_product_attention(q, cache.k, cache.v, {}, 0.0, /*is_causal=*/true);
  } else if (T == 1) {
    y = at::scaled_dot_product_attention(q, cache.k, cache.v);  // one new token sees everything before it
  } else {
    // New token i (at position past + i) sees keys 0 .. past + i.
    auto allowed = torch::ones({T, past + T}, x.options().dtype(torch::kBool)).tril(past);
    y = at::scaled_dot_product_attention(q, cache.k, cache.v, allowed);
  }
  return linear(c_proj, y.transpose(1, 2).contiguous().view({B, T, C}));
}

torch::Tensor AttentionImpl::head_entropy(const torch::Tensor& x, int64_t head) {
  at::NoGradGuard no_grad;
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = o_.n_head, D = C / H;
  auto qkv = linear(c_attn, x).split(C, /*dim=*/2);
  auto q = qkv[0].view({B, T, H, D}).transpose(1, 2);
  auto k = qkv[1].view({B, T, H, D}).transpose(1, 2);
  position_and_norm(q, k, 0);
  q = q.select(1, head).to(torch::kFloat), k = k.select(1, head).to(torch::kFloat);  // (B, T, D)
  const auto causal = torch::ones({T, T}, x.options().dtype(torch::kBool)).tril();
  // The scale fused attention uses by default (1/sqrt(D)); masked scores are -inf, so their weight is 0.
  const auto scores = (torch::matmul(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(D)))
                          .masked_fill(causal.logical_not(), -std::numeric_limits<float>::infinity());
  const auto logp = torch::log_softmax(scores, -1);
  // 0 · log 0 is 0: the masked entries' -inf log is replaced before the product.
  return -(logp.exp() * logp.masked_fill(causal.logical_not(), 0)).sum(-1).mean();
}

BlockImpl::BlockImpl(const BlockOptions& o) : o_(o) {
  require_implemented(mlp_act_choices(), "model.mlp_act", o.mlp_act);
  require_implemented(position_choices(), "model.position", o.position);
  ln_1 = register_module("ln_1", std::make_shared<LayerNormImpl>(o.n_embd, o.layers, o.norm));
  attn = register_module("attn", std::make_shared<AttentionImpl>(o));
  ln_2 = register_module("ln_2", std::make_shared<LayerNormImpl>(o.n_embd, o.layers, o.norm));
  ln_1->glue = o.fused_glue && o.layers == LayersKind::kFused;
  c_fc = register_module("c_fc", torch::nn::Linear(torch::nn::LinearOptions(o.n_embd, 4 * o.n_embd).bias(o.bias)));
  c_proj = register_module("c_proj", torch::nn::Linear(torch::nn::LinearOptions(4 * o.n_embd, o.n_embd).bias(o.bias)));
}

// The residual stream's add, in a profiler scope of its own: `tokamak bench --kernels` counts the kernels inside it as
// the residual's, where an add alone says nothing of what it is for.
static torch::Tensor residual_add(const torch::Tensor& x, const torch::Tensor& branch) {
  RECORD_FUNCTION("tokamak::residual", std::vector<c10::IValue>());
  return x + branch;
}

bool BlockImpl::fp8_here(const torch::Tensor& x, const torch::nn::LinearImpl& linear) const {
  if (!o_.fp8 || !kernels::fp8_linear_fits(x, linear.weight)) return false;
  const c10::DeviceType device = x.device().type();
  return at::autocast::is_autocast_enabled(device) && at::autocast::get_autocast_dtype(device) == at::kBFloat16;
}

std::pair<torch::Tensor, torch::Tensor> BlockImpl::branches(const torch::Tensor& x, const torch::Tensor& y1,
                                                            const torch::Tensor& ve) {
  auto a = attn->forward(y1, ve);
  torch::Tensor h, y, f;
  // Fused on CUDA: residual add + ln_2 in one kernel, and the GELU's backward fused with c_fc's bias gradient
  // (engine/torch/kernels/, verified on an H200); the CPU's fused kernel is the classifier alone (the CPU's LayerNorm
  // and GELU are the library's).
  const bool fused_cuda = o_.layers == LayersKind::kFused && x.is_cuda() && o_.norm == NormKind::kLayerNorm &&
                          o_.mlp_act == MlpAct::kGelu;  // the CUDA kernels are LayerNorm's and GELU's
  if (fused_cuda) {
    std::tie(h, y) = o_.fused_glue ? kernels::residual_layernorm_glue(x, a, ln_2->weight, ln_2->bias)
                                   : kernels::residual_layernorm(x, a, ln_2->weight, ln_2->bias);
  } else {
    h = residual_add(x, a);
    y = ln_2->forward(h);
  }
  // speed.fp8: c_fc and c_proj through _scaled_mm, the bias in its epilogue and the GELU after it (its backward then
  // apart from the bias gradient), where bf16 autocast is on and the shapes are multiples of 16 (else bf16 as now).
  if (fp8_here(y, *c_fc)) f = mlp_activation(kernels::fp8_linear(y, c_fc->weight, c_fc->bias), o_.mlp_act, o_.layers);
  else if (fused_cuda && c_fc->bias.defined()) f = kernels::bias_gelu(y, c_fc->weight, c_fc->bias, o_.fused_glue);
  else f = mlp_activation(linear(c_fc, y), o_.mlp_act, o_.layers);
  auto m = fp8_here(f, *c_proj) ? kernels::fp8_linear(f, c_proj->weight, c_proj->bias) : linear(c_proj, f);
  if (is_training() && o_.dropout > 0)
    m = torch::nn::functional::dropout(m, torch::nn::functional::DropoutFuncOptions().p(o_.dropout).training(true));
  return {h, m};
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const torch::Tensor& ve) {
  auto [h, m] = branches(x, ln_1->forward(x), ve);
  return residual_add(h, m);
}

std::pair<torch::Tensor, torch::Tensor> BlockImpl::forward_deferred(const torch::Tensor& x,
                                                                    const torch::Tensor& pending,
                                                                    const torch::Tensor& ve) {
  if (!pending.defined()) return branches(x, ln_1->forward(x), ve);
  auto [stream, y1] = kernels::residual_layernorm_glue(x, pending, ln_1->weight, ln_1->bias);
  return branches(stream, y1, ve);
}

torch::Tensor BlockImpl::forward_cached(const torch::Tensor& x, KVCache& cache, const torch::Tensor& ve) {
  auto h = x + attn->forward_cached(ln_1->forward(x), cache, ve);
  return h + linear(c_proj, mlp_activation(linear(c_fc, ln_2->forward(h)), o_.mlp_act, o_.layers));
}

}  // namespace tokamak
