// The choice tables (see choices.h). A row's help is the studio's tooltip, so it says what the row does (the
// measurements stay in docs/PERFORMANCE.md, where they can be dated); a row with `missing` set is refused by
// config_problems, whose line says what the row still lacks.
#include "engine/base/config/choices.h"

#include <cctype>

namespace tokamak {
namespace {

constexpr Needs kAny = Needs::kAny, kCuda = Needs::kCuda;

template <class E>
std::vector<ChoiceInfo> info(const std::vector<Choice<E>>& table) {
  std::vector<ChoiceInfo> rows;
  for (const Choice<E>& c : table)
    rows.push_back({c.value, c.help, c.needs == Needs::kCuda, c.missing, c.missing_cuda});
  return rows;
}

}  // namespace

const std::vector<Choice<Precision>>& precision_choices() {
  static const std::vector<Choice<Precision>> t = {
      {"auto", Precision::kAuto,
       "bf16 where the device computes it fast (GPUs from the A100 on; CPUs with AVX-512 BF16 or AMX), fp32 "
       "elsewhere: without hardware bf16 a CPU emulates it, and a step runs far slower.",
       kAny, ""},
      {"fp32", Precision::kFp32, "Plain fp32 everywhere: the write-ups' baseline.", kAny, ""},
      {"tf32", Precision::kTf32, "TF32 tensor cores for fp32 matmuls.", kCuda, ""},
      {"bf16", Precision::kBf16,
       "bf16 autocast with fp32 master weights; activations take half the memory.", kAny, ""},
      {"bf16-pure", Precision::kBf16Pure, "The whole model, its gradients and AdamW state in bf16: the least memory.",
       kAny, ""},
      {"fp16", Precision::kFp16,
       "fp16 autocast with fp32 master weights and a dynamic loss scale, for GPUs without bf16 (T4, RTX 20xx: their "
       "fp16 tensor cores far outrun their fp32). A CPU without AVX-512 FP16 emulates it, far slower than fp32.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<AttentionKind>>& attention_choices() {
  static const std::vector<Choice<AttentionKind>> t = {
      {"buffered-mask", AttentionKind::kBufferedMask,
       "GPT-2's original attention with a stored T×T causal-mask buffer.", kAny, ""},
      {"naive", AttentionKind::kNaive,
       "Causal mask made on the fly: no stored T×T buffer (saves memory at long context).", kAny, ""},
      {"sdpa", AttentionKind::kSdpa,
       "Fused attention (scaled_dot_product_attention; flash attention on GPUs): O(T) memory.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<LayersKind>>& layers_choices() {
  static const std::vector<Choice<LayersKind>> t = {
      {"scratch", LayersKind::kScratch, "Hand-written LayerNorm and GELU from many small elementwise ops.", kAny, ""},
      {"native", LayersKind::kNative, "The library's LayerNorm and GELU kernels.", kAny, ""},
      {"fused", LayersKind::kFused,
       "Tokamak's own kernels: the classifier computes cross-entropy and its gradient over the logits in place, "
       "in one pass, without native's fp32 copies of the B·T·V logits: a lower peak memory (measured: "
       "docs/PERFORMANCE.md).",
       kAny, ""},
      // Built as native when a config reaches a model unresolved; train() resolves it first (resolved_layers).
      {"auto", LayersKind::kAuto,
       "Picks fused on a GPU in bf16 and on a CPU in fp32 or bf16, native elsewhere (why: docs/PERFORMANCE.md).",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<SdpaBackend>>& sdpa_backend_choices() {
  static const std::vector<Choice<SdpaBackend>> t = {
      {"auto", SdpaBackend::kAuto, "LibTorch picks the fastest backend the device and shapes allow.", kAny, ""},
      {"flash", SdpaBackend::kFlash, "FlashAttention-2 only.", kCuda, ""},
      {"cudnn", SdpaBackend::kCudnn, "cuDNN's fused attention only.", kCuda, ""},
      {"efficient", SdpaBackend::kEfficient, "Memory-efficient attention (xFormers' kernel) only.", kCuda, ""},
      {"math", SdpaBackend::kMath, "The unfused reference: plain matmuls and softmax.", kAny, ""},
  };
  return t;
}

const std::vector<Choice<DeviceKind>>& device_choices() {
  static const std::vector<Choice<DeviceKind>> t = {
      {"cpu", DeviceKind::kCpu, "The CPU, with LibTorch's intra-op threads.", kAny, ""},
      {"cuda", DeviceKind::kCuda, "The current CUDA GPU; cuda:N picks GPU N.", kCuda, ""},
  };
  return t;
}

const std::vector<Choice<Switch>>& cuda_graphs_choices() {
  static const std::vector<Choice<Switch>> t = {
      {"false", Switch::kOff, "Launch the step's kernels one by one.", kAny, ""},
      {"true", Switch::kOn,
       "Capture the whole training step (forward, backward, clipping, fused AdamW) once as a CUDA graph and replay "
       "it: one launch a step instead of hundreds. Matters most for small batches, whose steps are launch-bound. "
       "Needs fixed shapes, fused AdamW, one GPU and no gradient accumulation; the step profile is off (a graph's "
       "phases cannot be timed apart).",
       kCuda, ""},
  };
  return t;
}

const std::vector<Choice<Switch>>& fused_glue_choices() {
  static const std::vector<Choice<Switch>> t = {
      {"false", Switch::kOff, "The fused layers' kernels with autocast's casts around them.", kAny, ""},
      {"true", Switch::kOn,
       "With speed.layers=fused in bf16: every LayerNorm (ln_1, ln_2 with its residual add, ln_f) takes the fp32 "
       "residual stream (and ln_2 the bf16 branch) and writes the bf16 input of the next matmul, no casts around it "
       "(16-byte loads); backward writes the branch's bf16 gradient in the same pass; the GELU backward runs out of "
       "place (no clone). Off by default and outside auto until a GPU sitting measures it (docs/PERFORMANCE.md).",
       kCuda, ""},
  };
  return t;
}

const std::vector<Choice<PinMemory>>& pin_memory_choices() {
  static const std::vector<Choice<PinMemory>> t = {
      {"auto", PinMemory::kAuto, "Pinned batches and non-blocking copies on CUDA; nothing to pin on a CPU.", kAny, ""},
      {"true", PinMemory::kOn,
       "Page-locked batches copied to the GPU while it computes.",
       kCuda, ""},
      {"false", PinMemory::kOff, "Pageable batches: each copy to the GPU waits for the host.", kAny, ""},
  };
  return t;
}

// The speedrun's switches. "Speedrun" below is KellerJordan/modded-nanogpt's world-record table (GPT-2 124M to
// 3.28 val loss on FineWeb, 8×H100); each row names the record in which the switch went in, together with
// whatever else that record changed (the table does not separate them).
const std::vector<Choice<NormKind>>& norm_choices() {
  static const std::vector<Choice<NormKind>> t = {
      {"layernorm", NormKind::kLayerNorm, "GPT-2's LayerNorm: subtract the mean, divide by the std, scale and shift.",
       kAny, ""},
      {"rmsnorm", NormKind::kRmsNorm,
       "RMSNorm: divide by the root mean square, scale only (no mean, no bias): fewer ops. From the speedrun's "
       "'architectural modernizations & tuned lr' record, with rotary. Not GPT-2: no Hugging Face "
       "export.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<MlpAct>>& mlp_act_choices() {
  static const std::vector<Choice<MlpAct>> t = {
      {"gelu", MlpAct::kGelu, "GPT-2's GELU (tanh approximation) in the MLP.", kAny, ""},
      {"relu2", MlpAct::kRelu2,
       "ReLU²: relu(x)² in the MLP (So et al., Primer): sparser, cheaper than GELU. From the speedrun's record with "
       "QK-norm and zero-initialised projections. Not GPT-2: no Hugging Face export.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<PositionKind>>& position_choices() {
  static const std::vector<Choice<PositionKind>> t = {
      {"learned", PositionKind::kLearned, "GPT-2's learned position embeddings, added to the token embeddings.", kAny,
       ""},
      {"rope", PositionKind::kRope,
       "Rotary position embeddings (Su et al.): queries and keys rotated by their position, no position table. "
       "From the speedrun's 'architectural modernizations & tuned lr' record. Not GPT-2: no Hugging Face export.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<OptimizerKind>>& optimizer_choices() {
  static const std::vector<Choice<OptimizerKind>> t = {
      {"adamw", OptimizerKind::kAdamW, "AdamW for every weight, as GPT-2 training uses it.", kAny, ""},
      {"muon", OptimizerKind::kMuon,
       "Muon for the blocks' 2-D weights (Nesterov momentum, then 5 Newton–Schulz steps that orthogonalise the "
       "update; lr optimizer.muon_lr); AdamW for embeddings, head, norms and biases (lr optimizer.lr). From the "
       "speedrun's records. Not with dist.zero=1.",
       kAny, ""},
      {"normuon", OptimizerKind::kNorMuon,
       "NorMuon (Li et al. 2025): Muon, then each neuron's (row's) update divided by the root of its running mean "
       "square (optimizer.normuon_beta2) and rescaled to Muon's norm, so no neuron's update dominates. From the "
       "speedrun's records. Not with dist.zero=1.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<MuonNs>>& muon_ns_choices() {
  static const std::vector<Choice<MuonNs>> t = {
      {"newton_schulz", MuonNs::kNewtonSchulz,
       "Muon's original orthogonalisation: 5 steps of one quintic polynomial (3.4445, -4.7750, 2.0315), tuned to "
       "push singular values fast into about [0.7, 1.2].",
       kAny, ""},
      {"polar_express", MuonNs::kPolarExpress,
       "Polar Express (Amsel et al. 2025): 5 steps with a different quintic per step, each the optimal one for "
       "the singular values left by the one before, so they land closer to 1 at the same cost. From the speedrun's "
       "records. Needs optimizer.name=muon or normuon.",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<ScheduleKind>>& schedule_choices() {
  static const std::vector<Choice<ScheduleKind>> t = {
      {"cosine", ScheduleKind::kCosine, "Linear warm-up, then cosine decay to lr · min_lr_ratio (GPT-2, nanoGPT).",
       kAny, ""},
      {"wsd", ScheduleKind::kWsd,
       "Warm-up, stable, decay: linear warm-up, constant lr, then linear decay to lr · min_lr_ratio over the last "
       "schedule.decay_fraction of the steps (Hägele et al. 2024; the speedrun's trapezoidal schedule).",
       kAny, ""},
  };
  return t;
}

const std::vector<Choice<SpikeAction>>& spike_action_choices() {
  static const std::vector<Choice<SpikeAction>> t = {
      {"off", SpikeAction::kOff, "Spikes are not looked for.", kAny, ""},
      {"warn", SpikeAction::kWarn, "A spike is an event in the journal and a mark on the loss plot; the update stays.",
       kAny, ""},
      {"skip", SpikeAction::kSkip,
       "The spike's update is not applied, as for a non-finite loss (llm.c's skip of outlier steps). Reads the loss "
       "every step: one host sync a step on a GPU.",
       kAny, ""},
      {"rollback", SpikeAction::kRollback,
       "Back to the last checkpoint (checkpoint.every), the data moved past the steps that led to the spike, the "
       "learning rate lowered for a while if health.rollback_lr_scale says so. Reads the loss every step.",
       kAny, ""},
  };
  return t;
}

bool pin_memory_on(PinMemory pin_memory, bool cuda) { return cuda && pin_memory != PinMemory::kOff; }

const std::vector<std::string>& choice_keys() {
  static const std::vector<std::string> keys = {"speed.precision",  "speed.attention",
                                                "speed.layers",     "speed.sdpa_backend",
                                                "speed.pin_memory", "speed.cuda_graphs",
                                                "speed.fused_glue", "model.norm",
                                                "model.mlp_act",    "model.position",
                                                "optimizer.name",   "optimizer.muon_ns",
                                                "schedule.name",    "health.spike_action",
                                                "device"};
  return keys;
}

std::vector<ChoiceInfo> choices_of(const std::string& key) {
  if (key == "speed.precision") return info(precision_choices());
  if (key == "speed.attention") return info(attention_choices());
  if (key == "speed.layers") return info(layers_choices());
  if (key == "speed.sdpa_backend") return info(sdpa_backend_choices());
  if (key == "speed.cuda_graphs") return info(cuda_graphs_choices());
  if (key == "speed.fused_glue") return info(fused_glue_choices());
  if (key == "speed.pin_memory") return info(pin_memory_choices());
  if (key == "model.norm") return info(norm_choices());
  if (key == "model.mlp_act") return info(mlp_act_choices());
  if (key == "model.position") return info(position_choices());
  if (key == "optimizer.name") return info(optimizer_choices());
  if (key == "optimizer.muon_ns") return info(muon_ns_choices());
  if (key == "schedule.name") return info(schedule_choices());
  if (key == "health.spike_action") return info(spike_action_choices());
  if (key == "device") return info(device_choices());
  return {};
}

std::string choice_list(const std::string& key) {
  std::string list;
  for (const ChoiceInfo& c : choices_of(key)) list += (list.empty() ? "" : " | ") + c.value;
  return key == "device" ? list + " | cuda:N" : list;
}

std::string choice_problem(const std::string& key, const std::string& value, bool cuda) {
  std::string v = value;
  if (key == "device") {
    try {
      parse_device_kind(value);
    } catch (const Error& e) {
      return e.message();
    }
    v = value.substr(0, value.find(':'));
  }
  for (const ChoiceInfo& c : choices_of(key)) {
    if (c.value != v) continue;
    const bool wrong_device = c.needs_cuda && !cuda;
    if (!c.missing.empty())
      return key + "=" + value + " is not implemented yet (" + c.missing + ")" +
             (wrong_device ? " and needs a CUDA device" : "");
    if (wrong_device && key != "device")
      return key + "=" + value + " needs a CUDA device: set device=cuda or choose another";
    if (cuda && !c.missing_cuda.empty())
      return key + "=" + value + " is not implemented yet on CUDA (" + c.missing_cuda +
             "): set device=cpu or choose another";
    return "";
  }
  std::string list;
  for (const ChoiceInfo& c : choices_of(key)) list += (list.empty() ? "" : ", ") + c.value;
  return key + " '" + value + "' is not one of " + list;
}

LayersKind resolved_layers(LayersKind layers, const std::string& device, Precision precision) {
  if (layers != LayersKind::kAuto) return layers;
  // The fused classifier was measured faster than native on a CPU in fp32 and bf16 autocast and on a GPU in bf16
  // (docs/PERFORMANCE.md: "The fused classifier on a CPU", "First light on a GPU"); bf16-pure, and fp32/tf32 on a
  // GPU, were not measured. A device that does not parse is config_problems()' to name.
  try {
    const DeviceKind kind = parse_device_kind(device, nullptr);
    if (kind == DeviceKind::kCpu && (precision == Precision::kFp32 || precision == Precision::kBf16))
      return LayersKind::kFused;
    if (kind == DeviceKind::kCuda && precision == Precision::kBf16) return LayersKind::kFused;
  } catch (const Error&) {}
  return LayersKind::kNative;
}

LayersKind portable_layers(LayersKind layers) {
  for (const Choice<LayersKind>& row : layers_choices())
    if (row.kind == layers && (row.needs == Needs::kCuda || *row.missing || *row.missing_cuda))
      return LayersKind::kNative;
  return layers;
}

DeviceKind parse_device_kind(const std::string& device, int* index) {
  if (index) *index = -1;
  if (device == "cpu") return DeviceKind::kCpu;
  if (device == "cuda") return DeviceKind::kCuda;
  const std::string digits = device.rfind("cuda:", 0) == 0 ? device.substr(5) : "";
  bool ok = !digits.empty() && digits.size() <= 4;
  for (char ch : digits) ok = ok && std::isdigit(static_cast<unsigned char>(ch));
  if (!ok) throw Error("device '" + device + "' is not cpu, cuda or cuda:N", "write e.g. device=cuda:0");
  if (index) *index = std::stoi(digits);
  return DeviceKind::kCuda;
}

}  // namespace tokamak
