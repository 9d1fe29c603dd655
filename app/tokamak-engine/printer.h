// The CLI's sink: human-readable progress on stderr, with --json one JSON object per event on stdout, and
// the same lines appended to the run's journal (engine/base/run/journal.h) when it has one.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>

#include "engine/base/run/events.h"

namespace tokamak {
class JournalWriter;
}

namespace tokamak::cli {

class PrinterSink : public EventSink {
 public:
  explicit PrinterSink(bool json) : json_(json) {}
  // Every JSON line also goes to JOURNAL; when an append fails (a full disk), on_failure gets the one-line
  // reason, once, and the journal takes no more lines.
  void set_journal(JournalWriter* journal, std::function<void(const std::string&)> on_failure) {
    journal_ = journal, on_journal_failure_ = std::move(on_failure);
  }
  void on_start(const RunStart& e) override;
  void on_step(const StepEvent& e) override;
  void on_eval(const EvalEvent& e) override;
  void on_skip(const SkipEvent& e) override;
  void on_spike(const SpikeEvent& e) override;
  void on_alert(const AlertEvent& e) override;
  void on_sample(const SampleEvent& e) override;
  void on_checkpoint(const CheckpointEvent& e) override;
  void on_end(const EndEvent& e) override;
  void on_progress(const ProgressEvent& e) override;
  void on_warning(const WarningEvent& e) override;

 private:
  void emit(const nlohmann::json& j);
  bool wants_json() const { return json_ || journal_; }

  bool json_;
  bool stdout_closed_ = false;
  JournalWriter* journal_ = nullptr;
  std::function<void(const std::string&)> on_journal_failure_;
  bool journal_failure_said_ = false;
  int64_t total_steps_ = 0;
  int last_percent_ = -1;
};

}  // namespace tokamak::cli
