// How a run watches its own loss (health.spike_action): the spike detector, the spikes counted, and what a
// rollback changed — the data position's offset (steps of data passed over) and the steps trained at a lowered
// learning rate. Kept in every checkpoint, so a resumed run reads the same data and decides the same way.
// No LibTorch: the trainer gives it host numbers and does the rollback itself (trainer.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/run/events.h"
#include "engine/base/run/spike_detector.h"

namespace tokamak {

class SpikeWatch {
 public:
  explicit SpikeWatch(const HealthConfig& h);

  SpikeAction action() const { return action_; }
  // Whether the action must be decided before the update (skip, rollback): the loss is read every step.
  bool decides_each_step() const { return action_ == SpikeAction::kSkip || action_ == SpikeAction::kRollback; }
  // STEP (1-based) was just computed. A normal step joins the window; a spike is counted and joins it only
  // when warned (its update stays).
  SpikeVerdict look(double loss, double grad_norm);
  // The event for a spike at STEP, the action taken in words; throws tokamak::Error (one line) once the run has
  // had more than health.max_spikes.
  SpikeEvent event(int64_t step, int64_t tokens, double wall_s, const SpikeVerdict& v, const std::string& action) const;

  // The data a 0-based STEP reads: later by the steps every rollback passed over.
  int64_t data_step(int64_t step) const { return step + data_offset_; }
  // The learning rate's factor at 0-based STEP (below 1 for health.rollback_lr_steps after a rollback).
  double lr_scale(int64_t step) const { return step < lr_low_until_ ? lr_scale_ : 1.0; }
  // The run went back from STEP (the spike) to the checkpoint of TO_STEP, whose state (WINDOW_STATE, "" for none)
  // the detector takes again; the spikes counted and the data passed over so far are kept.
  void rolled_back(int64_t step, int64_t to_step, const std::string& checkpoint_state);
  int64_t total() const { return total_; }

  std::string state_json() const;
  void load_state_json(const std::string& text);  // a resume: everything, the count included

 private:
  SpikeAction action_;
  int64_t max_spikes_, lr_steps_;
  double lr_scale_;
  SpikeDetector detector_;
  int64_t total_ = 0, data_offset_ = 0, lr_low_until_ = 0;
};

}  // namespace tokamak
