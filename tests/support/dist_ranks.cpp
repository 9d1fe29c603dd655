// In-process data-parallel ranks against one process (see dist_ranks.h).
#include "tests/support/dist_ranks.h"

#include <cstdlib>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmath>
#include <thread>

#include "engine/torch/parallel/reducer.h"
#include "engine/torch/parallel/zero.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/optim/optimizer.h"

namespace tokamak::test {
namespace {

constexpr double kLr = 1e-3, kClip = 1.0;

GPT seeded_model(const ModelConfig& m) {
  at::manual_seed(1);
  return GPT(GPTOptions::from_config(m, SpeedConfig{}));
}

std::vector<std::pair<std::string, at::Tensor>> named(GPTImpl& model) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

std::map<std::string, at::Tensor> cpu_weights(GPTImpl& model) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : model.named_parameters()) out[p.key()] = p.value().detach().cpu().clone();
  return out;
}

Batch to(const Batch& b, const c10::Device& d) { return {b.inputs.to(d), b.targets.to(d)}; }

}  // namespace

Batch random_batch(int64_t vocab, int64_t step, int rank) {
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(1000 * step + rank + 7);
  at::Tensor tokens = at::randint(0, vocab, {4, 17}, g, at::kLong);
  return {tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
}

void disable_flight_recorder() { ::setenv("TORCH_FR_BUFFER_SIZE", "0", 1); }

RanksResult train_ranks(const ModelConfig& model_config, const RanksOptions& o, const RankBatch& batch) {
  GPT reference = seeded_model(model_config);  // built once: the ranks' threads must not share the seeding
  const int port = free_port();
  RanksResult result;
  std::vector<std::string> errors(o.world);
  auto rank_main = [&](int rank) {
    try {
      DistEnv e;
      e.rank = rank, e.world_size = o.world, e.local_rank = rank, e.local_world_size = o.world, e.master_port = port;
      ProcessGroup group(e, o.device, std::chrono::seconds(60), o.backend);
      GPT model(GPTOptions::from_config(model_config, SpeedConfig{}));
      model->to(o.device);
      {
        at::NoGradGuard no_grad;
        auto mine = model->parameters(), ref = reference->parameters();
        for (size_t i = 0; i < mine.size(); ++i) mine[i].copy_(ref[i]);
      }
      GradReducer reducer(model->parameters(), group, o.bucket_bytes,
                          o.zero ? ReduceMode::kReduceScatter : ReduceMode::kAllReduce);
      AdamWOptions ao;
      std::unique_ptr<AdamW> plain;
      std::unique_ptr<ShardedAdamW> sharded;
      if (o.zero) sharded = std::make_unique<ShardedAdamW>(named(*model), reducer, group, ao);
      else plain = std::make_unique<AdamW>(named(*model), ao);
      for (int step = 0; step < o.steps; ++step) {
        reducer.zero_grad();
        reducer.prepare(/*last=*/true);
        const Batch b = to(batch(step, rank), o.device);
        at::Tensor loss = model->forward(b.inputs, b.targets).loss;
        loss.backward();
        reducer.finish();
        at::Tensor mean = loss.detach().to(at::kFloat).reshape({1});
        group.all_reduce_sum(mean).wait();
        at::Tensor norm = sharded ? sharded->clip_grad_norm(kClip) : clip_grad_norm(model->parameters(), kClip);
        if (sharded) sharded->step(kLr);
        else plain->step(kLr);
        if (rank == 0) {
          result.losses.push_back(mean.item<double>() / o.world);
          result.grad_norms.push_back(norm.item<double>());
        }
      }
      std::unique_ptr<OptimizerState> gathered = sharded ? sharded->gather_state() : nullptr;
      if (rank == 0) {
        result.weights = cpu_weights(*model);
        if (!o.checkpoint.empty())
          save_checkpoint(o.checkpoint, *model, sharded ? gathered.get() : plain.get(), {"ranks", "{}", o.steps, 0, ""},
                          o.device);
      }
    } catch (const std::exception& ex) {
      errors[rank] = ex.what();
    }
  };
  std::vector<std::thread> others;
  for (int r = 1; r < o.world; ++r) others.emplace_back(rank_main, r);
  rank_main(0);
  for (auto& t : others) t.join();
  for (int r = 0; r < o.world; ++r)
    if (!errors[r].empty()) result.error += "rank " + std::to_string(r) + ": " + errors[r] + " ";
  return result;
}

RanksResult train_one(const ModelConfig& model_config, int world, int steps, const c10::Device& device,
                      const RankBatch& batch) {
  GPT model = seeded_model(model_config);
  model->to(device);
  AdamW adamw(named(*model), AdamWOptions{});
  RanksResult result;
  for (int step = 0; step < steps; ++step) {
    std::vector<at::Tensor> in, tg;
    for (int r = 0; r < world; ++r) {
      Batch b = batch(step, r);
      in.push_back(b.inputs), tg.push_back(b.targets);
    }
    adamw.zero_grad();
    at::Tensor loss = model->forward(at::cat(in).to(device), at::cat(tg).to(device)).loss;
    loss.backward();
    result.grad_norms.push_back(clip_grad_norm(model->parameters(), kClip).item<double>());
    result.losses.push_back(loss.item<double>());
    adamw.step(kLr);
  }
  result.weights = cpu_weights(*model);
  adamw.for_each_state([&](const std::string& name, at::Tensor& m, at::Tensor& v, at::Tensor&) {
    result.state["exp_avg." + name] = m.cpu().clone();
    result.state["exp_avg_sq." + name] = v.cpu().clone();
  });
  return result;
}

double largest_difference(const std::map<std::string, at::Tensor>& a, const std::map<std::string, at::Tensor>& b,
                          std::string* where) {
  double worst = 0;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      *where = name + " (missing)";
      return INFINITY;
    }
    const double d = (t - it->second).abs().max().item<double>();
    if (d > worst) worst = d, *where = name;
  }
  return worst;
}

}  // namespace tokamak::test
