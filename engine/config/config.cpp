// Model presets, validation and derived values of the run configuration.
#include <thread>

#include "engine/config/config.h"
#include "engine/util/error.h"

namespace tokamak {
namespace {

struct Preset {
  const char* name;
  int64_t n_layer, n_head, n_embd, context;
};

// nano and mini are sized for a CPU; the rest are GPT-2's published sizes.
constexpr Preset kPresets[] = {
    {"nano", 4, 4, 128, 128},          {"mini", 6, 6, 384, 256},
    {"gpt2", 12, 12, 768, 1024},       {"gpt2-medium", 24, 16, 1024, 1024},
    {"gpt2-large", 36, 20, 1280, 1024}, {"gpt2-xl", 48, 25, 1600, 1024},
};

bool one_of(const std::string& v, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (v == o) return true;
  return false;
}

}  // namespace

std::vector<std::string> model_presets() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.push_back(p.name);
  names.push_back("custom");
  return names;
}

void apply_model_preset(ModelConfig& model, const std::string& preset) {
  model.preset = preset;
  if (preset == "custom") return;
  for (const Preset& p : kPresets) {
    if (preset == p.name) {
      model.n_layer = p.n_layer, model.n_head = p.n_head, model.n_embd = p.n_embd, model.context = p.context;
      return;
    }
  }
  std::string names;
  for (const std::string& n : model_presets()) names += (names.empty() ? "" : ", ") + n;
  throw Error("unknown model.preset '" + preset + "'", "choose one of " + names);
}

int64_t train_context(const Config& c) { return c.train.context > 0 ? c.train.context : c.model.context; }

int64_t padded_vocab(const ModelConfig& m) {
  int64_t k = std::max<int64_t>(1, m.vocab_pad_multiple);
  return (m.vocab_size + k - 1) / k * k;
}

int64_t grad_accum_steps(const Config& c) {
  if (c.train.batch_tokens <= 0) return c.train.grad_accum;
  int64_t per_micro = c.train.batch_size * train_context(c) * std::max<int64_t>(1, c.dist.gpus);
  return per_micro > 0 ? c.train.batch_tokens / per_micro : 0;
}

int64_t tokens_per_step(const Config& c) {
  return c.train.batch_size * train_context(c) * grad_accum_steps(c) * std::max<int64_t>(1, c.dist.gpus);
}

std::string default_run_name(const Config& c) {
  std::string name = c.model.preset + "-" + c.opt.precision + "-" + c.opt.attention;
  if (c.opt.layers != "native") name += "-" + c.opt.layers;
  if (c.opt.fused_adamw) name += "-fusedadam";
  if (c.opt.activation_checkpointing) name += "-ckpt";
  if (c.dist.gpus > 1) name += "-x" + std::to_string(c.dist.gpus);
  return name;
}

std::vector<std::string> config_problems(const Config& c, int cuda_devices) {
  std::vector<std::string> p;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) p.push_back(what);
  };
  const ModelConfig& m = c.model;
  const TrainConfig& t = c.train;
  need(m.n_layer >= 1, "model.n_layer must be at least 1");
  need(m.n_head >= 1, "model.n_head must be at least 1");
  need(m.n_embd >= 1, "model.n_embd must be at least 1");
  if (m.n_head >= 1 && m.n_embd >= 1)
    need(m.n_embd % m.n_head == 0, "model.n_head (" + std::to_string(m.n_head) + ") must divide model.n_embd (" +
                                       std::to_string(m.n_embd) + "): change one of them");
  need(m.context >= 2, "model.context must be at least 2");
  need(m.vocab_size >= 2 && m.vocab_size <= 65536, "model.vocab_size must be in 2..65536 (shards hold uint16 ids)");
  need(m.vocab_pad_multiple >= 1, "model.vocab_pad_multiple must be at least 1 (1 = no padding)");
  need(m.dropout >= 0 && m.dropout < 1, "model.dropout must be in [0, 1)");
  need(t.context >= 0, "train.context must be 0 (= model.context) or positive");
  need(train_context(c) <= m.context, "train.context (" + std::to_string(train_context(c)) +
                                          ") is longer than model.context (" + std::to_string(m.context) +
                                          "): lower train.context or raise model.context");
  need(t.batch_size >= 1, "train.batch_size must be at least 1");
  need(t.grad_accum >= 1, "train.grad_accum must be at least 1");
  if (t.batch_tokens > 0) {
    int64_t per_micro = t.batch_size * train_context(c) * std::max<int64_t>(1, c.dist.gpus);
    need(per_micro > 0 && t.batch_tokens % per_micro == 0 && t.batch_tokens >= per_micro,
         "train.batch_tokens (" + std::to_string(t.batch_tokens) + ") must be a multiple of batch_size × context × gpus (" +
             std::to_string(per_micro) + ")");
  }
  need(t.steps >= 1, "train.steps must be at least 1");
  need(t.lr > 0, "train.lr must be positive");
  need(t.min_lr_ratio >= 0 && t.min_lr_ratio <= 1, "train.min_lr_ratio must be in [0, 1]");
  need(t.warmup_steps >= 0, "train.warmup_steps must not be negative");
  need(t.weight_decay >= 0, "train.weight_decay must not be negative");
  need(t.beta1 >= 0 && t.beta1 < 1 && t.beta2 >= 0 && t.beta2 < 1, "train.beta1 and train.beta2 must be in [0, 1)");
  need(t.grad_clip >= 0, "train.grad_clip must be 0 (off) or positive");
  need(t.log_every >= 1, "train.log_every must be at least 1");
  need(t.eval_every >= 0 && t.eval_batches >= 1, "train.eval_every must be >= 0 and train.eval_batches >= 1");
  need(t.sample_every >= -1, "train.sample_every must be -1 (never), 0 (at the end) or positive");
  need(t.sample_tokens >= 1, "train.sample_tokens must be at least 1");
  need(t.sample_temperature > 0, "train.sample_temperature must be positive");
  need(t.sample_top_k >= 0, "train.sample_top_k must be 0 (off) or positive");
  need(t.checkpoint_every >= 0, "train.checkpoint_every must be 0 (at the end) or positive");
  need(t.checkpoint_minutes >= 0, "train.checkpoint_minutes must be 0 (off) or positive");
  need(t.checkpoint_keep >= 0, "train.checkpoint_keep must be 0 (keep all) or positive");
  need(c.data.val_fraction >= 0 && c.data.val_fraction < 1, "data.val_fraction must be in [0, 1)");
  need(c.threads >= 0, "threads must be 0 (all cores) or positive");
  need(c.dist.gpus >= 1, "dist.gpus must be at least 1");
  need(c.dist.timeout_s >= 1, "dist.timeout_s must be at least 1 second");
  need(c.dist.bucket_mb > 0, "dist.bucket_mb must be positive");

  const OptConfig& o = c.opt;
  need(one_of(o.precision, {"fp32", "tf32", "bf16", "bf16-pure", "fp16"}),
       "opt.precision '" + o.precision + "' is not one of fp32, tf32, bf16, bf16-pure, fp16");
  need(one_of(o.attention, {"buffered-mask", "naive", "sdpa"}),
       "opt.attention '" + o.attention + "' is not one of buffered-mask, naive, sdpa");
  need(one_of(o.layers, {"scratch", "native", "fused"}), "opt.layers '" + o.layers + "' is not one of scratch, native, fused");

  bool cuda = c.device.rfind("cuda", 0) == 0;
  need(c.device == "cpu" || c.device == "cuda" || c.device.rfind("cuda:", 0) == 0,
       "device '" + c.device + "' is not cpu, cuda or cuda:N");
  if (cuda && cuda_devices == 0)
    p.push_back("device is '" + c.device + "' but no CUDA GPU is visible: set device=cpu");
  if (c.device.rfind("cuda:", 0) == 0 && cuda_devices > 0) {
    int index = std::atoi(c.device.c_str() + 5);
    need(index >= 0 && index < cuda_devices, "device " + c.device + " does not exist: this machine has " +
                                                 std::to_string(cuda_devices) + " GPU(s)");
  }
  if (!cuda) {
    auto cuda_only = [&](bool used, const std::string& what) {
      if (used) p.push_back(what + " needs a CUDA device: set device=cuda or turn it off");
    };
    cuda_only(o.precision == "tf32", "opt.precision=tf32");
    cuda_only(o.precision == "fp16", "opt.precision=fp16");
    cuda_only(o.layers == "fused", "opt.layers=fused");
    cuda_only(o.pin_memory, "opt.pin_memory");
    cuda_only(o.cuda_graphs, "opt.cuda_graphs");
  }
  return p;
}

void validate_config(const Config& c, int cuda_devices) {
  auto problems = config_problems(c, cuda_devices);
  if (!problems.empty()) {
    std::string more = problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more problem(s))" : "";
    throw Error("config: " + problems.front() + more, "fix it with --set KEY=VALUE; `tokamak config --defaults` lists the keys");
  }
}

}  // namespace tokamak
