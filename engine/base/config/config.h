// The run configuration: one typed tree, a section per concern (data, model, train, optimizer, schedule, eval,
// sample, checkpoint, speed, health, dist). Every field has a dotted key (`train.steps`) used by `--set`, JSON files, the
// studio and the run store; config_keys() lists them, and keys of older releases still load (renamed_keys.h).
// Defaults are the fast settings that do not change what the model learns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/config/choices.h"

namespace tokamak {

// Each field's meaning, valid range and default are its key's row in the registry (config_keys.cpp): the one
// description that `tokamak config --keys`, the CLI's errors and the studio's tooltips all read. Comments here
// say only why a default is what it is.
// A key with a table of values (choices.h) is its enum here: the registry turns the text of a config file or a
// --set into it, refusing an unknown value as it reads it, so the engine compares enums, never strings. The
// device stays text: it carries a GPU's number (cuda:1).
struct DataConfig {
  std::string path = "default";
  double val_fraction = 0.05;
  std::string jsonl_field = "text";
  std::string val_path;
};

struct ModelConfig {
  std::string preset = "nano";
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  int64_t context = 128;
  int64_t vocab_size = 50257;
  int64_t vocab_pad_multiple = 64;
  bool tie_weights = true;
  double dropout = 0.0;
  bool qkv_bias = true;
  // The speedrun's model switches (modded-nanogpt); the defaults are GPT-2, so Hugging Face export and init_from
  // work (not_gpt2_switches() names any other value).
  NormKind norm = NormKind::kLayerNorm;
  MlpAct mlp_act = MlpAct::kGelu;
  PositionKind position = PositionKind::kLearned;
  bool qk_norm = false;
  double logit_softcap = 0;
  bool zero_init_proj = false;
  bool unet_skips = false;
  int64_t value_embeddings = 0;
  std::string init_from;
};

// The shape and length of training: batches, steps, the warm-ups of the batch's shape, reporting.
struct TrainConfig {
  int64_t batch_size = 16;
  int64_t context = 0;  // 0 = model.context
  int64_t grad_accum = 1;
  int64_t batch_tokens = 0;
  int64_t steps = 300;
  int64_t max_skipped_steps = 5;
  int64_t seed = 1337;
  int64_t log_every = 10;  // a report is the loop's only host sync
  bool profile = true;
  int64_t seq_warmup = 0;
  int64_t batch_warmup = 0;
};

// The optimizer and its learning rates (every group's peak, on the schedule below).
struct OptimizerConfig {
  OptimizerKind name = OptimizerKind::kAdamW;
  double lr = 2e-3;
  double head_lr = 0;   // 0 = lr
  double embed_lr = 0;  // 0 = lr
  double muon_lr = 0.02;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;
  double muon_momentum = 0.95;
  MuonNs muon_ns = MuonNs::kNewtonSchulz;
  double normuon_beta2 = 0.95;
};

// The learning-rate schedule every group follows.
struct ScheduleConfig {
  ScheduleKind name = ScheduleKind::kCosine;
  int64_t warmup_steps = 30;
  double min_lr_ratio = 0.1;
  double decay_fraction = 0.2;
};

struct EvalConfig {
  int64_t every = 100;
  int64_t batches = 8;
  int64_t val_tokens = 0;
  std::string tasks;
  double target_val_loss = 0;
  bool stop_at_target = false;
};

struct SampleConfig {
  int64_t every = 100;
  int64_t tokens = 48;
  std::string prompt = "The";
  double temperature = 0.8;
  int64_t top_k = 40;
};

struct CheckpointConfig {
  int64_t every = 0;
  double minutes = 30;  // docs/ARCHITECTURE.md: why wall-clock time rather than steps
  int64_t keep = 3;
  std::string dir;
  std::string resume;
};

// The speed switches: how the same model is computed (choices.cpp: each choice's values, what they do and where
// they run). None of them changes what the model learns beyond its stated tolerance.
struct SpeedConfig {
  Precision precision = Precision::kAuto;
  AttentionKind attention = AttentionKind::kSdpa;
  SdpaBackend sdpa_backend = SdpaBackend::kAuto;
  LayersKind layers = LayersKind::kAuto;
  bool fused_adamw = true;
  PinMemory pin_memory = PinMemory::kAuto;
  bool prefetch = true;
  bool cuda_graphs = false;
  bool fused_glue = false;
  bool fp8 = false;  // not in auto until a sitting has compared its loss with bf16 over 1,000+ steps
  bool activation_checkpointing = false;
  // speed.precision=fp16's dynamic loss scale (engine/torch/train/loss_scaler.h): PyTorch GradScaler's defaults.
  double loss_scale_init = 65536;
  double loss_scale_growth = 2;
  double loss_scale_backoff = 0.5;
  int64_t loss_scale_interval = 2000;
};

// How a run watches itself (engine/torch/train/health.h): a step whose loss or gradient norm stands far above the recent
// ones is a spike. warn by default: noticing must never change what a healthy run learns.
struct HealthConfig {
  SpikeAction spike_action = SpikeAction::kWarn;
  int64_t spike_window = 50;
  double spike_threshold = 8;  // robust z: (x - median) / (1.4826 · MAD); a normal step is within 3
  // The gradient norm's: on ordinary batches early in training it reaches 10–13 (a 2-block model, batch 16 × 32).
  double grad_norm_threshold = 20;
  int64_t max_spikes = 20;
  double rollback_lr_scale = 1;
  int64_t rollback_lr_steps = 0;
  // Pace: a slowdown is tok/s below this fraction of its running median for slowdown_reports reports in a row; a
  // follower calls a run stalled after stall_factor × the median time between its reports, at least stall_min_s.
  double slowdown_fraction = 0.7;
  int64_t slowdown_reports = 3;
  double stall_factor = 10;
  double stall_min_s = 60;  // an evaluation or a checkpoint pauses the steps for a while
  double stall_requeue_minutes = 0;  // the queue ends and requeues a run stalled this long; 0 = never (it waits)
};

// What a run measures beyond the step's own numbers (engine/torch/train/layer_stats.h).
struct MetricsConfig {
  // Per-layer statistics (weight, gradient and update RMS per parameter group; activation RMS and attention entropy
  // per block): 0 = with every report, N = every N steps (a multiple of train.log_every), -1 = never.
  int64_t layers_every = 0;
};

struct DistConfig {
  int64_t gpus = 1;
  // Ten minutes (PyTorch's NCCL default): the other ranks wait in a collective while rank 0 writes a checkpoint,
  // 18 GB for GPT-2 1.5B with AdamW.
  int64_t timeout_s = 600;
  double bucket_mb = 25;
  int64_t zero = 0;
};

struct Config {
  DataConfig data;
  ModelConfig model;
  TrainConfig train;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  EvalConfig eval;
  SampleConfig sample;
  CheckpointConfig checkpoint;
  SpeedConfig speed;
  HealthConfig health;
  MetricsConfig metrics;
  DistConfig dist;
  std::string device = "cpu";
  int64_t threads = 0;
  bool memory_check = true;
  std::string name;
};

struct KeyDoc {
  std::string key;    // "train.steps"
  std::string type;   // bool | int | float | string
  std::string value;  // the value in the config it was read from, as --set takes it
  std::string help;
  // Numeric keys: the valid range, stated in the registry and enforced by config_problems(); an open bound
  // excludes itself ("(0, 1]" has min_open).
  bool ranged = false;
  bool min_open = false, max_open = false;
  double min = 0, max = 0;
  double number = 0;  // the value itself, for numeric keys (value's text is rounded for display)
};

// Every key of the tree with its type, the value in `config` and its comment, in tree order.
std::vector<KeyDoc> config_keys(const Config& config = Config{});
// `--set key=value`. Unknown keys name the nearest valid one; values are type-checked.
void set_key(Config& config, const std::string& key, const std::string& value);
// Applies a list of "key=value" overrides; model.preset is applied first, so sizes given with it win.
void apply_overrides(Config& config, const std::vector<std::string>& assignments);
// Sets the model sizes of a named preset (and model.preset itself).
void apply_model_preset(ModelConfig& model, const std::string& preset);
std::vector<std::string> model_presets();

std::string config_to_json(const Config& config, int indent = 2);
// Unknown keys and wrong types are errors; keys not in the JSON keep their value in `base`. With `left_out`, a
// reader of a file another version wrote (the studio's saved setup): such a key is skipped and named there
// instead, and the rest still loads (bad JSON, or a non-object, still throws).
Config config_from_json(const std::string& json, const Config& base = Config{},
                        std::vector<std::string>* left_out = nullptr);

// Everything wrong with a config, each a line that names the key to change; empty when it can run.
// cuda_devices is how many GPUs this machine has (CUDA-only switches are problems when it is 0).
std::vector<std::string> config_problems(const Config& config, int cuda_devices);
// Throws tokamak::Error with the first problem.
void validate_config(const Config& config, int cuda_devices);

// Derived values.
int64_t train_context(const Config& config);  // T
int64_t padded_vocab(const ModelConfig& model);
int64_t grad_accum_steps(const Config& config);  // from batch_tokens when set
int64_t tokens_per_step(const Config& config);   // B * T * grad_accum * gpus
// The warm-ups (train.seq_warmup, train.batch_warmup) at 0-based `step`: the sequence length trained on, the
// sequences of each micro-batch, and the tokens the whole step takes (all ranks); the full values after them.
int64_t seq_len_at(const Config& config, int64_t step);
int64_t batch_rows_at(const Config& config, int64_t step);
int64_t tokens_at_step(const Config& config, int64_t step);
std::string default_run_name(const Config& config);
// speed.layers=auto made concrete for this config under a resolved precision: resolved_layers (choices.h), but
// native whenever the model needs the logits that fused never stores (model.logit_softcap).
LayersKind resolved_layers(const Config& config, Precision precision);
// The model switches that make this model something other than GPT-2 ("model.norm=rmsnorm", ...), in registry
// order; empty for a GPT-2. Hugging Face GPT-2 export and model.init_from refuse such a model, naming these.
std::vector<std::string> not_gpt2_switches(const ModelConfig& model);

}  // namespace tokamak
