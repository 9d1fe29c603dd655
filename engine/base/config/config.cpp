// Model presets, validation and derived values of the run configuration.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/config/eval_tasks.h"
#include "engine/base/config/hf_config.h"
#include "engine/base/util/error.h"
#include "engine/base/util/utf8.h"

namespace tokamak {
namespace {

struct Preset {
  const char* name;
  int64_t n_layer, n_head, n_embd, context;
};

// nano and mini are sized for a CPU; the rest are GPT-2's published sizes.
constexpr Preset kPresets[] = {
    {"nano", 4, 4, 128, 128},           {"mini", 6, 6, 384, 256},
    {"gpt2", 12, 12, 768, 1024},        {"gpt2-medium", 24, 16, 1024, 1024},
    {"gpt2-large", 36, 20, 1280, 1024}, {"gpt2-xl", 48, 25, 1600, 1024},
};

// "[1, 100000]" / "(0, 1]", as the registry states a key's range.
std::string range_text(const KeyDoc& k) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s%.15g, %.15g%s", k.min_open ? "(" : "[", k.min, k.max, k.max_open ? ")" : "]");
  return buf;
}

bool in_range(const KeyDoc& k, double v) {
  return (k.min_open ? v > k.min : v >= k.min) && (k.max_open ? v < k.max : v <= k.max);
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
  throw Error("unknown model.preset '" + printable(preset, 60) + "'", "choose one of " + names);  // one line, whatever was typed
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

// Linear in the step, the last warm-up step reaching the full value (as schedule.warmup_steps does for the lr).
int64_t seq_len_at(const Config& c, int64_t step) {
  const int64_t T = train_context(c), w = c.train.seq_warmup;
  if (w <= 0 || step >= w) return T;
  constexpr int64_t kQuantum = 16;  // few distinct shapes: each new one costs kernels a first-call set-up
  const int64_t ramp = (T * (step + 1) + w - 1) / w;
  return std::min(T, std::max(kQuantum, (ramp + kQuantum - 1) / kQuantum * kQuantum));
}

int64_t batch_rows_at(const Config& c, int64_t step) {
  const int64_t B = c.train.batch_size, w = c.train.batch_warmup;
  if (w <= 0 || step >= w) return B;
  return std::min(B, std::max<int64_t>(1, (B * (step + 1) + w - 1) / w));
}

int64_t tokens_at_step(const Config& c, int64_t step) {
  return batch_rows_at(c, step) * seq_len_at(c, step) * grad_accum_steps(c) * std::max<int64_t>(1, c.dist.gpus);
}

LayersKind resolved_layers(const Config& c, Precision precision) {
  const bool is_auto = c.speed.layers == LayersKind::kAuto;
  if (is_auto && c.model.logit_softcap > 0) return LayersKind::kNative;
  // On a GPU, fused layers with activation checkpointing ran GPT-2 XL at 19.6K tok/s against native's 29.2K
  // (H200, 2026-11-26; docs/PERFORMANCE.md, cause not yet found): auto keeps native there.
  const LayersKind layers = resolved_layers(c.speed.layers, c.device, precision);
  if (is_auto && layers == LayersKind::kFused && c.speed.activation_checkpointing && c.device != "cpu")
    return LayersKind::kNative;
  return layers;
}

std::string default_run_name(const Config& c) {
  std::string name = c.model.preset + "-" + name_of(c.speed.precision) + "-" + name_of(c.speed.attention);
  if (c.speed.sdpa_backend != SdpaBackend::kAuto) name += "-" + name_of(c.speed.sdpa_backend);
  // auto is named by what it resolves to (a run names itself after resolving it); native is the plain name.
  if (c.speed.layers != LayersKind::kNative && c.speed.layers != LayersKind::kAuto) name += "-" + name_of(c.speed.layers);
  if (c.speed.fused_adamw) name += "-fusedadam";
  if (c.speed.fp8) name += "-fp8";
  if (c.speed.activation_checkpointing) name += "-ckpt";
  if (c.dist.gpus > 1) name += "-x" + std::to_string(c.dist.gpus);
  // The speedrun's switches, each by its own short name, so two rungs of a speedrun ladder read apart.
  if (c.model.norm != NormKind::kLayerNorm) name += "-" + name_of(c.model.norm);
  if (c.model.mlp_act != MlpAct::kGelu) name += "-" + name_of(c.model.mlp_act);
  if (c.model.position != PositionKind::kLearned) name += "-" + name_of(c.model.position);
  if (c.model.qk_norm) name += "-qknorm";
  if (c.model.logit_softcap > 0) name += "-softcap";
  if (c.model.zero_init_proj) name += "-zeroinit";
  if (c.model.unet_skips) name += "-unet";
  if (c.model.value_embeddings > 0) name += "-ve" + std::to_string(c.model.value_embeddings);
  if (c.optimizer.head_lr > 0) name += "-headlr";
  if (c.optimizer.embed_lr > 0) name += "-embedlr";
  if (c.optimizer.name != OptimizerKind::kAdamW) name += "-" + name_of(c.optimizer.name);
  if (c.optimizer.muon_ns != MuonNs::kNewtonSchulz) name += "-" + name_of(c.optimizer.muon_ns);
  if (c.schedule.name != ScheduleKind::kCosine) name += "-" + name_of(c.schedule.name);
  return name;
}

std::vector<std::string> not_gpt2_switches(const ModelConfig& m) {
  std::vector<std::string> s;
  if (m.norm != NormKind::kLayerNorm) s.push_back("model.norm=" + name_of(m.norm));
  if (m.mlp_act != MlpAct::kGelu) s.push_back("model.mlp_act=" + name_of(m.mlp_act));
  if (m.position != PositionKind::kLearned) s.push_back("model.position=" + name_of(m.position));
  if (m.qk_norm) s.push_back("model.qk_norm=true");
  if (m.logit_softcap > 0) s.push_back("model.logit_softcap=" + std::to_string(m.logit_softcap).substr(0, 6));
  if (m.unet_skips) s.push_back("model.unet_skips=true");
  if (m.value_embeddings > 0) s.push_back("model.value_embeddings=" + std::to_string(m.value_embeddings));
  // zero_init_proj changes only the starting weights: the model is still GPT-2's function.
  return s;
}

namespace {

// Adds WHAT to PROBLEMS when OK is false.
struct Problems {
  std::vector<std::string> list;
  void need(bool ok, const std::string& what) {
    if (!ok) list.push_back(what);
  }
};

// Every numeric key against the range the registry states for it, every choice against its table, and the name.
void key_problems(const Config& c, bool cuda, Problems& p) {
  for (const KeyDoc& k : config_keys(c)) {
    if (k.ranged) p.need(in_range(k, k.number), k.key + " must be in " + range_text(k) + ", got " + k.value);
    if (!choices_of(k.key).empty()) {
      const std::string problem = choice_problem(k.key, k.value, cuda);
      p.need(problem.empty(), problem);
    }
  }
  // The name becomes a folder and goes into every JSON line: refused here, before anything starts.
  const std::string bad_name = name_problem("name", c.name);
  p.need(bad_name.empty(), bad_name + ": type the name again in UTF-8, or leave it out for a derived one");
}

// The model section on its own.
void model_problems(const ModelConfig& m, Problems& p) {
  if (m.n_head >= 1 && m.n_embd >= 1)
    p.need(m.n_embd % m.n_head == 0, "model.n_head (" + std::to_string(m.n_head) + ") must divide model.n_embd (" +
                                         std::to_string(m.n_embd) + "): change one of them");
  if (m.position == PositionKind::kRope && m.n_head >= 1 && m.n_embd % m.n_head == 0)
    p.need((m.n_embd / m.n_head) % 2 == 0,
           "model.position=rope rotates pairs of a head's dimensions, but n_embd / n_head (" +
               std::to_string(m.n_embd / m.n_head) + ") is odd: change model.n_head");
  const std::string tables = std::to_string(m.value_embeddings);
  p.need(2 * m.value_embeddings <= m.n_layer,
         "model.value_embeddings=" + tables + " mixes each table into one of the first and one of the last blocks, " +
             "which needs 2 × " + tables + " blocks, but model.n_layer=" + std::to_string(m.n_layer) +
             ": lower model.value_embeddings or raise model.n_layer");
  p.need(!(m.unet_skips && m.n_layer < 2),
         "model.unet_skips joins the first half of the blocks to the second, but model.n_layer=" +
             std::to_string(m.n_layer) + " has no halves: raise model.n_layer or set model.unet_skips=false");
  // The speedrun's switches where they cannot run.
  const std::vector<std::string> not_gpt2 = not_gpt2_switches(m);
  if (!m.init_from.empty() && !not_gpt2.empty()) {
    std::string names;
    for (const std::string& n : not_gpt2) names += (names.empty() ? "" : ", ") + n;
    p.list.push_back("model.init_from loads GPT-2 weights, but " + names +
                     " make another model: leave those at their defaults or clear model.init_from");
  }
  const std::string weights = init_from_problem(m);
  p.need(weights.empty(), weights);
}

// The batch's and the validation's sizes against the context and the ranks.
void size_problems(const Config& c, Problems& p) {
  const TrainConfig& t = c.train;
  p.need(train_context(c) <= c.model.context, "train.context (" + std::to_string(train_context(c)) +
                                                  ") is longer than model.context (" +
                                                  std::to_string(c.model.context) +
                                                  "): lower train.context or raise model.context");
  const int64_t per_micro = t.batch_size * train_context(c) * std::max<int64_t>(1, c.dist.gpus);
  if (t.batch_tokens > 0)
    p.need(per_micro > 0 && t.batch_tokens % per_micro == 0 && t.batch_tokens >= per_micro,
           "train.batch_tokens (" + std::to_string(t.batch_tokens) +
               ") must be a multiple of batch_size × context × gpus (" + std::to_string(per_micro) + ")");
  if (c.eval.val_tokens > 0)
    p.need(per_micro > 0 && c.eval.val_tokens % per_micro == 0,
           "eval.val_tokens (" + std::to_string(c.eval.val_tokens) +
               ") must be a multiple of batch_size × context × gpus (" + std::to_string(per_micro) +
               "), so every validation token is evaluated once: change one of them");
}

// The device named against the GPUs this machine has (CUDA_DEVICES of them).
void device_problems(const Config& c, bool cuda, int cuda_devices, Problems& p) {
  int index = -1;
  try {
    parse_device_kind(c.device, &index);
  } catch (const Error&) {
    return;  // key_problems has named it
  }
  if (cuda && cuda_devices == 0) {
    // A queue that hands out GPUs (engine/fleet/queue/gpu_slots.h) sets CUDA_VISIBLE_DEVICES: name what it said.
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    p.list.push_back("device is '" + c.device + "' but no CUDA GPU is visible" +
                     (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : std::string()) +
                     ": set device=cpu");
  }
  if (index >= 0 && cuda_devices > 0)
    p.need(index < cuda_devices,
           "device " + c.device + " does not exist: this machine has " + std::to_string(cuda_devices) + " GPU(s)");
}

// speed.cuda_graphs against what a replayed step cannot do: one captured step, the same shapes, no host work
// inside it, one process.
void cuda_graph_problems(const Config& c, Problems& p) {
  const TrainConfig& t = c.train;
  p.need(t.batch_warmup == 0 && t.seq_warmup == 0,
         "speed.cuda_graphs replays one captured step, but train.batch_warmup / train.seq_warmup change the batch's "
         "shape: set them to 0 or speed.cuda_graphs=false");
  const int64_t micro = t.batch_size * train_context(c) * std::max<int64_t>(1, c.dist.gpus);
  p.need(t.grad_accum <= 1 && (t.batch_tokens <= 0 || t.batch_tokens == micro),
         "speed.cuda_graphs with gradient accumulation is not implemented yet: set train.grad_accum=1 (and "
         "train.batch_tokens=0) or speed.cuda_graphs=false");
  p.need(c.dist.gpus <= 1,
         "speed.cuda_graphs with data parallel (dist.gpus > 1) is not implemented yet: set speed.cuda_graphs=false");
  p.need(c.optimizer.name == OptimizerKind::kAdamW && c.speed.fused_adamw,
         "speed.cuda_graphs needs fused AdamW (its lr and bias correction stay on the GPU), but optimizer.name=" +
             name_of(c.optimizer.name) + (c.speed.fused_adamw ? "" : " with speed.fused_adamw=false") +
             ": set optimizer.name=adamw and speed.fused_adamw=true, or speed.cuda_graphs=false");
  p.need(!(c.model.dropout > 0),
         "speed.cuda_graphs with model.dropout > 0 is not implemented yet: set model.dropout=0 or "
         "speed.cuda_graphs=false");
  // The recomputed forward reads the CUDA generator's state, which a capture forbids.
  p.need(!c.speed.activation_checkpointing,
         "speed.cuda_graphs with speed.activation_checkpointing is not implemented yet: set "
         "speed.activation_checkpointing=false or speed.cuda_graphs=false");
  p.need(!(c.health.spike_action == SpikeAction::kSkip || c.health.spike_action == SpikeAction::kRollback),
         "health.spike_action=" + name_of(c.health.spike_action) +
             " decides on the host before each update, which a replayed CUDA graph cannot: set "
             "health.spike_action=warn or speed.cuda_graphs=false");
  p.need(c.speed.precision != Precision::kFp16,
         "speed.cuda_graphs with speed.precision=fp16 is not implemented yet (the loss scale's skipped steps are not in "
         "the captured step): set speed.cuda_graphs=false, or speed.precision=bf16 on a GPU that has it");
}

// The speed switches against the precision, the layers and the shapes they need.
void speed_problems(const Config& c, Problems& p) {
  const Precision precision = c.speed.precision;
  const LayersKind layers = c.speed.layers;
  // FlashAttention and cuDNN's attention take 16-bit inputs only; LibTorch refuses fp32 ones at the first step.
  const bool fp32_inputs = precision == Precision::kFp32 || precision == Precision::kTf32;
  p.need(!(fp32_inputs && (c.speed.sdpa_backend == SdpaBackend::kFlash || c.speed.sdpa_backend == SdpaBackend::kCudnn)),
         "speed.sdpa_backend=" + name_of(c.speed.sdpa_backend) + " needs 16-bit attention inputs, but speed.precision=" +
             name_of(precision) + " gives fp32 ones: set speed.precision=bf16 or speed.sdpa_backend=auto");
  // fp16's paths that have no fp16 yet are refused, each naming what runs instead.
  p.need(!(precision == Precision::kFp16 && layers == LayersKind::kFused),
         "speed.layers=fused has no fp16 kernels yet (its classifier and glue are fp32 and bf16): set "
         "speed.layers=native (the library's kernels; auto picks them for fp16) or speed.precision=bf16");
  if (c.speed.cuda_graphs) cuda_graph_problems(c, p);
  p.need(!(c.speed.fused_glue && (layers == LayersKind::kNative || layers == LayersKind::kScratch ||
                                  (precision != Precision::kBf16 && precision != Precision::kAuto))),
         "speed.fused_glue changes the fused layers' bf16 kernels, but speed.layers=" + name_of(layers) +
             " with speed.precision=" + name_of(precision) +
             " has none to change: set speed.layers=fused and speed.precision=bf16, or speed.fused_glue=false");
  if (c.speed.fp8) {
    // The fp8 matmul writes bf16 and keeps autocast's fp32 master weights; pure bf16 has no autocast to sit in.
    p.need(precision == Precision::kBf16 || precision == Precision::kAuto,
           "speed.fp8 runs the MLP's matmuls in fp8 under bf16 autocast, but speed.precision=" + name_of(precision) +
               ": set speed.precision=bf16 or speed.fp8=false");
    // _scaled_mm takes dimensions that are multiples of 16: n_embd (and 4·n_embd) and the batch's rows.
    p.need(c.model.n_embd % 16 == 0, "speed.fp8's matmuls need model.n_embd a multiple of 16, but it is " +
                                         std::to_string(c.model.n_embd) + ": change model.n_embd or set speed.fp8=false");
    const int64_t rows = c.train.batch_size * train_context(c);
    p.need(rows % 16 == 0, "speed.fp8's matmuls need train.batch_size × the context a multiple of 16, but it is " +
                               std::to_string(rows) + ": change train.batch_size or set speed.fp8=false");
  }
  p.need(!(c.model.logit_softcap > 0 && layers == LayersKind::kFused),
         "model.logit_softcap needs the logits, which speed.layers=fused never stores: set speed.layers=native or "
         "model.logit_softcap=0");
  p.need(!(c.model.value_embeddings > 0 && c.speed.activation_checkpointing),
         "model.value_embeddings cannot run with speed.activation_checkpointing yet (the checkpointed block takes one "
         "input): set speed.activation_checkpointing=false or model.value_embeddings=0");
}

// The optimizer against the model and the ranks; the health watch and the evaluation against what they need.
void optimizer_and_run_problems(const Config& c, Problems& p) {
  const OptimizerConfig& o = c.optimizer;
  p.need(!(o.name != OptimizerKind::kAdamW && c.dist.zero == 1),
         "optimizer.name=" + name_of(o.name) +
             " cannot run with dist.zero=1: ZeRO-1 shards flat buckets elementwise, and Muon's orthogonalisation "
             "needs each whole matrix's gradient on one rank: set dist.zero=0");
  p.need(!(o.head_lr > 0 && c.model.tie_weights),
         "optimizer.head_lr gives the head its own lr, but model.tie_weights=true makes the head the token "
         "embedding: set model.tie_weights=false or optimizer.head_lr=0");
  p.need(!(o.muon_ns != MuonNs::kNewtonSchulz && o.name == OptimizerKind::kAdamW),
         "optimizer.muon_ns=" + name_of(o.muon_ns) +
             " chooses how Muon orthogonalises its update, but optimizer.name=adamw has "
             "no such step: set optimizer.name=muon or optimizer.muon_ns=newton_schulz");
  if (c.health.spike_action == SpikeAction::kRollback) {
    p.need(c.checkpoint.every > 0,
           "health.spike_action=rollback goes back to the last checkpoint, but checkpoint.every=0 writes none while "
           "training: set checkpoint.every (say 100) or health.spike_action=skip");
    p.need(c.dist.gpus <= 1, "health.spike_action=rollback with data parallel (dist.gpus > 1) is not implemented "
                             "yet: set health.spike_action=skip");
  }
  const int64_t layers = c.metrics.layers_every;
  p.need(layers <= 0 || layers % c.train.log_every == 0,
         "metrics.layers_every=" + std::to_string(layers) + " is not a multiple of train.log_every=" +
             std::to_string(c.train.log_every) + ": the layers are read with a report; set metrics.layers_every=" +
             std::to_string(std::max<int64_t>(c.train.log_every, layers / c.train.log_every * c.train.log_every)) +
             " (or 0: every report)");
  p.need(!(c.eval.stop_at_target && c.eval.target_val_loss <= 0),
         "eval.stop_at_target needs eval.target_val_loss > 0: set the target or turn stop_at_target off");
  for (const std::string& e : eval_task_problems(c)) p.list.push_back(e);
}

}  // namespace

// Each section checks itself (the keys, the model), then the checks across sections.
std::vector<std::string> config_problems(const Config& c, int cuda_devices) {
  Problems p;
  const bool cuda = c.device != "cpu" && c.device.rfind("cuda", 0) == 0;
  key_problems(c, cuda, p);
  model_problems(c.model, p);
  size_problems(c, p);
  device_problems(c, cuda, cuda_devices, p);
  speed_problems(c, p);
  optimizer_and_run_problems(c, p);
  return p.list;
}

void validate_config(const Config& c, int cuda_devices) {
  auto problems = config_problems(c, cuda_devices);
  if (!problems.empty()) {
    std::string more = problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more problem(s))" : "";
    throw Error("config: " + problems.front() + more,
                "fix it with --set KEY=VALUE; `tokamak config --defaults` lists the keys");
  }
}

}  // namespace tokamak
