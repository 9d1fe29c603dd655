// The run configuration: one typed tree, a section per concern, a comment on every field. Every field has a
// dotted key (`train.steps`) used by `--set`, JSON files, the studio and the run store; config_keys() lists
// them. Defaults are the fast settings that do not change what the model learns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

struct DataConfig {
  std::string path = "default";      // "default" (The Jargon File), a text file, a folder of text files, or .bin shards
  double val_fraction = 0.05;        // tail of the tokens held out for validation when there are no *_val_* shards
  std::string jsonl_field = "text";  // FILE.jsonl: the field of each line that holds its document
  // A separate validation source (fineweb10B's val shard, say): all of its tokens are validation, and neither
  // the data's own val shards nor a val_fraction tail are used; "" = those, as before.
  std::string val_path;
};

struct ModelConfig {
  std::string preset = "nano";      // nano | mini | gpt2 | gpt2-medium | gpt2-large | gpt2-xl; sizes below override it
  int64_t n_layer = 4;              // transformer blocks
  int64_t n_head = 4;               // attention heads; must divide n_embd
  int64_t n_embd = 128;             // width
  int64_t context = 128;            // longest sequence the model can see (position embeddings)
  int64_t vocab_size = 50257;       // GPT-2's tokenizer
  int64_t vocab_pad_multiple = 64;  // pad the embedding rows to a multiple of this (1 = no padding); padded
                                    // logits are masked, so they never win a sample or change the loss
  bool tie_weights = true;          // lm_head shares the token embedding (-38M parameters at 124M)
  double dropout = 0.0;             // on attention weights, residual branches and embeddings
  bool qkv_bias = true;             // GPT-2 has biases on every linear layer
  // The speedrun's model switches (modded-nanogpt); the defaults are GPT-2. Any other value makes a model that
  // is no longer GPT-2 (Hugging Face export and init_from refuse it: not_gpt2_switches()).
  std::string norm = "layernorm";    // layernorm | rmsnorm (choices.cpp)
  std::string mlp_act = "gelu";      // gelu | relu2
  std::string position = "learned";  // learned | rope
  bool qk_norm = false;              // RMS-normalise each head's queries and keys before attention
  double logit_softcap = 0;          // > 0: logits = cap · tanh(logits / cap); 0 = off
  bool zero_init_proj = false;       // output projections (attention and MLP c_proj, an untied head) start at zero
  // U-net skips: a learned weight per pair adds block k's output to the input of block n_layer - 1 - k, for each k
  // of the first half (the weights start at 1)
  bool unet_skips = false;
  // k > 0: k extra token-embedding tables; table i is mixed into the attention values of block i and of block
  // n_layer - k + i (v ← λ0·v + λ1·table_i[token], λ learned from (0.5, 0.5)); 0 = off
  int64_t value_embeddings = 0;
  std::string init_from;  // Hugging Face GPT-2 weights (folder or model.safetensors) to start from; "" = random
};

struct TrainConfig {
  int64_t batch_size = 16;    // sequences per micro-batch (B)
  int64_t context = 0;        // sequence length trained on (T); 0 = model.context
  int64_t grad_accum = 1;     // micro-batches per optimizer step
  int64_t batch_tokens = 0;   // if > 0: tokens per optimizer step; grad_accum is derived from it
  int64_t steps = 300;        // optimizer steps
  double lr = 2e-3;           // peak learning rate
  double min_lr_ratio = 0.1;  // the cosine decays to lr * min_lr_ratio
  int64_t warmup_steps = 30;  // linear warm-up
  double weight_decay = 0.1;  // AdamW, on 2-D weights only
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;         // clip the global grad norm to this; 0 = off
  int64_t max_skipped_steps = 5;  // steps in a row with a non-finite loss or gradients skipped before the run fails
  int64_t seed = 1337;            // weights, data order and sampling: CPU runs repeat exactly
  int64_t log_every = 10;         // steps between metric reports (the only host syncs in the loop)
  bool profile = true;            // time the phases of report steps (phase_*_ms metrics)
  int64_t eval_every = 100;       // steps between validation losses; 0 = only at the end
  int64_t eval_batches = 8;       // validation batches per evaluation
  // > 0: every evaluation covers exactly the first N validation tokens (the speedrun's 10,485,760), each once,
  // instead of eval_batches batches; N must be a multiple of batch_size × context × gpus.
  int64_t val_tokens = 0;
  std::string eval_tasks;             // "hellaswag:PATH,ppl:PATH": run every eval_every steps (engine/eval)
  int64_t sample_every = 100;         // steps between generated samples; 0 = only at the end, -1 = never
  int64_t sample_tokens = 48;         // tokens generated per sample
  std::string sample_prompt = "The";  // text the samples start from
  double sample_temperature = 0.8;
  int64_t sample_top_k = 40;       // 0 = no top-k
  int64_t checkpoint_every = 0;    // steps between checkpoints; 0 = only at the end (and on stop)
  double checkpoint_minutes = 30;  // wall-clock minutes between checkpoints (docs/ARCHITECTURE.md: why); 0 = off
  int64_t checkpoint_keep = 3;     // newest checkpoints of a run kept on disk; 0 = all
  std::string checkpoint_dir;      // "" = <data dir>/checkpoints/<run name>
  std::string resume;              // a checkpoint to continue from (weights, optimizer, data position, RNG)
  // Time to a target loss: the first evaluation whose val loss is at or below this records the training time,
  // tokens and steps it took (metrics time_to_target_s, tokens_to_target, steps_to_target); 0 = off.
  double target_val_loss = 0;
  bool stop_at_target = false;  // end the run (finished) at that evaluation
  double decay_fraction = 0.2;  // opt.schedule=wsd: the last fraction of steps decays linearly to min_lr_ratio
  double muon_lr = 0.02;        // opt.optimizer=muon: peak learning rate of the hidden matrices (Muon's group)
  double muon_momentum = 0.95;  // Muon's Nesterov momentum
  double normuon_beta2 = 0.95;  // opt.optimizer=normuon: running mean of each neuron's squared update
  // Ramps over the first N steps (0 = off), linear in the step: the trained sequence length from 16 tokens to
  // train.context (in multiples of 16), and the sequences of each micro-batch from 1 to train.batch_size.
  int64_t seq_warmup = 0;
  int64_t batch_warmup = 0;
};

struct OptConfig {
  // The string choices' values, what they do and where they run are in engine/core/config/choices.cpp.
  std::string precision = "auto";         // number format of matmuls, activations and weights (auto: per device)
  std::string attention = "sdpa";         // how attention is computed
  std::string sdpa_backend = "auto";      // which fused kernel computes opt.attention=sdpa
  std::string layers = "auto";            // LayerNorm, GELU and classifier kernels; auto: resolved_layers()
  bool fused_adamw = true;                // one multi-tensor kernel for the whole optimizer step (CPU and CUDA)
  std::string pin_memory = "auto";        // page-locked batches, non-blocking copies: auto = on CUDA, not on a CPU
  bool prefetch = true;                   // prepare the next batch on a background thread
  bool cuda_graphs = false;               // CUDA: replay the whole step from a captured graph
  bool fused_glue = false;                // CUDA, fused layers, bf16: the glue between the matmuls without casts
  bool activation_checkpointing = false;  // recompute each block in backward: less memory, more time
  std::string optimizer = "adamw";        // adamw | muon (Muon for hidden matrices, AdamW for the rest)
  std::string muon_ns = "newton_schulz";  // how Muon orthogonalises: newton_schulz | polar_express
  // Peak learning rates of AdamW's other groups, on train.lr's schedule; 0 = train.lr. head_lr needs an untied
  // head (model.tie_weights=false); embed_lr is the token (and learned position) embeddings'.
  double head_lr = 0;
  double embed_lr = 0;
  std::string schedule = "cosine";  // cosine | wsd (warm-up, stable, linear decay)
};

struct DistConfig {
  int64_t gpus = 1;  // data-parallel processes: one per GPU on CUDA, Gloo processes on CPU
  // A rank that dies or hangs stops the others with an error after this. Ten minutes (PyTorch's NCCL default):
  // the other ranks wait in a collective while rank 0 writes a checkpoint, 18 GB for GPT-2 1.5B with AdamW.
  int64_t timeout_s = 600;
  double bucket_mb = 25;  // gradients are all-reduced in buckets of about this size
  int64_t zero = 0;       // ZeRO stage: 0 = every rank holds AdamW's whole state; 1 = each holds 1/gpus of it
};

struct Config {
  DataConfig data;
  ModelConfig model;
  TrainConfig train;
  OptConfig opt;
  DistConfig dist;
  std::string device = "cpu";  // cpu | cuda | cuda:N
  int64_t threads = 0;         // CPU threads for LibTorch; 0 = all cores
  bool memory_check = true;    // refuse, before allocating, a run whose memory estimate exceeds the device's
  std::string name;            // run name; "" = derived from model and switches
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
// Unknown keys and wrong types are errors; keys not in the JSON keep their value in `base`.
Config config_from_json(const std::string& json, const Config& base = Config{});

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
// opt.layers=auto made concrete for this config under a resolved precision: resolved_layers (choices.h), but
// native whenever the model needs the logits that fused never stores (model.logit_softcap).
std::string resolved_layers(const Config& config, const std::string& precision);
// The model switches that make this model something other than GPT-2 ("model.norm=rmsnorm", ...), in registry
// order; empty for a GPT-2. Hugging Face GPT-2 export and model.init_from refuse such a model, naming these.
std::vector<std::string> not_gpt2_switches(const ModelConfig& model);

}  // namespace tokamak
