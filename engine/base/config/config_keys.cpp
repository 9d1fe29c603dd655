// The key registry: maps each dotted key to its field, type and comment, and implements --set and the
// JSON round-trip on top of it, so adding a field means adding one line here.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/config/renamed_keys.h"
#include "engine/base/util/error.h"
#include "engine/base/util/nearest.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

struct Range {
  double min, max;
  bool min_open, max_open;  // "(0, 1]": the bound itself is not allowed
};
constexpr Range kNoRange{0, 0, false, false};

struct Key {
  const char* key;
  const char* help;  // the key's one description: `config --keys`, errors and the studio's tooltips read it
  std::function<json(const Config&)> get;
  std::function<void(Config&, const json&)> set;
  Range range = kNoRange;
  bool ranged = false;
  bool choice = false;  // a choice table (choices.h) or model.preset: the help ends with the values
};

// One line per key, long or not: the registry reads as a table.
// clang-format off
// TK_KEY for strings and bools; TK_ENUM for keys with a table of values (choices.h), TK_CHOICE for a string or bool
// that has one (model.preset, device, two switches); TK_NUM for numbers, with
// the valid range [lo, hi] (TK_NUM_OPEN: lo excluded, TK_NUM_BELOW: hi excluded). Upper bounds are far beyond
// any real run: they keep the arithmetic that sizes a run in range, and a typo from reaching the allocator.
#define TK_ACCESS(field) \
  [](const Config& c) { return json(c.field); }, [](Config& c, const json& v) { c.field = v.get<decltype(c.field)>(); }
#define TK_KEY(path, field, help) Key{path, help, TK_ACCESS(field)}
#define TK_CHOICE(path, field, help) Key{path, help, TK_ACCESS(field), kNoRange, false, true}
// A key whose field is its table's enum (choices.h): read and written as the table spells it, and an unknown value
// refused as it is read, naming the values there are.
#define TK_ENUM(path, field, help) \
  Key{path, help, [](const Config& c) { return json(name_of(c.field)); }, \
      [](Config& c, const json& v) { c.field = find_choice(table_of(c.field), path, v.get<std::string>()).kind; }, \
      kNoRange, false, true}
#define TK_NUM(path, field, lo, hi, help) Key{path, help, TK_ACCESS(field), Range{lo, hi, false, false}, true}
#define TK_NUM_OPEN(path, field, lo, hi, help) Key{path, help, TK_ACCESS(field), Range{lo, hi, true, false}, true}
#define TK_NUM_BELOW(path, field, lo, hi, help) Key{path, help, TK_ACCESS(field), Range{lo, hi, false, true}, true}
constexpr double kSteps = 1e12;     // steps, tokens: more than any run will take
constexpr double kSize = 1 << 20;   // widths, lengths, batch sizes

const std::vector<Key>& registry() {
  static const std::vector<Key> keys = {
      TK_KEY("data.path", data.path, "What to train on: default (The Jargon File), a text file, a folder of text files, or .bin token shards (a file, a folder or a glob)"),
      TK_NUM_BELOW("data.val_fraction", data.val_fraction, 0, 1, "Tail of the tokens held out for validation when the data has no *_val_* shards"),
      TK_KEY("data.jsonl_field", data.jsonl_field, "FILE.jsonl sources: the field of each line that holds its document"),
      TK_KEY("data.val_path", data.val_path, "Separate validation data (fineweb10B's val shard, say): all of it is validation; \"\" = the data's own val shards or its val_fraction tail"),
      TK_CHOICE("model.preset", model.preset, "Model size: nano and mini fit a CPU, gpt2 … gpt2-xl are GPT-2's published sizes; model.n_layer, n_head, n_embd and context given with it override it"),
      TK_NUM("model.n_layer", model.n_layer, 1, 100000, "Transformer blocks"),
      TK_NUM("model.n_head", model.n_head, 1, 65536, "Attention heads; must divide model.n_embd"),
      TK_NUM("model.n_embd", model.n_embd, 1, kSize, "Width of the residual stream"),
      TK_NUM("model.context", model.context, 2, kSize, "Longest sequence the model can see (its position embeddings)"),
      TK_NUM("model.vocab_size", model.vocab_size, 2, 65536, "Tokenizer vocabulary (GPT-2: 50257; shards hold uint16 ids)"),
      TK_NUM("model.vocab_pad_multiple", model.vocab_pad_multiple, 1, 65536, "Pad the embedding rows to a multiple of this so matmuls hit fast tile sizes (64: 50257 → 50304; 1 = off); padded logits are masked, so they never win a sample or change the loss"),
      TK_KEY("model.tie_weights", model.tie_weights, "The output layer shares the token embedding: −38M parameters at 124M"),
      TK_NUM_BELOW("model.dropout", model.dropout, 0, 1, "Dropout probability on attention weights, residual branches and embeddings"),
      TK_KEY("model.qkv_bias", model.qkv_bias, "Biases on every linear layer, as GPT-2 has"),
      TK_ENUM("model.norm", model.norm, "The blocks' normalisation"),
      TK_ENUM("model.mlp_act", model.mlp_act, "The MLP's activation"),
      TK_ENUM("model.position", model.position, "How the model knows where a token is"),
      TK_KEY("model.qk_norm", model.qk_norm, "RMS-normalise each head's queries and keys before attention (from the speedrun, with ReLU² and zero-init projections)"),
      TK_NUM("model.logit_softcap", model.logit_softcap, 0, 1e6, "Logits = cap · tanh(logits / cap); 0 = off (the speedrun uses 30, then 15)"),
      TK_KEY("model.unet_skips", model.unet_skips, "U-net skips: learned weights (starting at 1) add the first half's block outputs to the second half's inputs, mirrored (from the speedrun, with a doubled lr). Not GPT-2: no Hugging Face export"),
      TK_NUM("model.value_embeddings", model.value_embeddings, 0, 1024, "k extra token-embedding tables mixed into the attention values of the first k and last k blocks (v ← λ0·v + λ1·table[token], λ learned from (0.5, 0.5)); 0 = off (from the speedrun, whose layout is 3 tables on the first and last 3 blocks). Not GPT-2: no Hugging Face export"),
      TK_KEY("model.zero_init_proj", model.zero_init_proj, "Attention and MLP output projections (and an untied head) start at zero (from the speedrun, with ReLU² and QK-norm)"),
      TK_KEY("model.init_from", model.init_from, "Hugging Face GPT-2 weights to start from (a folder or model.safetensors); \"\" = random"),
      TK_NUM("train.batch_size", train.batch_size, 1, kSize, "Sequences per micro-batch (B)"),
      TK_NUM("train.context", train.context, 0, kSize, "Sequence length trained on (T); 0 = model.context"),
      TK_NUM("train.grad_accum", train.grad_accum, 1, kSize, "Micro-batches per optimizer step: a large effective batch in small memory (activation memory ÷ accumulation steps)"),
      TK_NUM("train.batch_tokens", train.batch_tokens, 0, kSteps, "Tokens per optimizer step; > 0 derives train.grad_accum from it"),
      TK_NUM("train.steps", train.steps, 1, kSteps, "Optimizer steps"),
      TK_NUM("train.seq_warmup", train.seq_warmup, 0, kSteps, "Steps over which the sequence length rises linearly from 16 tokens to train.context (multiples of 16); 0 = off (the speedrun warms up its attention window instead)"),
      TK_NUM("train.batch_warmup", train.batch_warmup, 0, kSteps, "Steps over which each micro-batch's sequences rise linearly from 1 to train.batch_size; 0 = off (the speedrun's batch size schedule)"),
      TK_NUM("train.max_skipped_steps", train.max_skipped_steps, 0, kSteps, "Steps in a row with a non-finite loss or gradients skipped before the run fails; 0 = fail at the first"),
      TK_NUM("train.seed", train.seed, -9e18, 9e18, "Seed for weights, data order and sampling: CPU runs repeat exactly"),
      TK_NUM("train.log_every", train.log_every, 1, kSteps, "Steps between metric reports (the loop's only host syncs)"),
      TK_KEY("train.profile", train.profile, "Time the phases of report steps (data, forward, head, backward, all-reduce, optimizer)"),
      TK_ENUM("optimizer.name", optimizer.name, "The optimizer"),
      TK_NUM_OPEN("optimizer.lr", optimizer.lr, 0, 10, "Peak learning rate, reached after the warm-up (schedule.*)"),
      TK_NUM("optimizer.head_lr", optimizer.head_lr, 0, 100, "Peak lr of an untied head (model.tie_weights=false), on the same schedule; 0 = optimizer.lr (from the speedrun: an untied, zero-init head at its own lr; the CPU speedrun ladder uses 4× optimizer.lr)"),
      TK_NUM("optimizer.embed_lr", optimizer.embed_lr, 0, 100, "Peak lr of the token, learned position and value embeddings, on the same schedule; 0 = optimizer.lr (the speedrun gives them the largest lr of all)"),
      TK_NUM_OPEN("optimizer.muon_lr", optimizer.muon_lr, 0, 10, "optimizer.name=muon or normuon: peak lr of the hidden matrices (Muon's group)"),
      TK_NUM("optimizer.weight_decay", optimizer.weight_decay, 0, 10, "AdamW's decoupled weight decay, on 2-D weights only"),
      TK_NUM_BELOW("optimizer.beta1", optimizer.beta1, 0, 1, "AdamW's beta1"),
      TK_NUM_BELOW("optimizer.beta2", optimizer.beta2, 0, 1, "AdamW's beta2"),
      TK_NUM_OPEN("optimizer.eps", optimizer.eps, 0, 1, "AdamW's epsilon"),
      TK_NUM("optimizer.grad_clip", optimizer.grad_clip, 0, 1e6, "Clip the global gradient norm to this; 0 = off"),
      TK_NUM_BELOW("optimizer.muon_momentum", optimizer.muon_momentum, 0, 1, "optimizer.name=muon or normuon: Nesterov momentum"),
      TK_ENUM("optimizer.muon_ns", optimizer.muon_ns, "optimizer.name=muon or normuon: how the update is orthogonalised"),
      TK_NUM_BELOW("optimizer.normuon_beta2", optimizer.normuon_beta2, 0, 1, "optimizer.name=normuon: decay of each neuron's running mean squared update"),
      TK_ENUM("schedule.name", schedule.name, "The learning-rate schedule every group follows"),
      TK_NUM("schedule.warmup_steps", schedule.warmup_steps, 0, kSteps, "Steps of linear warm-up to the peak learning rate"),
      TK_NUM("schedule.min_lr_ratio", schedule.min_lr_ratio, 0, 1, "The decay ends at this fraction of each peak learning rate"),
      TK_NUM_OPEN("schedule.decay_fraction", schedule.decay_fraction, 0, 1, "schedule.name=wsd: the last fraction of the steps, decaying linearly"),
      TK_NUM("eval.every", eval.every, 0, kSteps, "Steps between validation losses; 0 = only at the end"),
      TK_NUM("eval.batches", eval.batches, 1, kSize, "Validation batches per evaluation"),
      TK_NUM("eval.val_tokens", eval.val_tokens, 0, kSteps, "> 0: every evaluation covers exactly the first N validation tokens, each once (the speedrun's 10485760), instead of eval.batches; N must be a multiple of batch_size × context × gpus"),
      TK_KEY("eval.tasks", eval.tasks, "Tasks run at every evaluation: hellaswag:PATH, ppl:PATH (comma-separated)"),
      TK_NUM("eval.target_val_loss", eval.target_val_loss, 0, 1e6, "Record the training time, tokens and steps when the val loss first reaches this (checked every eval.every steps: that is the resolution); 0 = off"),
      TK_KEY("eval.stop_at_target", eval.stop_at_target, "End the run (finished) at the evaluation that reaches eval.target_val_loss"),
      TK_NUM("sample.every", sample.every, -1, kSteps, "Steps between generated samples; 0 = only at the end, -1 = never"),
      TK_NUM("sample.tokens", sample.tokens, 1, kSize, "Tokens generated per sample"),
      TK_KEY("sample.prompt", sample.prompt, "Text the samples start from"),
      TK_NUM_OPEN("sample.temperature", sample.temperature, 0, 100, "Sampling temperature"),
      TK_NUM("sample.top_k", sample.top_k, 0, 65536, "Sample from the k most likely tokens; 0 = all"),
      TK_NUM("checkpoint.every", checkpoint.every, 0, kSteps, "Steps between checkpoints; 0 = only at the end (and on stop)"),
      TK_NUM("checkpoint.minutes", checkpoint.minutes, 0, 525600, "Minutes of wall time between checkpoints, so a crash loses at most this much; 0 = off"),
      TK_NUM("checkpoint.keep", checkpoint.keep, 0, 1000000, "Newest checkpoints of a run kept on disk; 0 = all"),
      TK_KEY("checkpoint.dir", checkpoint.dir, "Where checkpoints go; \"\" = the run folder, <data dir>/checkpoints/<run name>-<first 8 characters of its uid>"),
      TK_KEY("checkpoint.resume", checkpoint.resume, "A checkpoint to continue from (weights, optimizer, data position, RNG)"),
      TK_ENUM("speed.precision", speed.precision, "Number format of matmuls, activations and weights"),
      TK_ENUM("speed.attention", speed.attention, "How attention is computed; sdpa never stores the T×T scores"),
      TK_ENUM("speed.sdpa_backend", speed.sdpa_backend, "Which fused kernel computes speed.attention=sdpa; auto lets LibTorch pick"),
      TK_ENUM("speed.layers", speed.layers, "Which kernels compute LayerNorm, GELU and the classifier"),
      TK_KEY("speed.fused_adamw", speed.fused_adamw, "One multi-tensor kernel for the whole optimizer step instead of a loop over parameters (CPU and CUDA)"),
      TK_ENUM("speed.pin_memory", speed.pin_memory, "Page-locked batches, copied to the GPU without blocking while it computes; auto = on CUDA, nothing to pin on a CPU"),
      TK_KEY("speed.prefetch", speed.prefetch, "Prepare the next batch on a background thread while the step runs, so the device never waits for data"),
      TK_CHOICE("speed.cuda_graphs", speed.cuda_graphs, "Capture the training step once as a CUDA graph and replay it: one launch instead of hundreds (CUDA)"),
      TK_CHOICE("speed.fused_glue", speed.fused_glue, "With speed.layers=fused in bf16 on CUDA: bf16 activations between Tokamak's kernels with no casts, each residual add inside the next LayerNorm's kernel, the attention heads' gradients in one pass, and the GELU backward out of place"),
      TK_KEY("speed.fp8", speed.fp8, "The MLP's two matmuls (c_fc, c_proj) in fp8 through _scaled_mm: e4m3 activations and weights, e5m2 gradients, one dynamic scale a tensor, fp32 master weights; needs speed.precision=bf16 and FP8 tensor cores (CUDA compute capability 8.9+; a CPU runs it, slower than bf16, to check numerics). As in nanochat and modded-nanogpt's records (there with an fp8 head too). Its casts and transposes are not yet fused (measured: docs/PERFORMANCE.md). The head is not yet covered; not in auto until a sitting compares its loss with bf16 over 1,000+ steps"),
      TK_NUM_OPEN("speed.loss_scale_init", speed.loss_scale_init, 0, 1e38, "speed.precision=fp16: the loss scale the run starts with (PyTorch GradScaler's 65536); a step whose gradients overflow is skipped and the scale lowered"),
      TK_NUM_OPEN("speed.loss_scale_growth", speed.loss_scale_growth, 1, 1e6, "speed.precision=fp16: the scale is multiplied by this after speed.loss_scale_interval steps without an overflow"),
      TK_NUM_OPEN("speed.loss_scale_backoff", speed.loss_scale_backoff, 0, 1, "speed.precision=fp16: the scale is multiplied by this at each step whose gradients overflow (that step is skipped)"),
      TK_NUM("speed.loss_scale_interval", speed.loss_scale_interval, 1, kSteps, "speed.precision=fp16: steps without an overflow before the scale grows"),
      TK_KEY("speed.activation_checkpointing", speed.activation_checkpointing, "Recompute each block in backward instead of keeping its activations: less memory, one more forward pass of each block"),
      TK_ENUM("health.spike_action", health.spike_action, "What a loss spike does: a step whose loss or gradient norm is more than health.spike_threshold robust deviations above the median of the last health.spike_window steps"),
      TK_NUM("health.spike_window", health.spike_window, 5, 100000, "Steps whose median and median absolute deviation a step's loss and gradient norm are measured against; detection starts once the window is full"),
      TK_NUM_OPEN("health.spike_threshold", health.spike_threshold, 0, 1e6, "How far above the window's median a spike is, in robust standard deviations (1.4826 × the median absolute deviation, at least 1% of the median)"),
      TK_NUM_OPEN("health.grad_norm_threshold", health.grad_norm_threshold, 0, 1e6, "The same for the gradient norm (before clipping), higher: early in training it jumps ten robust deviations on ordinary batches"),
      TK_NUM("health.max_spikes", health.max_spikes, 1, 1000000, "A run with more spikes than this fails, naming the last: it keeps spiking"),
      TK_NUM_OPEN("health.rollback_lr_scale", health.rollback_lr_scale, 0, 1, "After a rollback, the learning rate times this for health.rollback_lr_steps steps; 1 = unchanged"),
      TK_NUM("health.rollback_lr_steps", health.rollback_lr_steps, 0, kSteps, "Steps after a rollback trained at health.rollback_lr_scale times the learning rate"),
      TK_NUM_BELOW("health.slowdown_fraction", health.slowdown_fraction, 0, 1, "A slowdown: tok/s below this fraction of the run's median for health.slowdown_reports reports in a row, reported with what changed on the machine (clocks, temperature, other processes, swap); 0 = not watched"),
      TK_NUM("health.slowdown_reports", health.slowdown_reports, 1, 1000000, "Reports in a row below health.slowdown_fraction that make a slowdown"),
      TK_NUM("health.stall_factor", health.stall_factor, 0, 1e6, "A run is stalled after this many times the median time between its reports with no step (seen by `runs follow` and the studio); 0 = not watched"),
      TK_NUM("health.stall_min_s", health.stall_min_s, 0, 1e9, "A run is never called stalled before this many seconds without a step (an evaluation or a checkpoint pauses the steps)"),
      TK_NUM("health.stall_requeue_minutes", health.stall_requeue_minutes, 0, 525600, "A run of the queue stalled this long is ended and queued again, to resume from its last checkpoint (at most 3 times); 0 = the queue waits for it"),
      TK_NUM("metrics.layers_every", metrics.layers_every, -1, kSteps, "Per-layer statistics (weight, gradient and update RMS of each block's attention, MLP and norms; each block's activation RMS and attention entropy), read with a report's own host sync: 0 = at every report, N = every N steps (a multiple of train.log_every), -1 = never"),
      TK_NUM("dist.gpus", dist.gpus, 1, 4096, "Data-parallel processes: one per GPU, gradients all-reduced over NCCL (DDP; scaling measured: docs/multi-gpu.md); on a CPU, Gloo processes"),
      TK_NUM("dist.timeout_s", dist.timeout_s, 1, 604800, "Seconds before a dead or hung rank stops the others with an error"),
      TK_NUM_OPEN("dist.bucket_mb", dist.bucket_mb, 0, 65536, "Gradients are all-reduced in buckets of about this many MB"),
      TK_NUM("dist.zero", dist.zero, 0, 1, "ZeRO stage: 0 = every rank holds AdamW's whole state; 1 = each rank keeps it for 1/N of the weights, gradients reduce-scattered and weights all-gathered: same losses, less memory per rank (docs/multi-gpu.md)"),
      TK_CHOICE("device", device, "Where the run trains"),
      TK_NUM("threads", threads, 0, 4096, "CPU threads for LibTorch; 0 = all cores"),
      TK_KEY("memory_check", memory_check, "Refuse, before allocating, a run whose memory estimate exceeds the device's memory"),
      TK_KEY("name", name, "Run name in the run store and the studio; \"\" = derived from the model and switches"),
  };
  // clang-format on
  return keys;
}
#undef TK_KEY
#undef TK_CHOICE
#undef TK_NUM
#undef TK_NUM_OPEN
#undef TK_NUM_BELOW
#undef TK_ACCESS
#undef TK_ENUM

const Key& find_key(const std::string& given) {
  const std::string key = current_key(given);  // an older release's name still works
  const Key* nearest = nullptr;
  size_t best = SIZE_MAX;
  for (const Key& k : registry()) {
    if (key == k.key) return k;
    // Compare against the full key and its last part, so "lr" suggests "optimizer.lr".
    std::string full = k.key;
    std::string leaf = full.substr(full.rfind('.') == std::string::npos ? 0 : full.rfind('.') + 1);
    size_t d = std::min(edit_distance(key, full), edit_distance(key, leaf));
    // An old name mistyped ("opt.presicion") suggests the key it became.
    for (const RenamedKey& r : renamed_keys())
      if (r.key == full) d = std::min(d, edit_distance(key, r.old_key));
    if (d < best) best = d, nearest = &k;
  }
  throw Error("unknown config key '" + key + "'",
              "did you mean '" + std::string(nearest->key) + "'? `tokamak config --defaults` lists every key");
}

std::string help_of_choice(const std::string& key) {
  if (key != "model.preset") return choice_list(key);
  std::string names;
  for (const std::string& n : model_presets()) names += (names.empty() ? "" : " | ") + n;
  return names;
}

std::string type_name(const json& v) {
  if (v.is_boolean()) return "bool";
  if (v.is_number_integer()) return "int";
  if (v.is_number()) return "float";
  return "string";
}

std::string to_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// Parses `text` as the type of the key's current value.
json parse_value(const std::string& key, const json& current, const std::string& text) {
  auto bad = [&](const char* what) {
    return Error("config key '" + key + "' expects " + what + ", got '" + text + "'",
                 "write e.g. --set " + key + "=" + to_text(current));
  };
  if (current.is_boolean()) {
    if (text == "true" || text == "1" || text == "on" || text == "yes") return true;
    if (text == "false" || text == "0" || text == "off" || text == "no") return false;
    throw bad("true or false");
  }
  if (current.is_number_integer()) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (...) {
      throw bad("an integer");
    }
    if (used != text.size()) throw bad("an integer");
    return v;
  }
  if (current.is_number()) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (...) {
      throw bad("a number");
    }
    if (used != text.size() || !std::isfinite(v)) throw bad("a finite number");
    return v;
  }
  return text;
}

void set_json(Config& c, const Key& k, const json& given) {
  json current = k.get(c);
  // A switch that became a choice (speed.pin_memory: true/false → auto/true/false) still reads old configs.
  bool was_switch = false;
  for (const ChoiceInfo& row : choices_of(k.key)) was_switch = was_switch || row.value == "true";
  const json v = given.is_boolean() && current.is_string() && was_switch ? json(given ? "true" : "false") : given;
  if (v.is_string()) {  // the config is written back as JSON (runs store, checkpoints), which must be UTF-8
    try {
      (void)v.dump();
    } catch (const json::type_error&) {
      throw Error("config key '" + std::string(k.key) + "' has a value that is not valid UTF-8",
                  "write it as UTF-8 text");
    }
  }
  bool ok = (current.is_boolean() && v.is_boolean()) || (current.is_string() && v.is_string()) ||
            (current.is_number_integer() && v.is_number_integer()) || (current.is_number_float() && v.is_number());
  if (!ok)
    throw Error("config key '" + std::string(k.key) + "' expects " + type_name(current) + ", got " + v.dump(),
                "write e.g. \"" + std::string(k.key) + "\": " + current.dump());
  k.set(c, v);
  if (std::string(k.key) == "model.preset") apply_model_preset(c.model, v.get<std::string>());
}

}  // namespace

std::vector<KeyDoc> config_keys(const Config& config) {
  std::vector<KeyDoc> docs;
  for (const Key& k : registry()) {
    json v = k.get(config);
    KeyDoc doc{k.key, type_name(v), to_text(v), k.choice ? k.help + std::string(": ") + help_of_choice(k.key) : k.help};
    doc.ranged = k.ranged, doc.min_open = k.range.min_open, doc.max_open = k.range.max_open;
    doc.min = k.range.min, doc.max = k.range.max;
    if (v.is_number()) doc.number = v.get<double>();
    docs.push_back(doc);
  }
  return docs;
}

void set_key(Config& config, const std::string& key, const std::string& value) {
  const Key& k = find_key(key);
  set_json(config, k, parse_value(key, k.get(config), value));
}

void apply_overrides(Config& config, const std::vector<std::string>& assignments) {
  std::vector<std::pair<std::string, std::string>> parsed;
  for (const std::string& a : assignments) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--set '" + a + "' is not key=value", "write e.g. --set train.steps=200");
    parsed.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }
  std::stable_partition(parsed.begin(), parsed.end(), [](const auto& kv) { return kv.first == "model.preset"; });
  for (const auto& [key, value] : parsed) set_key(config, key, value);
}

std::string config_to_json(const Config& config, int indent) {
  json root = json::object();
  for (const Key& k : registry()) {
    std::string key = k.key;
    size_t dot = key.find('.');
    if (dot == std::string::npos) root[key] = k.get(config);
    else root[key.substr(0, dot)][key.substr(dot + 1)] = k.get(config);
  }
  return root.dump(indent);
}

Config config_from_json(const std::string& text, const Config& base, std::vector<std::string>* left_out) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number no double holds (1e999).
    throw Error(std::string("config is not valid JSON: ") + e.what(), "check the file with a JSON linter");
  }
  if (!root.is_object()) throw Error("config JSON must be an object", "see `tokamak config --defaults`");
  root = upgrade_config_json(root);
  std::vector<std::pair<std::string, json>> flat;
  for (auto& [section, value] : root.items()) {
    if (value.is_object()) {
      for (auto& [leaf, v] : value.items()) flat.emplace_back(section + "." + leaf, v);
    } else {
      flat.emplace_back(section, value);
    }
  }
  std::stable_partition(flat.begin(), flat.end(), [](const auto& kv) { return kv.first == "model.preset"; });
  Config c = base;
  for (const auto& [key, v] : flat) {
    if (!left_out) {
      set_json(c, find_key(key), v);
      continue;
    }
    try {
      set_json(c, find_key(key), v);
    } catch (const Error&) {
      left_out->push_back(key);
    }
  }
  return c;
}

}  // namespace tokamak
