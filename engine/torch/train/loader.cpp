// The training data loader. Train windows are drawn uniformly from every valid start inside the train
// segments (a window never straddles two shards, nor the train/val border), at indices from a splitmix64
// stream seeded by (seed, step, micro, rank). Ranks are stratified: rank r draws only from the r-th of
// world_size contiguous slices of the start indices, with T starts left out between slices, so no two ranks
// ever read the same token. Validation windows are consecutive (stride T) so an eval covers the split evenly.
#include "engine/torch/train/loader.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/base/data/loader_sampling.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"

namespace tokamak {

namespace {

struct Key {
  int64_t step, micro;
  bool operator==(const Key& o) const { return step == o.step && micro == o.micro; }
};

struct HostBatch {
  torch::Tensor inputs, targets;  // (B, T) int64 on the host, page-locked when copies go to CUDA
};

// Widens the windows' uint16 tokens into int64 inputs and targets (the same window shifted by one).
HostBatch gather(const std::vector<const uint16_t*>& windows, int64_t T, bool pinned) {
  auto options = torch::TensorOptions().dtype(torch::kLong).pinned_memory(pinned);
  const int64_t B = static_cast<int64_t>(windows.size());
  HostBatch h{torch::empty({B, T}, options), torch::empty({B, T}, options)};
  int64_t* in = h.inputs.data_ptr<int64_t>();
  int64_t* tg = h.targets.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    const uint16_t* w = windows[static_cast<size_t>(b)];
    for (int64_t t = 0; t < T; ++t) {
      in[b * T + t] = w[t];
      tg[b * T + t] = w[t + 1];
    }
  }
  return h;
}

}  // namespace

struct Loader::Impl {
  LoaderOptions opt;
  std::vector<MappedShard> maps;  // owns the memory the segments point into
  WindowSampler sampler;
  bool pinned = false;

  // Prefetch: the worker makes the batch for `request` and leaves it in `ready`.
  std::thread worker;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::optional<Key> request, working, ready_key;
  HostBatch ready;

  HostBatch make_train(Key k) const {
    uint64_t seed = splitmix_seed(opt.seed, {static_cast<uint64_t>(k.step), static_cast<uint64_t>(k.micro),
                                             static_cast<uint64_t>(opt.rank), 0x747261696eULL /* "train" */});
    return gather(sampler.train(seed), opt.context, pinned);
  }

  Batch to_device(HostBatch&& h) const {
    if (opt.device.is_cpu()) return {std::move(h.inputs), std::move(h.targets)};
    // From pinned memory the copy is asynchronous: the caching host allocator keeps the buffer alive
    // until the copy on the current stream has finished.
    return {h.inputs.to(opt.device, torch::kLong, /*non_blocking=*/pinned),
            h.targets.to(opt.device, torch::kLong, /*non_blocking=*/pinned)};
  }

  void run_worker() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return stop || request.has_value(); });
      if (stop) return;
      Key k = *request;
      request.reset();
      if (ready_key == k) continue;
      working = k;
      lk.unlock();
      HostBatch b;
      bool ok = true;
      try {
        b = make_train(k);
      } catch (...) {
        ok = false;  // the caller will make this batch itself and see the error there
      }
      lk.lock();
      working.reset();
      if (ok) {
        ready = std::move(b);
        ready_key = k;
      }
      cv.notify_all();
    }
  }
};

Loader::Loader(const PreparedDataset& data, const LoaderOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opt = options;
  if (options.batch_size < 1 || options.context < 1)
    throw Error("batch size " + std::to_string(options.batch_size) + " and context " + std::to_string(options.context) +
                    " must both be at least 1",
                "set train.batch_size and model.context to positive values");
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size)
    throw Error(
        "data rank " + std::to_string(options.rank) + " is outside world size " + std::to_string(options.world_size),
        "ranks run from 0 to dist.gpus - 1");
  if (!(options.val_fraction >= 0.0 && options.val_fraction < 1.0))
    throw Error("data.val_fraction " + std::to_string(options.val_fraction) + " is outside [0, 1)",
                "use a value such as 0.05, or 0 for no validation");
  m.pinned = options.pin_memory && options.device.is_cuda();

  std::vector<Segment> train, val;
  for (const auto& p : data.train_shards) m.maps.emplace_back(p);
  size_t n_train_maps = m.maps.size();
  for (const auto& p : data.val_shards) m.maps.emplace_back(p);
  for (size_t i = 0; i < m.maps.size(); ++i)
    (i < n_train_maps ? train : val).push_back({m.maps[i].tokens(), m.maps[i].size()});

  std::string name = data.source.empty() ? "default" : data.source;
  SamplerOptions so;
  so.batch_size = options.batch_size;
  so.context = options.context;
  so.val_fraction = options.val_fraction;
  so.val_tokens = options.val_tokens;
  so.rank = options.rank;
  so.world_size = options.world_size;
  m.sampler = WindowSampler(name, std::move(train), std::move(val), so);
  if (options.prefetch) m.worker = std::thread([&m] { m.run_worker(); });
}

Loader::~Loader() {
  if (impl_->worker.joinable()) {
    {
      std::lock_guard<std::mutex> lk(impl_->mu);
      impl_->stop = true;
    }
    impl_->cv.notify_all();
    impl_->worker.join();
  }
}

Batch Loader::train_batch(int64_t step, int64_t micro, int64_t micro_steps) {
  Impl& m = *impl_;
  Key k{step, micro};
  if (!m.opt.prefetch) return m.to_device(m.make_train(k));

  HostBatch host;
  bool have = false;
  {
    std::unique_lock<std::mutex> lk(m.mu);
    m.cv.wait(lk, [&] { return !(m.working == k); });  // it is being made: wait rather than make it twice
    if (m.ready_key == k) {
      host = std::move(m.ready);
      m.ready_key.reset();
      have = true;
    }
  }
  if (!have) host = m.make_train(k);  // not the predicted batch: make it here
  {
    std::lock_guard<std::mutex> lk(m.mu);
    m.request = micro + 1 < micro_steps ? Key{step, micro + 1} : Key{step + 1, 0};
  }
  m.cv.notify_all();
  return m.to_device(std::move(host));
}

Batch Loader::val_batch(int64_t i) {
  const Impl& m = *impl_;
  if (!m.sampler.has_val())
    throw Error("there is no validation split: data.val_fraction is 0 and the dataset has no *_val_* shards",
                "set data.val_fraction above 0, or turn evaluation off (eval.every=0)");
  return m.to_device(gather(m.sampler.val(i), m.opt.context, m.pinned));
}

uint64_t Loader::train_tokens() const { return impl_->sampler.train_tokens(); }
uint64_t Loader::val_tokens() const { return impl_->sampler.val_tokens(); }

}  // namespace tokamak
