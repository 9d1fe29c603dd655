// Ladder runs for the queue and the ladder's compare view (see ladder_queue.h).
#include "ui/queue/ladder_queue.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>
#include <QRegularExpression>

#include "engine/base/config/ladder.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "ui/history/compare_view.h"
#include "ui/history/runs_model.h"
#include "ui/history/runs_panel.h"

namespace tokamak::ui {

QList<Config> ladderRuns(const QString& path, const QList<qint64>& seeds, QString* error) {
  if (seeds.isEmpty()) return *error = QObject::tr("Run ladder: give at least one seed (e.g. 1,2,3)"), QList<Config>{};
  Ladder ladder;
  try {
    ladder = load_ladder(path.toStdString());
  } catch (const std::exception& e) {
    *error = QObject::tr("%1: %2").arg(path, QString::fromStdString(e.what()));
    return {};
  }
  QList<Config> runs;
  for (const LadderRung& rung : ladder.rungs)
    for (qint64 seed : seeds) {
      Config c = rung.config;
      c.train.seed = seed;
      c.name = ladder.name + "/" + rung.name + (seeds.size() > 1 ? "-s" + std::to_string(seed) : "");
      runs << c;
    }
  return runs;
}

bool parseSeeds(const QString& text, QList<qint64>* seeds, QString* error) {
  seeds->clear();
  for (const QString& part : text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts)) {
    bool ok = false;
    const qint64 seed = part.toLongLong(&ok);
    if (!ok || seed < 0) {
      *error = QObject::tr("seeds: \"%1\" is not a seed (write whole numbers, e.g. 1,2,3)").arg(part);
      return false;
    }
    if (!seeds->contains(seed)) *seeds << seed;
  }
  if (seeds->isEmpty()) *error = QObject::tr("seeds: none given (write whole numbers, e.g. 1,2,3)");
  return !seeds->isEmpty();
}

QString ladderOf(const QString& runName) {
  const qsizetype slash = runName.indexOf('/');
  return slash > 0 ? runName.left(slash) : QString();
}

bool askLadderRun(QWidget* parent, QString* path, QList<qint64>* seeds) {
  *path = QFileDialog::getOpenFileName(parent, QObject::tr("Run ladder"),
                                       QString::fromStdString(presets_dir("ladders")),
                                       QObject::tr("Ladder (*.json)"));
  if (path->isEmpty()) return false;
  QString text = "1", error;
  for (;;) {
    bool ok = false;
    text = QInputDialog::getText(parent, QObject::tr("Run ladder"),
                                 QObject::tr("Seeds: every rung is queued once per seed (e.g. 1,2,3)"),
                                 QLineEdit::Normal, text, &ok);
    if (!ok) return false;
    if (parseSeeds(text, seeds, &error)) return true;
    QMessageBox::warning(parent, QObject::tr("Run ladder"), error);
  }
}

LadderCompare::LadderCompare(RunsPanel* runs) : QObject(runs), runs_(runs) {
  RunsTableModel* model = runs_->runsModel();
  // Queued: the runs page is in the middle of its reload when its model says so.
  connect(model, &QAbstractItemModel::rowsInserted, this, &LadderCompare::update, Qt::QueuedConnection);
  connect(model, &QAbstractItemModel::modelReset, this, &LadderCompare::update, Qt::QueuedConnection);
}

QList<qint64> LadderCompare::runsOf(const QString& ladder) const {
  QList<qint64> ids;
  RunsTableModel* model = runs_->runsModel();
  for (int row = 0; row < model->rowCount(); ++row) {
    const qint64 id = model->index(row, 0).data(RunsTableModel::IdRole).toLongLong();
    const RunRow* r = model->runById(id);
    if (r && r->name.startsWith(ladder + "/")) ids << id;
  }
  std::sort(ids.begin(), ids.end());  // oldest first: the first rung is the scoreboard's baseline
  return ids;
}

bool LadderCompare::compare(const QString& ladder) {
  runs_->refresh();
  const QList<qint64> ids = runsOf(ladder);
  ladder_.clear();
  if (ids.isEmpty()) return false;
  runs_->selectRuns(ids);
  if (!runs_->compareRuns(ids)) return false;
  runs_->compareView()->setGrouping("seed");  // a rung's seeds: one curve with a band, one scoreboard row
  ladder_ = ladder, shown_ = ids;
  return true;
}

// A rung that has started since: added, unless the compare view shows something else now.
void LadderCompare::update() {
  if (ladder_.isEmpty()) return;
  if (runs_->compareView()->runIds() != shown_) return ladder_.clear();
  const QList<qint64> ids = runsOf(ladder_);
  if (ids == shown_) return;
  const QString grouping = runs_->compareView()->grouping();
  runs_->selectRuns(ids);
  if (!runs_->compareRuns(ids)) return ladder_.clear();
  runs_->compareView()->setGrouping(grouping);
  shown_ = ids;
}

}  // namespace tokamak::ui
