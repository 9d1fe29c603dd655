// one_big_batch and the tiny data-parallel config (see big_batch.h).
#include "tests/support/big_batch.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>

#include "engine/base/data/dataset.h"
#include "engine/torch/optim/muon.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/loader.h"
#include "engine/torch/train/step.h"
#include "tests/support/tiny.h"

namespace tokamak::test {

std::vector<std::string> dist_tiny_sets(const std::string& data) {
  // Context 16: test_dist's reducer tests draw rows of 17 tokens.
  return tiny_run_overrides({"data.path=" + data, "model.context=16", "model.vocab_pad_multiple=1",
                             "train.batch_size=4", "schedule.warmup_steps=2", "train.log_every=1", "eval.every=0",
                             "sample.every=-1", "speed.precision=fp32", "threads=1",
                             // The reference loop builds the model from this config unresolved; the trainer must
                             // compute the same loss bit for bit (auto would be fused here).
                             "speed.layers=native"});
}

std::map<std::string, at::Tensor> weights(const GPTImpl& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value().detach().clone();
  return out;
}

Reference one_big_batch(Config c, int world) {
  c.dist.gpus = world;
  at::manual_seed(static_cast<uint64_t>(c.train.seed));
  PreparedDataset data = prepare_dataset(c.data.path);
  std::vector<std::unique_ptr<Loader>> loaders;
  for (int r = 0; r < world; ++r) {
    LoaderOptions lo;
    lo.batch_size = c.train.batch_size, lo.context = train_context(c), lo.val_fraction = c.data.val_fraction;
    lo.seed = static_cast<uint64_t>(c.train.seed), lo.prefetch = false, lo.rank = r, lo.world_size = world;
    loaders.push_back(std::make_unique<Loader>(data, lo));
  }
  GPT model(GPTOptions::from_config(c.model, c.speed));
  model->train();
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& p : model->named_parameters()) named.emplace_back(p.key(), p.value());
  // The optimizer the trainer builds for this config: AdamW, or Muon for the blocks' matrices + AdamW.
  const AdamWOptions ao{c.optimizer.beta1, c.optimizer.beta2, c.optimizer.eps, c.optimizer.weight_decay,
                        c.speed.fused_adamw};
  std::unique_ptr<Optimizer> opt;
  if (c.optimizer.name == OptimizerKind::kMuon)
    opt =
        std::make_unique<Muon>(named, ao, MuonOptions{c.optimizer.muon_momentum, c.optimizer.muon_lr / c.optimizer.lr});
  else opt = std::make_unique<AdamW>(named, ao);
  const int64_t accum = grad_accum_steps(c);
  Reference ref;
  for (int64_t step = 0; step < c.train.steps; ++step) {
    opt->zero_grad();
    StepOutput out = forward_backward(
        *model,
        [&](int64_t micro) {
          std::vector<at::Tensor> in, tg;
          for (auto& l : loaders) {
            Batch b = l->train_batch(step, micro, accum);
            in.push_back(b.inputs), tg.push_back(b.targets);
          }
          return Batch{at::cat(in), at::cat(tg)};
        },
        accum, Precision::kFp32, c10::kCPU);
    ref.grad_norm.push_back(clip_grad_norm(model->parameters(), c.optimizer.grad_clip).item<double>());
    ref.loss.push_back(out.loss.item<double>());
    opt->step(learning_rate(c, step));
  }
  ref.weights = weights(*model);
  return ref;
}

}  // namespace tokamak::test
