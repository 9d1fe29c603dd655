// The Korthikanti et al. memory estimate (see memory_estimate.h for the formula and its terms).
#include "engine/base/plan/memory_estimate.h"

#include <algorithm>
#include <limits>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/util/format.h"

namespace tokamak {

ParameterShape parameter_shape(const ModelConfig& m) {
  ParameterShape s;
  s.n_embd = m.n_embd, s.n_layer = m.n_layer, s.context = m.context, s.padded_vocab = padded_vocab(m);
  s.bias = m.qkv_bias;
  // The tables name every value: an unknown one throws here instead of falling back to a default.
  s.rms_norm = m.norm == NormKind::kRmsNorm;
  s.rope = m.position == PositionKind::kRope;
  s.tie_weights = m.tie_weights, s.unet_skips = m.unet_skips, s.value_embeddings = m.value_embeddings;
  return s;
}

int64_t count_parameters(const ParameterShape& o) {
  const int64_t C = o.n_embd;
  const int64_t linear = 12 * C * C + (o.bias ? 9 * C : 0);  // c_attn, attn c_proj, c_fc, mlp c_proj
  const int64_t norm = o.rms_norm ? C : 2 * C;              // RMSNorm has no bias
  const int64_t block = linear + 2 * norm;
  const int64_t head = o.tie_weights ? 0 : o.padded_vocab * C;
  const int64_t positions = o.rope ? 0 : o.context * C;
  const int64_t skips = o.unet_skips ? o.n_layer / 2 : 0;
  int64_t values = o.value_embeddings * o.padded_vocab * C;  // the tables, and each mixing block's two lambdas
  const int64_t k = o.value_embeddings, n = o.n_layer;
  for (int64_t i = 0; i < n; ++i) values += i < k || i >= n - k ? 2 : 0;  // a block of the first or last k
  return o.padded_vocab * C + positions + o.n_layer * block + norm + head + skips + values;
}

MemoryEstimate estimate_memory(const Config& c, Precision precision, int64_t cuda_chunk_bytes) {
  MemoryEstimate m;
  // In double, saturated to int64: the estimate must stay meaningful for the absurd configs it is there to
  // refuse (s·b·a·s and 2·4·parameters overflow int64 long before any bound).
  auto bytes = [](double v) { return v >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(v); };
  m.parameters = count_parameters(parameter_shape(c.model));
  // Autocast keeps fp32 master weights; only bf16-pure holds the weights (and so grads and AdamW state) in bf16.
  const double param_bytes = (precision == Precision::kBf16Pure ? 2.0 : 4.0) * static_cast<double>(m.parameters);
  m.weights = bytes(param_bytes);
  m.gradients = bytes(param_bytes);
  // ZeRO-1 leaves each of N ranks 1/N of AdamW's state (the shards' padding, < N elements a bucket, is ignored).
  const double shards = c.dist.zero == 1 && c.dist.gpus > 1 ? static_cast<double>(c.dist.gpus) : 1.0;
  m.optimizer = bytes(2 * param_bytes / shards);
  m.optimizer_saved = bytes(2 * param_bytes) - m.optimizer;

  const double s = train_context(c), b = c.train.batch_size, h = c.model.n_embd, a = c.model.n_head;
  const double L = c.model.n_layer;
  // Korthikanti's figures are for 16-bit activations; fp32 stores every activation in twice the bytes.
  const double width = (precision == Precision::kFp32 || precision == Precision::kTf32) ? 2 : 1;
  // 34·s·b·h: the linear layers' inputs, LayerNorm inputs, GELU input, dropout masks. 5·a·s²·b: the attention
  // scores, softmax output and its dropout mask, which fused attention recomputes instead of storing.
  double per_layer = s * b * h * 34;
  if (c.speed.attention != AttentionKind::kSdpa) per_layer += 5 * a * s * s * b;
  per_layer *= width;
  // Autocast (bf16 over fp32 weights) keeps the residual stream in fp32, and runs both LayerNorms in fp32, so
  // they keep fp32 inputs: 2 × 2·s·b·h more than Korthikanti's 16-bit count; on CUDA the fused bias + GELU
  // keeps its input as the fp32 LayerNorm output (2·s·b·h more). Without these the estimate ran 2–12% under the
  // allocator's peaks an H200 measured for GPT-2 124M; with them 1.5–3.5% over (docs/PERFORMANCE.md).
  const bool autocast = precision == Precision::kBf16 || precision == Precision::kFp16;
  const bool fused_gelu = resolved_layers(c, precision) == LayersKind::kFused && c.device.rfind("cuda", 0) == 0 &&
                          c.model.norm == NormKind::kLayerNorm && c.model.mlp_act == MlpAct::kGelu &&
                          c.model.qkv_bias;
  // speed.fp8 keeps c_fc's and c_proj's inputs in fp8 (5·s·b·h less than bf16), not counted until a sitting
  // measures it: the estimate stays over; the fp8 MLP has no fused bias + GELU and so no fp32 input kept for it.
  const bool gelu_keeps_fp32 = fused_gelu && !c.speed.fused_glue && !c.speed.fp8;
  if (autocast) per_layer += 4 * s * b * h + (gelu_keeps_fp32 ? 2 * s * b * h : 0);
  // A checkpointed block keeps only its input: the residual stream's dtype (fp32 under autocast).
  const double block_input = (autocast ? 4 : 2 * width) * s * b * h;
  m.activations = bytes(c.speed.activation_checkpointing ? L * block_input + per_layer : L * per_layer);
  const double vocab = static_cast<double>(padded_vocab(c.model));
  if (resolved_layers(c, precision) == LayersKind::kFused) {
    // The fused classifier never holds native's B·T·V logits and their fp32 copies: the rows it keeps (logits,
    // turned into their gradient in place, in the compute dtype) are at most a chunk (kClassifierBlockBytes on a
    // CPU, kClassifierCudaChunkBytes on a GPU), plus the gradients it computes in forward and keeps for backward,
    // dx (B·T·C) and the embedding's dW (V·C, fp32).
    const int64_t chunk = c.device.rfind("cuda", 0) == 0 ? cuda_chunk_bytes : kClassifierBlockBytes;
    const double rows = std::min(2 * width * s * b * vocab, static_cast<double>(chunk));
    m.logits = bytes(rows + 4 * (s * b * h + vocab * h));
  } else {
    // Native's cross-entropy peaks in log_softmax's backward, holding three fp32 B·T·V tensors at once: its
    // saved output, the gradient nll_loss hands it, and the gradient it makes (the bf16 logits and their fp32
    // copy are gone by then). Measured in tests/test_memory_estimate.cpp (nativeHeadPeakIsThreeFp32Logits).
    m.logits = bytes(12 * s * b * static_cast<double>(c.model.vocab_size));
  }
  // On a GPU the allocator holds more than these tensors (the head's cast weight and its gradient's copies, cuBLAS's
  // workspaces, block rounding): 2.62 GiB measured against 2.30 estimated for GPT-2 124M at batch 1 on an H200, the
  // rest rounded up to 352 MiB, so the check covers every bf16 peak measured there (batch 1 to 128, 124M to 1.5B).
  if (c.device.rfind("cuda", 0) == 0) m.overhead = int64_t(352) << 20;
  return m;
}

std::string memory_problem(const Config& c, Precision precision, int64_t available) {
  if (!c.memory_check) return "";
  const MemoryEstimate m = estimate_memory(c, precision);
  // Sum in double: each term is saturated, their sum must not wrap.
  const double total = static_cast<double>(m.weights) + m.optimizer + m.overhead +
                       std::max(static_cast<double>(m.activations) + m.logits, static_cast<double>(m.gradients));
  if (total <= static_cast<double>(available)) return "";
  const char* what = c.device == "cpu" ? "physical memory" : "GPU memory";
  return "the memory estimate for this run (" + format_bytes(total) + ") exceeds the " +
         format_bytes(static_cast<double>(available)) + " of " + what + " on device " + c.device;
}

}  // namespace tokamak
