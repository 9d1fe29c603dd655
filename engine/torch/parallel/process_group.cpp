// The c10d process group (see process_group.h). Gloo comes from libtorch_cpu with Debian's libgloo-dev
// headers (the wheel ships c10d's headers but not Gloo's); we only hand Gloo's objects around as pointers
// that libtorch_cpu made, so the header version matters for compiling, not for the layout of anything we touch.
#include "engine/torch/parallel/process_group.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#ifdef TOKAMAK_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <cstdlib>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

// c10d's messages carry a C++ backtrace after the first line; a run's error is one line.
std::string first_line(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  std::string s = c10 ? c10->what_without_backtrace() : e.what();
  return s.substr(0, s.find('\n'));
}

Error collective_error(const std::exception& e, const std::string& backend) {
  return Error("data-parallel " + backend + " collective failed: " + first_line(e),
               "another rank probably died or hung; see its error above, or raise dist.timeout_s");
}

bool loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1"; }

}  // namespace

struct PendingWork::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  std::string backend;
};

PendingWork::PendingWork() = default;
PendingWork::~PendingWork() = default;
PendingWork::PendingWork(PendingWork&&) noexcept = default;
PendingWork& PendingWork::operator=(PendingWork&&) noexcept = default;
bool PendingWork::pending() const { return impl_ && impl_->work; }

void PendingWork::wait() {
  if (!pending()) return;
  try {
    impl_->work->wait();
  } catch (const std::exception& e) {
    impl_->work.reset();
    throw collective_error(e, impl_->backend);
  }
  impl_->work.reset();
}

bool PendingWork::on_done(std::function<void()> done) {
  if (!pending()) return false;
  try {
    c10::intrusive_ptr<c10::ivalue::Future> future = impl_->work->getFuture();
    if (!future) return false;
    future->addCallback([done = std::move(done)](c10::ivalue::Future&) { done(); });
    return true;
  } catch (const std::exception&) {  // c10d's base Work: "getFuture is not implemented"
    return false;
  }
}

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  int64_t gathers = 0;

  PendingWork wrap(c10::intrusive_ptr<c10d::Work> work, const std::string& name) {
    PendingWork p;
    p.impl_ = std::make_unique<PendingWork::Impl>();
    p.impl_->work = std::move(work);
    p.impl_->backend = name;
    return p;
  }
};

c10::Device rank_device(const c10::Device& configured, const DistEnv& env, int visible_gpus) {
  if (!configured.is_cuda() || !env.distributed()) return configured;
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % std::max(1, visible_gpus)));
}

bool ranks_share_gpus(const c10::Device& configured, const DistEnv& env, int visible_gpus) {
  return configured.is_cuda() && env.distributed() && env.local_world_size > std::max(1, visible_gpus);
}

ProcessGroup::ProcessGroup(const DistEnv& env, const c10::Device& device, std::chrono::milliseconds timeout,
                           Backend backend)
    : env_(env), device_(device), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  const bool nccl = device.is_cuda() && backend == Backend::kAuto;
  backend_name_ = nccl ? "nccl" : "gloo";
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(env.master_port);
    so.isServer = env.rank == 0 && !env.store_hosted;
    // Every rank counts itself in, so rank 0 (when it serves) returns once all have joined.
    if (!env.store_hosted) so.numWorkers = static_cast<size_t>(env.world_size);
    so.timeout = timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    // A prefix keeps our keys apart from those of torchrun's agent, which serves the same store.
    // and a restarted attempt must not read the keys (Gloo's addresses) of the one before.
    impl_->store = c10::make_intrusive<c10d::PrefixStore>("tokamak/attempt_" + std::to_string(env.attempt), tcp);
  } catch (const std::exception& e) {
    throw Error(
        "rank " + std::to_string(env.rank) + " could not join the rendezvous at " + where + ": " + first_line(e),
        "check MASTER_ADDR/MASTER_PORT and that every rank starts within dist.timeout_s");
  }
  try {
    if (nccl) {
#ifdef TOKAMAK_WITH_CUDA
      // On a NCCL error or timeout the watchdog aborts the communicators and wait() throws (mode 2,
      // CleanUpOnly), so the run ends as failed with a checkpoint instead of the process being torn down.
      setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", /*overwrite=*/0);
      c10::cuda::set_device(device.index() < 0 ? 0 : device.index());  // NCCL's communicator binds the current GPU
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = timeout;
      impl_->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, env.rank, env.world_size, opts);
#else
      throw Error("data parallel on CUDA needs a build with CUDA", "build with TOKAMAK_CUDA=ON and a CUDA LibTorch");
#endif
    } else {
      auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      if (ifname && *ifname) opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (loopback(env.master_addr))
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      impl_->backend = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank, env.world_size, opts);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(env.rank) + " could not connect its " + backend_name_ + " group (" + where +
                    "): " + first_line(e),
                "every rank must start within dist.timeout_s; on several machines set GLOO_SOCKET_IFNAME or "
                "NCCL_SOCKET_IFNAME");
  }
}

// A group is shut down before it is destroyed, as torch.distributed.destroy_process_group does: NCCL's
// communicators are finalised and its watchdog thread ended while the CUDA context still exists, rather than
// torn down by a destructor at process exit (a hang or "process group not shut down" warnings). Gloo: nothing.
ProcessGroup::~ProcessGroup() {
  if (!impl_ || !impl_->backend) return;
  try {
    impl_->backend->shutdown();
  } catch (const std::exception&) {  // a group whose peer died: nothing is left to finalise cleanly
  }
}

PendingWork ProcessGroup::all_reduce_sum(at::Tensor& tensor) {
  std::vector<at::Tensor> t{tensor};
  try {
    return impl_->wrap(impl_->backend->allreduce(t, c10d::AllreduceOptions{}), backend_name_);
  } catch (const std::exception& e) {
    throw collective_error(e, backend_name_);
  }
}

PendingWork ProcessGroup::all_reduce_max(at::Tensor& tensor) {
  std::vector<at::Tensor> t{tensor};
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::MAX;
  try {
    return impl_->wrap(impl_->backend->allreduce(t, o), backend_name_);
  } catch (const std::exception& e) {
    throw collective_error(e, backend_name_);
  }
}

void ProcessGroup::broadcast(std::vector<at::Tensor>& tensors, int root) {
  c10d::BroadcastOptions o;
  o.rootRank = root;
  try {
    // One collective per tensor: Gloo broadcasts a list only when it is one tensor per device.
    for (at::Tensor& t : tensors) {
      std::vector<at::Tensor> one{t};
      impl_->backend->broadcast(one, o)->wait();
    }
  } catch (const std::exception& e) {
    throw collective_error(e, backend_name_);
  }
}

PendingWork ProcessGroup::reduce_scatter_sum(at::Tensor& output, at::Tensor& input) {
  try {
    return impl_->wrap(impl_->backend->_reduce_scatter_base(output, input, c10d::ReduceScatterOptions{}),
                       backend_name_);
  } catch (const std::exception& e) {
    throw collective_error(e, backend_name_);
  }
}

PendingWork ProcessGroup::all_gather(at::Tensor& output, at::Tensor& input) {
  try {
    return impl_->wrap(impl_->backend->_allgather_base(output, input, c10d::AllgatherOptions{}), backend_name_);
  } catch (const std::exception& e) {
    throw collective_error(e, backend_name_);
  }
}

double ProcessGroup::mean(double value) {
  at::Tensor t = at::full({1}, value, at::TensorOptions().dtype(at::kDouble).device(device_));
  all_reduce_sum(t).wait();
  return t.item<double>() / static_cast<double>(env_.world_size);
}

bool ProcessGroup::any(bool flag) {
  at::Tensor t = at::full({1}, flag ? 1.0f : 0.0f, at::TensorOptions().dtype(at::kFloat).device(device_));
  all_reduce_max(t).wait();
  return t.item<float>() > 0;
}

std::vector<std::string> ProcessGroup::all_gather_strings(const std::string& mine) {
  const std::string prefix = "gather" + std::to_string(impl_->gathers++) + "/";
  std::vector<std::string> all;
  try {
    impl_->store->set(prefix + std::to_string(env_.rank), std::vector<uint8_t>(mine.begin(), mine.end()));
    for (int r = 0; r < env_.world_size; ++r) {
      std::vector<uint8_t> v = impl_->store->get(prefix + std::to_string(r));
      all.emplace_back(v.begin(), v.end());
    }
  } catch (const std::exception& e) {
    throw collective_error(e, "store");
  }
  return all;
}

}  // namespace tokamak
