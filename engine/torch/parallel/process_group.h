// A c10d process group for data parallelism: Gloo between CPU processes, NCCL between GPUs, joined through a
// TCPStore rendezvous. c10d's headers stay in the .cpp (they cost compile time and need Gloo's headers).
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/torch/parallel/dist_env.h"

namespace c10d {
class Backend;
}

namespace tokamak {

// One collective in flight; wait() returns when it is done (on CUDA: when the current stream is ordered
// after it) and throws tokamak::Error when a peer died or the group's timeout passed.
class PendingWork {
 public:
  PendingWork();
  ~PendingWork();
  PendingWork(PendingWork&&) noexcept;
  PendingWork& operator=(PendingWork&&) noexcept;
  void wait();
  bool pending() const;
  // Calls `done` (on the backend's thread) when the collective completes; false when the backend's work
  // has no completion future (Gloo's reduce-scatter, which is an all-reduce finished inside wait()).
  bool on_done(std::function<void()> done);

 private:
  friend class ProcessGroup;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// kAuto: NCCL for CUDA tensors, Gloo for CPU ones. kGloo: Gloo whatever the device — ranks that share one GPU
// (NCCL refuses two ranks on one device); Gloo moves CUDA tensors through pinned host memory.
enum class Backend { kAuto, kGloo };

// The device rank `env` trains on: with CUDA, the machine's GPU local_rank (modulo the GPUs it sees: srun
// --gpus-per-task=1 shows each rank only its own GPU, as cuda:0); otherwise the configured device.
c10::Device rank_device(const c10::Device& configured, const DistEnv& env, int visible_gpus);
// Whether the ranks on this machine must share GPUs (more ranks than visible GPUs): then NCCL cannot be used.
bool ranks_share_gpus(const c10::Device& configured, const DistEnv& env, int visible_gpus);

class ProcessGroup {
 public:
  // Joins the group: rank 0 serves the TCPStore at master_addr:master_port unless a launcher already does.
  // Every rank must call this within `timeout`, which also bounds every later collective.
  ProcessGroup(const DistEnv& env, const c10::Device& device, std::chrono::milliseconds timeout,
               Backend backend = Backend::kAuto);
  ~ProcessGroup();

  int rank() const { return env_.rank; }
  int size() const { return env_.world_size; }
  const std::string& backend_name() const { return backend_name_; }

  // Sum over ranks, in place, started now (every rank must start the same collectives in the same order).
  PendingWork all_reduce_sum(at::Tensor& tensor);
  PendingWork all_reduce_max(at::Tensor& tensor);
  // In place: every rank ends with root's values.
  void broadcast(std::vector<at::Tensor>& tensors, int root = 0);
  // ZeRO-1: `output` (n) gets this rank's n-element slice of the sum of every rank's `input` (world·n).
  PendingWork reduce_scatter_sum(at::Tensor& output, at::Tensor& input);
  // `output` (world·n) gets every rank's `input` (n), in rank order.
  PendingWork all_gather(at::Tensor& output, at::Tensor& input);
  // Small host-side agreements (each a collective and a host sync): the mean of a value, and whether any
  // rank's flag is set.
  double mean(double value);
  bool any(bool flag);
  // Every rank's string, in rank order (through the store: for names at start-up, not for data).
  std::vector<std::string> all_gather_strings(const std::string& mine);

 private:
  DistEnv env_;
  c10::Device device_;
  std::string backend_name_;
  std::chrono::milliseconds timeout_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokamak
