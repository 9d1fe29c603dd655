// `--kernels N` of bench and train (see kernel_profile.h).
#include "app/tokamak-engine/kernel_profile.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "engine/base/util/error.h"
#include "engine/torch/device/device.h"
#include "engine/torch/metrics/memory_bandwidth.h"

namespace tokamak::cli {
namespace {

std::string profile_number(double v, const char* fmt) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

KernelProfile::KernelProfile(int top, bool cuda, int64_t skip, int64_t most)
    : top_(top), cuda_(cuda), skip_(skip), most_(most) {}

void KernelProfile::on_start(const RunStart& e) {
  peak_flops_ = e.peak_flops, peak_source_ = e.peak_source;
  total_steps_ = e.total_steps;
  if (e.start_step + skip_ >= total_steps_) skip_ = 0;  // no step after the skipped ones: profile them all
  first_ = e.start_step + skip_;
  last_report_ = first_;
  if (skip_ == 0) kernels_.start(cuda_);
}

void KernelProfile::on_step(const StepEvent& e) {
  if (first_ < 0) return;  // no start: nothing to measure against
  if (skip_ > 0 && e.step == first_) {
    kernels_.start(cuda_);
    return;
  }
  if (!kernels_.running() || e.step <= first_) return;
  // step_ms is the mean of the report's steps: every step since the last report.
  const int64_t steps = e.step - last_report_;
  steps_ += steps, seconds_ += e.metric("step_ms") / 1000.0 * static_cast<double>(steps);
  last_report_ = e.step;
  if (steps_ >= most_ || e.step == total_steps_) table_ = kernels_.table(steps_, top_);
}

void KernelProfile::on_end(const EndEvent& e) { end_step_ = e.step; }

KernelProfile::Result KernelProfile::finish(const Config& run) {
  Result out;
  kernels_.stop();  // ended inside its window: the profiler must not outlive the run
  if (table_.empty() || kernels_.kinds().empty()) {
    out.text = "kernels: no table: the run ended at step " + std::to_string(end_step_) +
               ", inside the steps to profile (steps " + std::to_string(first_ + 1) + " on)\n";
    return out;
  }
  Config c = run;
  c.speed.precision = resolved_precision(c.speed.precision, c.device);
  const MemoryBandwidth bandwidth = memory_bandwidth(parse_device(c.device));
  const std::vector<KindFloor> rows = speed_of_light(c, kernels_.kinds(), peak_flops_, bandwidth);
  out.text = table_ + speed_of_light_table(rows, peak_flops_, peak_source_, bandwidth);
  const auto work = step_work(c);
  if (work.count("matmul")) out.text += matmul_work_check(work.at("matmul").flops, kernels_.gemm_flops());
  double profiled = 0;
  for (const auto& [kind, m] : kernels_.kinds()) profiled += m.ms;
  if (steps_ > 0 && seconds_ > 0) {
    const double step_ms = 1e3 * seconds_ / static_cast<double>(steps_);
    out.text += "  the kinds add up to " + profile_number(profiled, "%.2f") + " of the " +
                profile_number(step_ms, "%.2f") + " ms step (" + profile_number(100 * profiled / step_ms, "%.1f%%") +
                "); the rest " +
                (cuda_ ? "the GPU sat idle between kernels"
                       : "ran outside any operator: the trainer's own code, the profiler") +
                "\n";
  }
  out.record = {peak_flops_, bandwidth.dram(), peak_source_, bandwidth.source, {}};
  for (const KindFloor& r : rows)
    out.record.kinds.push_back({r.kind, r.ms, r.calls, r.flops, r.bytes, r.floor_ms, r.bound});
  return out;
}

void refuse_unprofilable(const Config& c) {
  if (c.speed.cuda_graphs)
    throw Error("--kernels with speed.cuda_graphs is not implemented yet: a replayed graph's kernels name no operator, "
                "and capturing under the profiler can hang",
                "profile the same rung with speed.cuda_graphs=false, or drop --kernels");
}

int kernels_to_list(const std::string& given, bool was_given) {
  if (!was_given) return 0;
  constexpr long long kMost = 1000000;
  const bool digits = !given.empty() && given.find_first_not_of("0123456789") == std::string::npos;
  const std::string shown = given.empty() ? "''" : given;
  if (!digits)
    throw Error("--kernels " + shown + ": not a number of kernels to list",
                "give how many of the costliest kernels to print, a whole number from 1 to 1000000, as in --kernels 20");
  // Digits only: past 7 of them (leading zeros aside) it is over the most, however many there are.
  const std::string significant = given.substr(std::min(given.find_first_not_of('0'), given.size()));
  const long long n = significant.size() > 7 ? kMost + 1 : significant.empty() ? 0 : std::stoll(significant);
  if (n < 1 || n > kMost)
    throw Error("--kernels " + given + ": " + (n < 1 ? "0 kernels lists nothing" : "more than the most, 1000000"),
                "give how many of the costliest kernels to print, a whole number from 1 to 1000000, as in --kernels 20");
  return static_cast<int>(n);
}

void store_profile(std::unique_ptr<StoreSink>& store, const SpeedOfLightRecord& record) {
  if (!store || store->run_id() <= 0 || record.kinds.empty()) return;
  const int64_t id = store->run_id();
  const std::string path = store->path();
  store.reset();  // the run's own writer is done with it first
  const std::string why_not = store_speed_of_light(path, id, record);
  if (!why_not.empty())
    std::fprintf(stderr, "tokamak: warning: the kernel table was printed but could not be stored with run %lld: %s\n",
                 static_cast<long long>(id), why_not.c_str());
}

}  // namespace tokamak::cli
