#include "engine/base/util/core_sharing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "engine/base/util/cores.h"

namespace tokamak {

CoreSharing::CoreSharing(int threads, bool adapt, Options options)
    : threads_(std::max(1, threads)), adapt_(adapt), o_(std::move(options)), desired_(threads_), applied_(threads_) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stopping_) {
      if (!adapt_ && said_) break;
      lk.unlock();
      try {
        look();
      } catch (...) {
        lk.lock();
        break;  // a look that fails (no /proc, no memory) ends the looking, never the run
      }
      lk.lock();
      stop_cv_.wait_for(lk, std::chrono::duration<double>(o_.interval_s), [&] { return stopping_; });
    }
  });
}

CoreSharing::~CoreSharing() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

bool CoreSharing::enabled() { return std::getenv("TOKAMAK_NO_CORE_SHARING") == nullptr; }

void CoreSharing::look() {
  std::vector<BusyPeer> peers = busy_torch_peers(0.2, o_.min_cores);
  if (o_.counts)
    peers.erase(std::remove_if(peers.begin(), peers.end(), [&](const BusyPeer& p) { return !o_.counts(p.pid); }),
                peers.end());
  std::lock_guard<std::mutex> lk(mu_);
  if (!adapt_) {
    // The threads are the user's: the first busy peer is said, once, and the threads left as they are.
    if (!peers.empty()) {
      said_ = true;
      why_ = busy_peers_text(peers) + ": with " + std::to_string(threads_) +
             " threads here each runs at a fraction of its speed alone (hint: " + kShareCoresHint + ")";
    }
    return;
  }
  // An equal share with every busy process: they are other runs as a rule, and this one's threads spinning
  // beside theirs is what costs both most.
  const int share = std::max(1, threads_ / (1 + static_cast<int>(peers.size())));
  if (share == desired_) return;
  desired_ = share;
  why_ = share < threads_ ? busy_peers_text(peers) + ": training with " + std::to_string(share) + " of its " +
                                std::to_string(threads_) + " threads while they are (hint: " + kShareCoresHint + ")"
                          : "no other LibTorch process is busy on this run's cores now: training with its " +
                                std::to_string(threads_) + " threads again";
}

bool CoreSharing::poll(int* threads, std::string* line) {
  std::lock_guard<std::mutex> lk(mu_);
  *threads = 0;
  if (why_.empty()) return false;
  line->swap(why_);
  why_.clear();
  if (adapt_ && desired_ != applied_) *threads = applied_ = desired_;
  return true;
}

}  // namespace tokamak
