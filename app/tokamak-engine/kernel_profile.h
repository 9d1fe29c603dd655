// `--kernels N` of `tokamak bench` and `tokamak train`, one implementation: the steps of a window of the run
// profiled kernel by kernel (kernel_table.h), then each kind of their work held against its floor under the
// machine's two limits (engine/base/perf/speed_of_light.h). The two tables are printed after the run, and the kinds
// with their limits stored with the run.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "app/tokamak-engine/kernel_table.h"
#include "engine/base/config/config.h"
#include "engine/base/run/events.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/store_sink.h"

namespace tokamak::cli {

// `train --kernels N`: the steps it profiles after the first, at most (the window ends at the first report with
// this many): enough for a steady step, and a long run is neither slowed nor kept in the profiler's memory past it.
constexpr int64_t kTrainKernelSteps = 20;

// An EventSink beside the run's others, on the thread that trains (the CPU profiler records only that thread).
// The window: from the report of step start_step + `skip` (at the run's start when skip is 0) to the first report
// with `most` steps in it, or the run's last step. Report steps end with a sync, so the profile holds exactly the
// kernels of the window's steps.
class KernelProfile : public EventSink {
 public:
  KernelProfile(int top, bool cuda, int64_t skip, int64_t most = std::numeric_limits<int64_t>::max());
  ~KernelProfile() override { kernels_.stop(); }  // a run that threw: the profiler ends with it
  void on_start(const RunStart& e) override;
  void on_step(const StepEvent& e) override;
  void on_end(const EndEvent& e) override;

  struct Result {
    std::string text;           // the kernel table, then the speed-of-light table; a one-line note when none
    SpeedOfLightRecord record;  // no kinds when nothing was profiled
  };
  // After the run, with its config: the tables, the bandwidth measured now that the steps are over (so that
  // neither disturbs the other). A run that ended inside its window gets a note, not a table of a part window.
  Result finish(const Config& run);

 private:
  int top_;
  bool cuda_;
  int64_t skip_, most_;
  int64_t first_ = -1, last_report_ = 0, total_steps_ = 0, steps_ = 0, end_step_ = 0;
  double seconds_ = 0;
  double peak_flops_ = -1;  // the run's matmul limit: MFU's denominator
  std::string peak_source_, table_;
  KernelTable kernels_;
};

// `--kernels N` as given (0 when not given): a whole number of kernels to list, 1 to 1000000, digits only;
// anything else (an empty value, blanks, a sign) is refused in one line that names it and says what to give, before
// anything runs.
int kernels_to_list(const std::string& given, bool was_given);

// Refuses a profile of a run whose kernels it cannot see rightly: under speed.cuda_graphs the step is captured with
// the profiler's CUPTI active (reported to hang or fault) and the replayed kernels carry no operator to name them.
void refuse_unprofilable(const Config& c);

// Keeps the profile with the run STORE recorded, once the run's own writer is done with the file (STORE is reset).
// A store that refuses it is a warning on stderr: the run's status stays what it was.
void store_profile(std::unique_ptr<StoreSink>& store, const SpeedOfLightRecord& record);

}  // namespace tokamak::cli
