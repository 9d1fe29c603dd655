// RunStatus: the status bar's permanent read-out of the run — state, step of total, tok/s, ETA, the device
// of each rank (one line per rank in its tooltip), and what the run warned about: skipped steps (a non-finite
// loss or gradient) and its dataset's warnings (each in full in the tooltip).
#pragma once
#include <QStringList>
#include <QWidget>
#include <vector>

#include "engine/base/run/events.h"

class QLabel;

namespace tokamak::ui {

class RunStatus : public QWidget {
  Q_OBJECT
 public:
  explicit RunStatus(QWidget* parent = nullptr);

  // rankDevices: each rank's device and its name ("cuda:1 (NVIDIA H100)"), rank 0 first.
  void runStarted(const RunStart& start, const QStringList& rankDevices);
  void stepped(const StepEvent& step);
  void setState(const QString& state);  // "preparing", "running", "paused", "stopping", or an end status
  // The run's end (finished, stopped, failed, crashed): its state, and no ETA for a run that is over.
  void runEnded(const QString& status);
  void setProgress(const ProgressEvent& progress);
  // A batch's skipped steps and dataset warnings, kept in the read-out; returns the newest as one line for
  // the status bar ("" when there is none).
  QString note(const std::vector<SkipEvent>& skips, const std::vector<WarningEvent>& warnings);
  // A batch's loss spikes (health.spike_action), kept in the read-out; returns the newest as one line.
  QString noteSpikes(const std::vector<SpikeEvent>& spikes);
  // The newest slowdown or stall, kept in the read-out (all of them in its tooltip).
  void noteAlert(const AlertEvent& alert);
  void clearNotes();  // a new run: no skips, no spikes, no warnings

  QString stateText() const;
  QString stepText() const;
  QString skipsText() const;     // "2 steps skipped (step 41: loss is nan)", "" when none
  QString spikesText() const;    // "1 loss spike (step 31: skipped)", "" when none
  QString alertsText() const;    // "slowdown at step 120", "" when none
  QString warningsText() const;  // "1 dataset warning: …", "" when none
  QString text() const;          // everything shown, for tests and screenshots' captions

  static QString formatDuration(double seconds);

 private:
  QLabel *state_, *step_, *speed_, *eta_, *device_, *skips_, *spikes_, *alerts_, *warnings_;
  QStringList alertLines_;
  QStringList warningLines_;
  qint64 total_ = 0, firstStep_ = -1;
  double firstWall_ = 0;
};

}  // namespace tokamak::ui
