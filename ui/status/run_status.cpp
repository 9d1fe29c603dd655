// RunStatus: step, tok/s, ETA and device in the status bar (see run_status.h).
#include "ui/status/run_status.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>

#include <cmath>

#include "ui/common/qt_helpers.h"

namespace tokamak::ui {

RunStatus::RunStatus(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(16);
  for (QLabel** l : {&state_, &step_, &speed_, &eta_, &device_, &skips_, &spikes_, &alerts_, &warnings_}) {
    *l = new QLabel;
    layout->addWidget(*l);
  }
  state_->setObjectName("runState");
  step_->setObjectName("runStep");
  skips_->setObjectName("runSkips");
  spikes_->setObjectName("runSpikes");
  alerts_->setObjectName("runAlerts");
  warnings_->setObjectName("runWarnings");
  // A warning's or a skip's whole text is in its tooltip: however long, it may be cut rather than widen the
  // window past a small screen (the status bar's least width is the window's).
  warnings_->setMaximumWidth(420);
  for (QLabel* note : {skips_, spikes_, alerts_, warnings_}) note->setMinimumWidth(note->fontMetrics().averageCharWidth() * 8);
  setState(tr("idle"));
}

void RunStatus::runStarted(const RunStart& s, const QStringList& rankDevices) {
  total_ = s.total_steps;
  firstStep_ = -1;
  step_->setText(tr("step %1 / %2").arg(s.start_step).arg(total_));
  speed_->clear();
  eta_->clear();
  const QStringList devices = rankDevices.isEmpty() ? QStringList{QString::fromStdString(s.device)} : rankDevices;
  // Ranks on the same device kind (CPU ranks) read as one entry; distinct GPUs are listed.
  QStringList distinct = devices;
  distinct.removeDuplicates();
  device_->setText(devices.size() == 1 ? devices.first()
                                       : tr("%1 ranks: %2").arg(devices.size()).arg(distinct.join(", ")));
  QStringList lines;
  for (int r = 0; r < devices.size(); ++r) lines << tr("rank %1: %2").arg(r).arg(devices[r]);
  device_->setToolTip(lines.join('\n'));
}

void RunStatus::stepped(const StepEvent& e) {
  step_->setText(tr("step %1 / %2").arg(e.step).arg(total_));
  speed_->setText(tr("%1 tok/s").arg(count_text(e.metric("tok_s"))));
  // The average since the first report includes evals and samples, which the per-report tok/s leaves out.
  if (firstStep_ < 0) firstStep_ = e.step, firstWall_ = e.wall_s;
  const double rate = e.wall_s > firstWall_ ? (e.step - firstStep_) / (e.wall_s - firstWall_) : 0;
  const double perStep = rate > 0 ? 1.0 / rate : e.metric("step_ms") / 1000.0;
  // The run's own estimate (eta_s: its pace since it started or resumed, evaluations included) where it sends one.
  double left = e.metric("eta_s");
  if (std::isnan(left)) left = total_ > e.step && perStep > 0 ? (total_ - e.step) * perStep : -1;
  eta_->setText(total_ > e.step && left >= 0
                    ? tr("ETA %1 (%2)")
                          .arg(formatDuration(left))
                          .arg(QDateTime::currentDateTime().addSecs(static_cast<qint64>(left)).toString("HH:mm"))
                    : QString());
}

void RunStatus::setState(const QString& state) { state_->setText(state); }

void RunStatus::runEnded(const QString& status) {
  setState(status);
  eta_->clear();
}

void RunStatus::setProgress(const ProgressEvent& p) {
  if (p.total == 0) return;
  step_->setText(tr("%1: %2%").arg(QString::fromStdString(p.what)).arg(100.0 * p.done / p.total, 0, 'f', 0));
}

QString RunStatus::note(const std::vector<SkipEvent>& skips, const std::vector<WarningEvent>& warnings) {
  for (const WarningEvent& w : warnings) warningLines_ << QString::fromStdString(w.message);
  if (!warnings.empty()) {
    const qsizetype n = warningLines_.size();
    const QString head = n == 1 ? tr("1 dataset warning") : tr("%1 dataset warnings").arg(n);
    warnings_->setText(head + ": " + fontMetrics().elidedText(warningLines_.last(), Qt::ElideRight, 300));
    warnings_->setToolTip(warningLines_.join('\n'));
  }
  if (!skips.empty()) {
    const SkipEvent& e = skips.back();
    const QString reason = QString::fromStdString(e.reason);
    skips_->setText((e.total == 1 ? tr("1 step skipped") : tr("%1 steps skipped").arg(e.total)) +
                    tr(" (step %1: %2)").arg(e.step).arg(reason));
    skips_->setToolTip(skips_->text() + "\n" +
                       tr("A skipped step's update is not applied: training goes on from the weights before it. "
                          "%1 in a row now.")
                           .arg(e.in_a_row));
  }
  if (!warnings.empty()) return tr("Dataset: %1").arg(warningLines_.last());
  if (!skips.empty())
    return tr("Step %1 skipped: %2").arg(skips.back().step).arg(QString::fromStdString(skips.back().reason));
  return {};
}

QString RunStatus::noteSpikes(const std::vector<SpikeEvent>& spikes) {
  if (spikes.empty()) return {};
  const SpikeEvent& e = spikes.back();
  QString action = QString::fromStdString(e.action);
  if (e.action == "rolled back") action = tr("rolled back to step %1").arg(e.to_step);
  spikes_->setText((e.total == 1 ? tr("1 loss spike") : tr("%1 loss spikes").arg(e.total)) +
                   tr(" (step %1: %2)").arg(e.step).arg(action));
  const QString what = e.signal == "loss" ? tr("loss") : tr("gradient norm");
  spikes_->setToolTip(tr("Step %1: %2 %3 against a median of %4 over the last steps (a spike above %5): %6.")
                          .arg(e.step)
                          .arg(what)
                          .arg(e.value, 0, 'g', 4)
                          .arg(e.median, 0, 'g', 4)
                          .arg(e.limit, 0, 'g', 4)
                          .arg(action));
  return tr("Step %1: a %2 spike, %3").arg(e.step).arg(what).arg(action);
}

void RunStatus::noteAlert(const AlertEvent& a) {
  const QString kind = QString::fromStdString(a.kind).replace('_', ' ');
  alertLines_ << tr("step %1, %2: %3").arg(a.step).arg(kind).arg(QString::fromStdString(a.message));
  alerts_->setText(tr("%1 at step %2").arg(kind).arg(a.step));
  alerts_->setToolTip(alertLines_.join('\n'));
}

void RunStatus::clearNotes() {
  warningLines_.clear(), alertLines_.clear();
  for (QLabel* l : {skips_, spikes_, alerts_, warnings_}) l->clear(), l->setToolTip({});
}

QString RunStatus::alertsText() const { return alerts_->text(); }

QString RunStatus::spikesText() const { return spikes_->text(); }

QString RunStatus::skipsText() const { return skips_->text(); }
QString RunStatus::warningsText() const { return warnings_->text(); }

QString RunStatus::stateText() const { return state_->text(); }
QString RunStatus::stepText() const { return step_->text(); }

QString RunStatus::text() const {
  QStringList parts;
  for (QLabel* l : {state_, step_, speed_, eta_, device_, skips_, spikes_, alerts_, warnings_})
    if (!l->text().isEmpty()) parts << l->text();
  return parts.join(" · ");
}

QString RunStatus::formatDuration(double s) {
  const qint64 t = static_cast<qint64>(s + 0.5);
  if (t >= 3600) return QString("%1h%2m").arg(t / 3600).arg((t % 3600) / 60, 2, 10, QChar('0'));
  if (t >= 60) return QString("%1m%2s").arg(t / 60).arg(t % 60, 2, 10, QChar('0'));
  return QString("%1s").arg(t);
}

}  // namespace tokamak::ui
