// Checkpoint save and load (see checkpoint.h).
#include "engine/train/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/serialize/archive.h>

#include "engine/model/gpt.h"
#include "engine/train/optimizer.h"
#include "engine/util/error.h"
#include "engine/util/files.h"

namespace tokamak {
namespace {

constexpr int64_t kFormat = 1;

torch::serialize::InputArchive open_archive(const std::string& path) {
  if (!path_exists(path))
    throw Error("checkpoint '" + path + "' does not exist", "check the path; checkpoints are listed by `tokamak runs show ID`");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const std::exception&) {
    throw Error("'" + path + "' is not a Tokamak checkpoint (cannot be read as one)", "pass a file written by `tokamak train`");
  }
  return archive;
}

CheckpointInfo read_info(torch::serialize::InputArchive& archive, const std::string& path) {
  CheckpointInfo info;
  c10::IValue v;
  if (!archive.try_read("tokamak.format", v) || v.toInt() != kFormat)
    throw Error("'" + path + "' is not a Tokamak checkpoint of a known format", "pass a file written by `tokamak train`");
  archive.read("tokamak.run_uid", v);
  info.run_uid = v.toStringRef();
  archive.read("tokamak.config", v);
  info.config_json = v.toStringRef();
  archive.read("tokamak.step", v);
  info.step = v.toInt();
  archive.read("tokamak.tokens", v);
  info.tokens = v.toInt();
  return info;
}

}  // namespace

void save_checkpoint(const std::string& path, const GPTImpl& model, const AdamW& optimizer, const CheckpointInfo& info,
                     const c10::Device& device) {
  torch::serialize::OutputArchive archive;
  archive.write("tokamak.format", c10::IValue(kFormat));
  archive.write("tokamak.run_uid", c10::IValue(info.run_uid));
  archive.write("tokamak.config", c10::IValue(info.config_json));
  archive.write("tokamak.step", c10::IValue(info.step));
  archive.write("tokamak.tokens", c10::IValue(info.tokens));
  for (const auto& p : model.named_parameters()) archive.write("model." + p.key(), p.value());
  torch::serialize::OutputArchive opt;
  optimizer.save(opt);
  archive.write("optimizer", opt);
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive.write("rng.cpu", gen.get_state());
  }
  if (device.is_cuda()) {
    auto gen = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive.write("rng.cuda", gen.get_state());
  }
  write_atomically(path, [&](const std::string& tmp) { archive.save_to(tmp); });
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  auto archive = open_archive(path);
  return read_info(archive, path);
}

CheckpointInfo load_checkpoint(const std::string& path, GPTImpl& model, AdamW* optimizer, bool restore_rng,
                               const c10::Device& device) {
  auto archive = open_archive(path);
  CheckpointInfo info = read_info(archive, path);
  torch::NoGradGuard no_grad;
  for (auto& p : model.named_parameters()) {
    at::Tensor t;
    if (!archive.try_read("model." + p.key(), t))
      throw Error("checkpoint '" + path + "' has no tensor for " + p.key(), "it was written for a different model config");
    if (t.sizes() != p.value().sizes())
      throw Error("checkpoint '" + path + "' holds " + p.key() + " of another shape", "it was written for a different model config");
    p.value().copy_(t);
  }
  if (optimizer) {
    torch::serialize::InputArchive opt;
    archive.read("optimizer", opt);
    optimizer->load(opt);
  }
  if (restore_rng) {
    at::Tensor state;
    archive.read("rng.cpu", state);
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
    if (device.is_cuda() && archive.try_read("rng.cuda", state)) {
      auto cuda_gen = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> cuda_lock(cuda_gen.mutex());
      cuda_gen.set_state(state);
    }
  }
  return info;
}

}  // namespace tokamak
