// One table per choice: every value a string-valued key (and a switch that is not on everywhere) can take,
// with the enum the engine dispatches on, a one-line help, the device it needs and whether it is implemented.
// Validation (config_problems), the registry's help, the engine's parsers, the studio's combo boxes and
// tooltips and default_run_name all read these tables, so a value is spelled once and an unknown value can
// never fall through to a default. No LibTorch here: the core and the studio use it too.
#pragma once
#include <string>
#include <vector>

#include "engine/base/util/error.h"

namespace tokamak {

enum class Precision { kAuto, kFp32, kTf32, kBf16, kBf16Pure, kFp16 };
enum class AttentionKind { kBufferedMask, kNaive, kSdpa };
enum class LayersKind { kScratch, kNative, kFused, kAuto };
enum class SdpaBackend { kAuto, kFlash, kCudnn, kEfficient, kMath };
enum class DeviceKind { kCpu, kCuda };
enum class Switch { kOff, kOn };  // a bool key's two values, for switches with a table (speed.cuda_graphs)

enum class Needs { kAny, kCuda };

template <class E>
struct Choice {
  const char* value;    // as written in configs, --set and the studio
  E kind;               // what the engine dispatches on
  const char* help;     // one line: what it does (and what the write-ups measured)
  Needs needs;          // the device it runs on
  const char* missing;  // "" when implemented; otherwise what is missing, as the user reads it in the refusal
  // "" when it runs on CUDA too (or needs no CUDA); otherwise why it is refused on a CUDA device only.
  const char* missing_cuda = "";
};

const std::vector<Choice<Precision>>& precision_choices();       // speed.precision
const std::vector<Choice<AttentionKind>>& attention_choices();   // speed.attention
const std::vector<Choice<LayersKind>>& layers_choices();         // speed.layers
const std::vector<Choice<SdpaBackend>>& sdpa_backend_choices();  // speed.sdpa_backend
const std::vector<Choice<DeviceKind>>& device_choices();         // device (cuda also as cuda:N)
const std::vector<Choice<Switch>>& cuda_graphs_choices();        // speed.cuda_graphs
const std::vector<Choice<Switch>>& fused_glue_choices();         // speed.fused_glue
// The speedrun's switches (modded-nanogpt): model variants and the optimizer/schedule. Defaults are GPT-2's.
enum class NormKind { kLayerNorm, kRmsNorm };
enum class MlpAct { kGelu, kRelu2 };
enum class PositionKind { kLearned, kRope };
enum class OptimizerKind { kAdamW, kMuon, kNorMuon };
enum class MuonNs { kNewtonSchulz, kPolarExpress };
enum class ScheduleKind { kCosine, kWsd };
const std::vector<Choice<NormKind>>& norm_choices();            // model.norm
const std::vector<Choice<MlpAct>>& mlp_act_choices();           // model.mlp_act
const std::vector<Choice<PositionKind>>& position_choices();    // model.position
const std::vector<Choice<OptimizerKind>>& optimizer_choices();  // optimizer.name
const std::vector<Choice<MuonNs>>& muon_ns_choices();           // optimizer.muon_ns
const std::vector<Choice<ScheduleKind>>& schedule_choices();    // schedule.name
enum class SpikeAction { kOff, kWarn, kSkip, kRollback };
const std::vector<Choice<SpikeAction>>& spike_action_choices();  // health.spike_action
enum class PinMemory { kAuto, kOn, kOff };
const std::vector<Choice<PinMemory>>& pin_memory_choices();  // speed.pin_memory
// Whether batches are page-locked and copied without blocking: "auto" means yes exactly on CUDA.
bool pin_memory_on(PinMemory pin_memory, bool cuda);

// Each choice's table found from its enum, so a value in a Config names itself (name_of) the way configs spell it.
// (speed.cuda_graphs and speed.fused_glue are bools in a Config: their tables are for the help and the studio.)
inline const std::vector<Choice<Precision>>& table_of(Precision) { return precision_choices(); }
inline const std::vector<Choice<AttentionKind>>& table_of(AttentionKind) { return attention_choices(); }
inline const std::vector<Choice<LayersKind>>& table_of(LayersKind) { return layers_choices(); }
inline const std::vector<Choice<SdpaBackend>>& table_of(SdpaBackend) { return sdpa_backend_choices(); }
inline const std::vector<Choice<DeviceKind>>& table_of(DeviceKind) { return device_choices(); }
inline const std::vector<Choice<NormKind>>& table_of(NormKind) { return norm_choices(); }
inline const std::vector<Choice<MlpAct>>& table_of(MlpAct) { return mlp_act_choices(); }
inline const std::vector<Choice<PositionKind>>& table_of(PositionKind) { return position_choices(); }
inline const std::vector<Choice<OptimizerKind>>& table_of(OptimizerKind) { return optimizer_choices(); }
inline const std::vector<Choice<MuonNs>>& table_of(MuonNs) { return muon_ns_choices(); }
inline const std::vector<Choice<ScheduleKind>>& table_of(ScheduleKind) { return schedule_choices(); }
inline const std::vector<Choice<SpikeAction>>& table_of(SpikeAction) { return spike_action_choices(); }
inline const std::vector<Choice<PinMemory>>& table_of(PinMemory) { return pin_memory_choices(); }
// "bf16" for Precision::kBf16: the value as configs, the store and the studio write it.
template <class E>
std::string name_of(E kind) {
  for (const Choice<E>& c : table_of(kind))
    if (c.kind == kind) return c.value;
  return "?";  // every enumerator has a row (test_config checks each table)
}

// A table seen without its enum, for validation, help text and the studio.
struct ChoiceInfo {
  std::string value, help;
  bool needs_cuda = false;
  std::string missing;       // "" when implemented
  std::string missing_cuda;  // "" when implemented on CUDA as well
};
// The keys that have a table, in registry order.
const std::vector<std::string>& choice_keys();
// The rows of `key`'s table; empty when the key has none.
std::vector<ChoiceInfo> choices_of(const std::string& key);
// "a | b | c", for the registry's help.
std::string choice_list(const std::string& key);
// The problem with `key=value` on a machine with or without CUDA, or "" when there is none: an unknown
// value, a value not implemented yet, or one that needs a CUDA device.
std::string choice_problem(const std::string& key, const std::string& value, bool cuda);

// The row for `value`; throws Error naming the key and listing the values when there is none.
template <class E>
const Choice<E>& find_choice(const std::vector<Choice<E>>& table, const std::string& key, const std::string& value) {
  for (const Choice<E>& c : table)
    if (value == c.value) return c;
  throw Error(key + " '" + value + "' is not one of " + choice_list(key), "set " + key + " to one of them");
}
// The enum for `value`, refusing values that are not implemented (a parser never falls back).
template <class E>
E parse_choice(const std::vector<Choice<E>>& table, const std::string& key, const std::string& value) {
  const Choice<E>& c = find_choice(table, key, value);
  if (*c.missing)
    throw Error(key + "=" + value + " is not implemented yet (" + c.missing + ")", "choose another value");
  return c.kind;
}

// KIND, or throws when its row is not implemented: where the engine builds a variant, it never runs another in its
// name.
template <class E>
E require_implemented(const std::vector<Choice<E>>& table, const std::string& key, E kind) {
  for (const Choice<E>& c : table)
    if (c.kind == kind) parse_choice(table, key, c.value);
  return kind;
}

// Throws when `kind`'s row is refused on a CUDA device (its `missing_cuda`): where a CUDA variant would run.
template <class E>
void require_implemented_on_cuda(const std::vector<Choice<E>>& table, const std::string& key, E kind) {
  for (const Choice<E>& c : table)
    if (c.kind == kind && *c.missing_cuda)
      throw Error(key + "=" + c.value + " is not implemented yet on CUDA (" + c.missing_cuda + ")",
                  "choose another value or set device=cpu");
}

// The speed.layers value that samples a checkpoint trained with `layers` on any device: the same weights and
// function, with kernels every device has (a CUDA-only row maps to native).
LayersKind portable_layers(LayersKind layers);
// speed.layers=auto made concrete for a device and a resolved precision (never kAuto): what was measured fastest
// there (docs/PERFORMANCE.md); any other value is returned as it is. Runs record the resolved value, as with
// precision.
LayersKind resolved_layers(LayersKind layers, const std::string& device, Precision precision);

// "cpu" → kCpu; "cuda" and "cuda:N" → kCuda with *index = N (-1 for plain "cuda"); anything else, such as
// "cuda:abc" or "gpu", throws an Error that names it.
DeviceKind parse_device_kind(const std::string& device, int* index = nullptr);

}  // namespace tokamak
