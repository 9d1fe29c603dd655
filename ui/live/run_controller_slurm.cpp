// RunController's Slurm part (see run_controller.h, followSlurmJob): the queue state until the first step, Stop
// as scancel, and a requeue as one run. The journal of a requeued job reads `start … end(stopped) start …`;
// the stopped end is held here while Slurm still has the job (pending or running), the reader — which ends at
// a stopped run — is started again from the byte it had reached, and the second start becomes a gap in the
// curves. The end counts only once the job has left the queue (or Stop asked for it).
#include "engine/base/run/journal_events.h"
#include "ui/common/child_process.h"
#include "ui/common/programs.h"
#include "ui/live/run_controller.h"
#include "ui/live/slurm_watch.h"

namespace tokamak::ui {

bool RunController::followSlurmJob(const QString& host, const QString& tokamak, qint64 job, const QString& uid,
                                   const QString& folder, const Config& config) {
  if (process_) return false;
  config_ = config;
  resetRun();
  remote_ = !host.isEmpty();
  runHost_ = host, runTokamak_ = tokamak;
  runUid_ = uid, runFolder_ = folder;
  slurmJob_ = job;
  slurm_->watch(host, job);
  Q_EMIT queueChanged(tr("Slurm job %1: submitted").arg(job));
  launchSlurmReader();
  slurm_->pollSoon(0);
  return true;
}

// The run's journal from the byte reached so far: `runs follow` waits while the job is queued; a host's run
// is followed (and recorded here) by `tokamak remote attach`.
void RunController::launchSlurmReader() {
  const QString from = QString::number(readBytes_);
  QStringList args{"runs", "follow", runFolder_, "--control", "--from", from};
  if (remote_) {
    args = {"remote", "attach", "--host", runHost_, "--tokamak", runTokamak_, "--control", runUid_, "--from", from};
    if (!dbPath_.isEmpty()) args << "--db" << dbPath_;
  }
  const QString front = tokamakFrontPath();
  if (front.isEmpty()) {
    bridge_.on_end({"failed", engineMissingText().toStdString()});
    return finishReader();
  }
  launch(front, args);
}

// Looks at each journal line of a Slurm job's run before it goes on; true = held back (a stopped end).
namespace {

// What holdSlurmLine needs of a line: its kind and, for an end, the event.
struct EndPeek : EventSink {
  EndEvent end;
  void on_end(const EndEvent& e) override { end = e; }
};

}  // namespace

bool RunController::holdSlurmLine(const QByteArray& line) {
  EndPeek peek;
  const std::string event = dispatch_journal_line(line.toStdString(), peek);
  if (event == "step" && !slurmStepped_) {
    slurmStepped_ = true;
    showRunning();
    if (slurmNodes_.isEmpty()) slurm_->pollSoon(0);  // steps before any poll saw it run: ask for its nodes once
  }
  if (event == "end" && peek.end.status == "stopped" && !stopAsked_) {
    heldEnd_ = line;  // SIGTERM from Slurm: a requeue, a preemption, the time limit, or someone's scancel
    slurm_->pollSoon(500);
    return true;
  }
  if (event == "start" && !heldEnd_.isEmpty()) {
    // The requeued job's ranks resumed the run: what came before is drawn, then the gap, then this start.
    drain();
    EndPeek held;
    dispatch_journal_line(heldEnd_.toStdString(), held);
    const qint64 step = held.end.step;
    heldEnd_.clear();
    slurmStepped_ = false;
    Q_EMIT requeued(step);
    slurm_->pollSoon(0);
  }
  return false;
}

void RunController::showRunning() {
  Q_EMIT queueChanged(slurmNodes_.isEmpty() ? tr("running (Slurm job %1)").arg(slurmJob_)
                                            : tr("running (Slurm job %1 on %2)").arg(slurmJob_).arg(slurmNodes_));
}

// The reader has ended. True when that is not the run's end yet: a stopped end is held (the job may come back),
// or the run never started (the queue state decides) — unless the reader was let go on purpose.
bool RunController::slurmReaderEnded() {
  const bool neverStarted = start_.run_uid.empty() && !sawEnd_;
  if (detaching_ || (heldEnd_.isEmpty() && !neverStarted)) return false;
  process_->disconnect(this);
  process_->deleteLater();
  process_ = nullptr;
  slurm_->pollSoon(1000);
  return true;
}

void RunController::slurmPolled(const QJsonObject& status, const QString& error) {
  if (slurmJob_ <= 0) return;
  const bool ended = !error.isEmpty() || status.value("ended").toBool();
  const QString summary = error.isEmpty() ? status.value("summary").toString() : error;
  const bool waiting = !slurmStepped_ || !heldEnd_.isEmpty() || !process_;
  if (!ended && !waiting && slurmNodes_.isEmpty() && !status.value("nodes").toString().isEmpty())
    slurmNodes_ = status.value("nodes").toString(), showRunning();
  if (!ended) slurmNodes_ = status.value("nodes").toString();
  if (waiting && !ended)
    Q_EMIT queueChanged(heldEnd_.isEmpty() ? tr("Slurm job %1: %2").arg(slurmJob_).arg(summary)
                                           : tr("Slurm job %1, requeued: %2").arg(slurmJob_).arg(summary));
  if (process_) {
    // A job that ended before its run ever started (cancelled in the queue, refused by the nodes): its reader
    // would wait for a start that never comes. Ending its stdin ends it; the next poll ends the run.
    if (ended && start_.run_uid.empty() && !sawEnd_) process_->closeInput();
    else if (waiting) slurm_->pollSoon();
    return;
  }
  if (!ended) {  // between a requeued job's runs: follow again from where the journal was left
    launchSlurmReader();
    return slurm_->pollSoon();
  }
  if (!heldEnd_.isEmpty()) {
    dispatch_journal_line(heldEnd_.toStdString(), bridge_);
    heldEnd_.clear();
  } else if (!sawEnd_) {
    EndEvent e;
    e.status = stopAsked_ ? "stopped" : "failed";
    const QString why = errorLineOf(stderrTail_, /*orLastLine=*/false);  // a rank that died before its start
    e.error = tr("Slurm job %1 ended before its run started: %2%3")
                  .arg(slurmJob_)
                  .arg(summary, why.isEmpty() ? QString() : " — " + why)
                  .toStdString();
    bridge_.on_end(e);
  }
  finishReader();
}

}  // namespace tokamak::ui
