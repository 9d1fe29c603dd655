// Checkpoint save and load over safetensors (see checkpoint.h). Loading checks everything it can before it
// touches the model: a refused checkpoint leaves the model and optimizer as they were only up to the first
// bad tensor's predecessors, so callers discard both on an Error (all of them do: it ends the command or run).
#include "engine/torch/checkpoint/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"
#include "engine/base/util/output_path.h"
#include "engine/base/util/safetensors.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/optim/optimizer_state.h"

namespace tokamak {
namespace {

constexpr int kFormat = 2;  // 1 was the TorchScript archive (step_N.pt), which is refused
const char* const kKind = "tokamak-checkpoint";
const char* const kOwnFolder =
    "give each run a checkpoint folder of its own: leave checkpoint.dir empty (the run's folder) or point it "
    "at an empty one";
const char* const kRetrain =
    "it cannot be converted without running it: resume or sample it with the Tokamak version that wrote it, or "
    "retrain";

std::string dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "F32";
    case at::kHalf:
      return "F16";
    case at::kBFloat16:
      return "BF16";
    case at::kDouble:
      return "F64";
    case at::kLong:
      return "I64";
    case at::kInt:
      return "I32";
    case at::kShort:
      return "I16";
    case at::kChar:
      return "I8";
    case at::kByte:
      return "U8";
    case at::kBool:
      return "BOOL";
    default:
      throw Error(std::string("checkpoints cannot hold tensors of type ") + c10::toString(t));
  }
}

at::ScalarType scalar_type(const std::string& d) {
  static const std::map<std::string, at::ScalarType> types = {
      {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16}, {"F64", at::kDouble}, {"I64", at::kLong},
      {"I32", at::kInt},   {"I16", at::kShort}, {"I8", at::kChar},       {"U8", at::kByte},    {"BOOL", at::kBool}};
  auto it = types.find(d);
  return it == types.end() ? at::ScalarType::Undefined : it->second;
}

std::string shape_text(c10::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The metadata's own checksum covers every other metadata entry (the config, step, uid...).
std::string metadata_crc(std::map<std::string, std::string> metadata) {
  metadata.erase("crc32");
  const std::string text = nlohmann::json(metadata).dump();
  return crc32_hex(text.data(), text.size());
}

// A count from the metadata (a string there): std::stoll's own error was the bare "stoll", with no file.
int64_t metadata_int(const std::string& path, const std::string& key, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < 0)
    throw Error("checkpoint '" + path + "' has " + key + " '" + text.substr(0, 40) + "' in its metadata, not a count",
                "the file is damaged; use an earlier checkpoint of the run");
  return v;
}

struct Opened {
  SafetensorsHeader header;
  nlohmann::json crcs;
  CheckpointInfo info;
};

Opened open_checkpoint(const std::string& path) {
  if (!path_exists(path))
    throw Error("checkpoint '" + path + "' does not exist",
                "check the path; checkpoints are listed by `tokamak runs show ID`");
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, 4);
  if (magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4)
    throw Error("'" + path + "' is an old TorchScript checkpoint, which can run code when loaded, so it is refused",
                kRetrain);
  Opened o;
  try {
    o.header = read_safetensors_header(path);
  } catch (const Error& e) {
    throw Error("checkpoint '" + path + "': " + e.message(), e.hint());
  }
  const auto& m = o.header.metadata;
  auto get = [&](const std::string& key) -> const std::string& {
    auto it = m.find(key);
    if (it == m.end())
      throw Error("checkpoint '" + path + "' has no " + key + " in its metadata", "the file is damaged");
    return it->second;
  };
  auto kind = m.find("format");
  if (kind == m.end() || kind->second != kKind)
    throw Error("'" + path + "' is a safetensors file but not a Tokamak checkpoint",
                "to start from Hugging Face GPT-2 weights, use model.init_from=PATH");
  const int version = std::atoi(get("format_version").c_str());
  if (version > kFormat)
    throw Error("checkpoint '" + path + "' was written by a newer Tokamak (format " + std::to_string(version) +
                    "; this one reads format " + std::to_string(kFormat) + ")",
                "update Tokamak to load it");
  if (version != kFormat)
    throw Error("checkpoint '" + path + "' has unknown format version '" + get("format_version") + "'",
                "the file is damaged");
  o.crcs = nlohmann::json::parse(get("crc32"), nullptr, false);
  if (!o.crcs.is_object() || !o.crcs.contains("__metadata__") || o.crcs["__metadata__"] != metadata_crc(m))
    throw Error("checkpoint '" + path + "' fails the checksum of its metadata (config, step, run uid)",
                "the file is damaged; use an earlier checkpoint of the run");
  o.info.run_uid = get("run_uid");
  o.info.config_json = get("config");
  o.info.step = metadata_int(path, "step", get("step"));
  o.info.tokens = metadata_int(path, "tokens", get("tokens"));
  o.info.device = get("device");
  // Added after format 2 was fixed: optional, so earlier checkpoints still load.
  if (m.count("train_seconds")) o.info.train_seconds = std::atof(m.at("train_seconds").c_str());
  if (m.count("target_step")) o.info.target_step = metadata_int(path, "target_step", m.at("target_step"));
  if (m.count("health")) o.info.health = m.at("health");
  if (m.count("loss_scale")) o.info.loss_scale = m.at("loss_scale");
  return o;
}

// Reads one tensor into CPU memory, checking what the loader expects of it. `want` is the tensor it goes into.
at::Tensor read_tensor(const std::string& path, const Opened& o, const std::string& name, const at::Tensor& want,
                       bool convert_float) {
  const SafetensorsTensor* t = o.header.find(name);
  if (!t) throw Error("checkpoint '" + path + "' has no " + name, "it was written for a different model config");
  const at::ScalarType type = scalar_type(t->dtype);
  const bool both_float = at::isFloatingType(type) && at::isFloatingType(want.scalar_type());
  if (type != want.scalar_type() && !(convert_float && both_float))
    throw Error(name + " in '" + path + "' is " + t->dtype + " but the model needs " + dtype_name(want.scalar_type()),
                "the checkpoint was written with another speed.precision; resume with the same precision");
  if (c10::IntArrayRef(t->shape) != want.sizes())
    throw Error(name + " in '" + path + "' has shape " + shape_text(t->shape) + " but the model needs " +
                    shape_text(want.sizes()),
                "it was written for a different model config");
  at::Tensor cpu = at::empty(t->shape, at::TensorOptions().dtype(type));
  read_safetensors_bytes(path, o.header, *t, cpu.data_ptr());
  const auto crc = o.crcs.find(name);
  if (crc == o.crcs.end() || *crc != crc32_hex(cpu.data_ptr(), cpu.nbytes()))
    throw Error(name + " in '" + path + "' fails its checksum",
                "the file is damaged; use an earlier checkpoint of the run");
  return cpu;
}

// N of a name step_N.safetensors (checkpoint_path's); -1 for any other name.
int64_t step_of(const std::string& name) {
  if (name.rfind("step_", 0) != 0 || name.size() <= 5 || !std::isdigit(static_cast<unsigned char>(name[5]))) return -1;
  char* end = nullptr;
  const long long step = std::strtoll(name.c_str() + 5, &end, 10);
  return end && std::string(end) == ".safetensors" ? step : -1;
}

// write_safetensors' temporary of a checkpoint: step_N.safetensors.tmp-PID-XXXXXXXX.
bool is_checkpoint_temporary(const std::string& name) {
  const size_t at = name.find(".tmp-");
  return at != std::string::npos && step_of(name.substr(0, at)) >= 0;
}

// The run uid in a Tokamak checkpoint's header; "" when the regular file at PATH is not one. The header alone: a
// checkpoint whose tensors are damaged is still its run's.
std::string header_owner(const std::string& path) {
  try {
    const SafetensorsHeader h = read_safetensors_header(path);
    const auto kind = h.metadata.find("format"), uid = h.metadata.find("run_uid");
    if (kind != h.metadata.end() && kind->second == kKind && uid != h.metadata.end()) return uid->second;
  } catch (const Error&) {  // not a safetensors file at all
  }
  return {};
}

// Throws unless the file at PATH may be replaced by run RUN_UID's checkpoint (any run's when RUN_UID is ""):
// nothing is there, or a Tokamak checkpoint of that run. A link, a folder or a FIFO is never opened.
void check_replaceable(const std::string& path, const std::string& run_uid) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  const std::string hint = "move it out of the folder, or set checkpoint.dir to a new or empty folder";
  if (!S_ISREG(st.st_mode))
    throw Error("'" + path + "' is " + protected_kind(path) + ": a checkpoint never replaces it", hint);
  const std::string owner = header_owner(path);
  if (owner.empty()) throw Error("'" + path + "' is not a Tokamak checkpoint: a checkpoint never replaces it", hint);
  if (!run_uid.empty() && owner != run_uid)
    throw Error("checkpoint '" + path + "' is run " + owner + "'s; run " + run_uid + " will not overwrite it",
                kOwnFolder);
}

// Every step_N.safetensors in DIR must be one the run may replace; with ONLY_CHECKPOINTS (a folder the user named,
// not the run's own folder with its journal) nothing else may be there either but checkpoints' temporaries: a
// checkpoint written beside a user's files would mix Tokamak's files into theirs, and checkpoint.keep deletes.
void check_checkpoint_folder(const std::string& dir, const std::string& run_uid, bool only_checkpoints) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());  // the same file named each time
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    if (step_of(name) >= 0) {
      try {
        check_replaceable(path, run_uid);
      } catch (const Error& e) {
        if (e.hint() != kOwnFolder) throw;
        throw Error("checkpoint folder '" + dir + "' holds checkpoints of another run (" +
                        header_owner(path) + ": " + name + "), which this run's would overwrite",
                    kOwnFolder);
      }
    } else if (only_checkpoints && !is_checkpoint_temporary(name)) {
      throw Error("checkpoint folder '" + dir + "' holds files Tokamak did not make ('" + name +
                      "'): no checkpoint is written into it",
                  "set checkpoint.dir to a new or empty folder, or leave it empty for the run's own folder");
    }
  }
}

void set_generator_state(at::Generator gen, const at::Tensor& state, const std::string& path) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  try {
    gen.set_state(state);
  } catch (const std::exception&) {
    throw Error("checkpoint '" + path + "' holds a random-number state of the wrong size", "the file is damaged");
  }
}

}  // namespace

void prepare_checkpoint_dir(const std::string& dir, uint64_t bytes_needed, const std::string& run_uid,
                            bool only_checkpoints) {
  make_dirs(dir);
  // Before the temporaries are cleaned: in a folder the user named, only the run's own may be removed.
  check_checkpoint_folder(dir, run_uid, only_checkpoints);
  remove_stale_temporaries(dir);
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error("checkpoint folder '" + dir + "' is not writable", "set checkpoint.dir to a writable folder");
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < bytes_needed)
      throw Error("checkpoint folder '" + dir + "' has " + format_bytes(static_cast<double>(free_bytes)) +
                      " free but a checkpoint needs " + format_bytes(static_cast<double>(bytes_needed)),
                  "free some space or set checkpoint.dir to another disk");
  }
}

uint64_t checkpoint_bytes(const GPTImpl& model, bool with_optimizer) {
  uint64_t bytes = 0;
  for (const auto& p : model.parameters()) bytes += p.nbytes();
  return (with_optimizer ? 3 : 1) * bytes + (1u << 20);  // + exp_avg, exp_avg_sq; + header and RNG
}

void prune_checkpoints(const std::string& dir, int64_t keep, const std::string& run_uid) {
  if (keep <= 0) return;
  std::vector<std::string> ours;
  for (const auto& p : list_checkpoints(dir)) {
    try {
      if (read_checkpoint_info(p).run_uid == run_uid) ours.push_back(p);
    } catch (const Error&) {  // unreadable: not provably ours, so not ours to delete
    }
  }
  for (size_t i = 0; i + static_cast<size_t>(keep) < ours.size(); ++i) std::remove(ours[i].c_str());
}

void check_checkpoint_owner(const std::string& path, const std::string& run_uid) {
  const std::string owner = read_checkpoint_info(path).run_uid;
  if (owner != run_uid)
    throw Error(
        "checkpoint '" + path + "' belongs to run " + owner + ", not to run " + run_uid,
        "resume a run from its own checkpoints (`tokamak runs show ID` lists them); " + std::string(kOwnFolder));
}

void save_checkpoint(const std::string& path, const GPTImpl& model, OptimizerState* optimizer,
                     const CheckpointInfo& info, const c10::Device& device) {
  // What came into the folder after prepare_checkpoint_dir looked (a second run's file, a user's, a link): never
  // written over.
  check_replaceable(path, info.run_uid);
  std::vector<std::pair<std::string, at::Tensor>> parts;  // CPU, contiguous: kept alive through the write
  for (const auto& p : model.named_parameters()) parts.emplace_back("model." + p.key(), p.value());
  if (optimizer) {
    optimizer->for_each_state([&](const std::string& name, at::Tensor& m, at::Tensor& v, at::Tensor& s) {
      parts.emplace_back("optimizer.exp_avg." + name, m);
      parts.emplace_back("optimizer.exp_avg_sq." + name, v);
      parts.emplace_back("optimizer.steps." + name, s);
    });
    optimizer->for_each_extra_state(
        [&](const std::string& key, at::Tensor& t) { parts.emplace_back("optimizer." + key, t); });
  }
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    parts.emplace_back("rng.cpu", gen.get_state());
  }
  if (device.is_cuda()) {
    auto gen = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    parts.emplace_back("rng.cuda", gen.get_state());
  }
  std::map<std::string, std::string> meta = {
      {"format", kKind},
      {"format_version", std::to_string(kFormat)},
      {"run_uid", info.run_uid},
      {"config", info.config_json},
      {"step", std::to_string(info.step)},
      {"tokens", std::to_string(info.tokens)},
      {"device", device.str()},
      {"optimizer_steps", std::to_string(optimizer ? optimizer->steps_taken() : 0)},
      {"train_seconds", std::to_string(info.train_seconds)},
      {"target_step", std::to_string(info.target_step)}};
  if (!info.health.empty()) meta["health"] = info.health;
  if (!info.loss_scale.empty()) meta["loss_scale"] = info.loss_scale;
  nlohmann::json crcs = nlohmann::json::object();
  std::vector<SafetensorsBlob> blobs;
  for (auto& [name, t] : parts) {
    t = t.detach().to(at::kCPU).contiguous();
    crcs[name] = crc32_hex(t.data_ptr(), t.nbytes());
    blobs.push_back({name, dtype_name(t.scalar_type()), t.sizes().vec(), t.data_ptr(), t.nbytes()});
  }
  crcs["__metadata__"] = metadata_crc(meta);
  meta["crc32"] = crcs.dump();
  write_safetensors(path, blobs, meta);
}

CheckpointInfo read_checkpoint_info(const std::string& path) { return open_checkpoint(path).info; }

CheckpointInfo load_checkpoint(const std::string& path, GPTImpl& model, OptimizerState* optimizer, bool restore_rng,
                               const c10::Device& device) {
  const Opened o = open_checkpoint(path);
  const bool convert = optimizer == nullptr;
  at::NoGradGuard no_grad;
  auto named = model.named_parameters();
  for (const auto& t : o.header.tensors)  // a tensor the model lacks means another model
    if (t.name.rfind("model.", 0) == 0 && !named.contains(t.name.substr(6)))
      throw Error("checkpoint '" + path + "' holds " + t.name + ", which the model does not have",
                  "it was written for a different model config");
  for (auto& p : named) p.value().copy_(read_tensor(path, o, "model." + p.key(), p.value(), convert));
  if (optimizer) {
    optimizer->for_each_state([&](const std::string& name, at::Tensor& m, at::Tensor& v, at::Tensor& s) {
      m.copy_(read_tensor(path, o, "optimizer.exp_avg." + name, m, false));
      v.copy_(read_tensor(path, o, "optimizer.exp_avg_sq." + name, v, false));
      s.copy_(read_tensor(path, o, "optimizer.steps." + name, s, false));
    });
    optimizer->for_each_extra_state(
        [&](const std::string& key, at::Tensor& t) { t.copy_(read_tensor(path, o, "optimizer." + key, t, false)); });
    auto steps = o.header.metadata.find("optimizer_steps");
    if (steps == o.header.metadata.end())
      throw Error("checkpoint '" + path + "' has no optimizer state", "it holds weights only; it cannot be resumed");
    optimizer->set_steps_taken(metadata_int(path, "optimizer_steps", steps->second));
  }
  if (restore_rng) {
    auto cpu_gen = at::detail::getDefaultCPUGenerator();
    const at::Tensor cpu_state = cpu_gen.get_state();
    set_generator_state(cpu_gen, read_tensor(path, o, "rng.cpu", cpu_state, false), path);
    // A run that moves between devices keeps its CPU stream; a CUDA stream only goes back to a CUDA device.
    if (device.is_cuda() && o.header.find("rng.cuda")) {
      auto gen = at::globalContext().defaultGenerator(device);
      set_generator_state(gen, read_tensor(path, o, "rng.cuda", gen.get_state(), false), path);
    }
  }
  return o.info;
}

}  // namespace tokamak
