// Loss spikes: a step whose loss or gradient norm stands far above the recent steps'. Measured against the
// median and the median absolute deviation (MAD) of a window of the last accepted steps, not their mean and
// standard deviation, so that one spike in the window does not hide the next. No LibTorch: the trainer feeds it
// host numbers, and its state travels in a checkpoint's metadata so that a resumed run decides as the first did.
#pragma once
#include <cstdint>
#include <deque>
#include <string>

namespace tokamak {

struct SpikeVerdict {
  bool spike = false;
  std::string signal;   // "loss" or "grad_norm": the one that crossed (the loss when both did)
  double value = 0;     // its value at this step
  double median = 0;    // the window's median of that signal
  double limit = 0;     // median + threshold × robust deviation: above it is a spike
  // The parameter group whose gradient RMS jumped most against its running mean (layer_metrics.h's groups, e.g.
  // "h3.attn"), and that jump as a ratio; set by the trainer, "" where it was not measured.
  std::string layer;
  double layer_jump = 0;
};

class SpikeDetector {
 public:
  // Thresholds in robust deviations, the loss's and the gradient norm's: the norm's is the higher, since early in
  // training it jumps ten deviations and more on ordinary batches (clipping bounds what such a step does).
  SpikeDetector(int64_t window, double threshold, double norm_threshold)
      : window_(window), threshold_(threshold), norm_threshold_(norm_threshold) {}

  // Whether this step is a spike. Nothing is decided until the window is full, and a non-finite value is the
  // non-finite check's business, never a spike.
  SpikeVerdict check(double loss, double grad_norm) const;
  // A step that was trained on joins the window (a skipped or rolled-back spike does not).
  void accept(double loss, double grad_norm);
  bool ready() const { return static_cast<int64_t>(losses_.size()) >= window_; }

  // The window as JSON ({"loss":[…],"grad_norm":[…]}, doubles written to round-trip exactly), and back.
  std::string state_json() const;
  void load_state_json(const std::string& text);

 private:
  int64_t window_;
  double threshold_, norm_threshold_;
  std::deque<double> losses_, norms_;
};

// The limit above which X is a spike, from the window's values: median + threshold × max(1.4826 · MAD,
// 1% of |median|). The floor keeps a flat stretch (MAD near 0) from calling ordinary noise a spike.
double spike_limit(const std::deque<double>& window, double threshold, double* median_out = nullptr);

}  // namespace tokamak
