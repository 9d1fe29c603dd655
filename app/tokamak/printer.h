// The CLI's sink: human-readable progress on stderr, and with --json one JSON object per event on stdout.
#pragma once
#include "engine/train/events.h"

namespace tokamak::cli {

class PrinterSink : public EventSink {
 public:
  explicit PrinterSink(bool json) : json_(json) {}
  void on_start(const RunStart& e) override;
  void on_step(const StepEvent& e) override;
  void on_eval(const EvalEvent& e) override;
  void on_skip(const SkipEvent& e) override;
  void on_sample(const SampleEvent& e) override;
  void on_checkpoint(const CheckpointEvent& e) override;
  void on_end(const EndEvent& e) override;
  void on_progress(const ProgressEvent& e) override;
  void on_warning(const WarningEvent& e) override;

 private:
  bool json_;
  int64_t total_steps_ = 0;
  int last_percent_ = -1;
};

}  // namespace tokamak::cli
