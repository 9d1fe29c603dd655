// The Korthikanti et al. memory estimate (see memory_estimate.h for the formula and its terms).
#include "engine/model/memory_estimate.h"

#include <cstdio>

#include "engine/config/config.h"
#include "engine/model/gpt.h"

namespace tokamak {

MemoryEstimate estimate_memory(const Config& c) {
  MemoryEstimate m;
  m.parameters = count_parameters(GPTOptions::from_config(c.model, c.opt));
  // Autocast keeps fp32 master weights; only bf16-pure holds the weights (and so grads and AdamW state) in bf16.
  const int64_t param_bytes = c.opt.precision == "bf16-pure" ? 2 : 4;
  m.weights = m.parameters * param_bytes;
  m.gradients = m.parameters * param_bytes;
  m.optimizer = 2 * m.parameters * param_bytes;

  const int64_t s = train_context(c), b = c.train.batch_size, h = c.model.n_embd, a = c.model.n_head;
  const int64_t L = c.model.n_layer;
  // Korthikanti's figures are for 16-bit activations; fp32 stores every activation in twice the bytes.
  const int64_t width = (c.opt.precision == "fp32" || c.opt.precision == "tf32") ? 2 : 1;
  // 34·s·b·h: the linear layers' inputs, LayerNorm inputs, GELU input, dropout masks. 5·a·s²·b: the attention
  // scores, softmax output and its dropout mask, which fused attention recomputes instead of storing.
  int64_t per_layer = s * b * h * 34;
  if (c.opt.attention != "sdpa") per_layer += 5 * a * s * s * b;
  per_layer *= width;
  m.activations = c.opt.activation_checkpointing ? L * 2 * s * b * h * width + per_layer : L * per_layer;
  m.logits = 4 * s * b * padded_vocab(c.model);
  return m;
}

const char* format_bytes(int64_t bytes, char* buffer, int size) {
  const double v = static_cast<double>(bytes);
  if (v >= 1e9) std::snprintf(buffer, size, "%.2f GB", v / 1e9);
  else if (v >= 1e6) std::snprintf(buffer, size, "%.0f MB", v / 1e6);
  else if (v >= 1e3) std::snprintf(buffer, size, "%.0f KB", v / 1e3);
  else std::snprintf(buffer, size, "%lld B", static_cast<long long>(bytes));
  return buffer;
}

}  // namespace tokamak
