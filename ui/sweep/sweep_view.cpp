// The Sweeps page (see sweep_view.h): the picker, the plots, the ranked table, importance, and the actions.
#include "ui/sweep/sweep_view.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/base/store/run_store.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/util/files.h"
#include "ui/common/child_process.h"
#include "ui/common/programs.h"
#include "ui/sweep/sweep_plots.h"
#include "ui/common/save_dialog.h"
#include "ui/sweep/sweep_table.h"

namespace tokamak::ui {

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("sweepView"));
  build();
  poll_ = new QTimer(this);
  poll_->setInterval(1000);
  connect(poll_, &QTimer::timeout, this, &SweepView::refresh);
}

SweepView::~SweepView() {
  if (!process_) return;
  process_->disconnect(this);
  process_->waitForFinished(30000);  // `queue add` is one short transaction: let it land
  if (!configFile_.isEmpty()) QFile::remove(configFile_);
}

void SweepView::build() {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  picker_ = new QComboBox;
  picker_->setObjectName(QStringLiteral("sweepPicker"));
  picker_->setMinimumContentsLength(24);
  picker_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  connect(picker_, &QComboBox::activated, this, [this](int i) { showSweep(picker_->itemData(i).toLongLong()); });
  state_ = new QLabel;
  state_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // the buttons keep their room
  auto* sweep = new QPushButton(tr("New sweep…"));
  connect(sweep, &QPushButton::clicked, this, &SweepView::newSweepRequested);
  longer_ = new QPushButton(tr("Train the best longer…"));
  longer_->setToolTip(tr("A new run from the best trial's config with more steps, queued on this computer"));
  connect(longer_, &QPushButton::clicked, this, &SweepView::askTrainLonger);
  export_ = new QPushButton(tr("Export…"));
  auto* menu = new QMenu(export_);
  for (const QString& f : {QStringLiteral("csv"), QStringLiteral("json"), QStringLiteral("md")})
    menu->addAction(tr("Ranked table as %1…").arg(f.toUpper()), this, [this, f] {
      const SavePath to =
          askSavePath(this, tr("Export the ranked trials"), results_.name + QLatin1Char('.') + f, QString(), f);
      if (to.path.isEmpty()) return;
      const QString why = exportTable(f, to.path, to.replace);
      setMessage(why.isEmpty() ? tr("Wrote %1").arg(to.path) : why, !why.isEmpty());
    });
  menu->addAction(tr("Plots as PNG, PDF or SVG…"), this, [this] {
    const SavePath to = askSavePath(this, tr("Export the plots"), results_.name + ".png",
                                    tr("Images (*.png *.pdf *.svg)"), QStringLiteral("png"));
    if (to.path.isEmpty()) return;
    // The dialog asked about the file it named; each key's plot beside it that exists is asked about here.
    QStringList existing, names;
    for (const QString& f : sweepKeyPlotPaths(results_, keyPlots_->plots().size(), to.path))
      if (QFileInfo(f).exists() || QFileInfo(f).isSymLink()) existing << f, names << QFileInfo(f).fileName();
    if (!existing.isEmpty() &&
        QMessageBox::question(this, tr("Replace the key plots?"),
                              tr("Each key's plot goes beside %1, and these exist already:\n%2\n\nReplace them?")
                                  .arg(QFileInfo(to.path).fileName(), names.join('\n'))) != QMessageBox::Yes)
      return setMessage(tr("Nothing exported: %1 kept").arg(names.join(", ")));
    QStringList written;
    const QString why = exportPlots(to.path, &written, to.replace, existing);
    setMessage(why.isEmpty() ? tr("Wrote %1").arg(written.join(", ")) : why, !why.isEmpty());
  });
  export_->setMenu(menu);
  bar->addWidget(new QLabel(tr("Sweep")));
  bar->addWidget(picker_);
  bar->addWidget(state_, 1);
  for (QPushButton* b : {sweep, longer_, export_}) bar->addWidget(b);
  top->addLayout(bar);
  message_ = new QLabel;
  message_->setWordWrap(true);
  message_->hide();
  top->addWidget(message_);

  keyPlots_ = new SweepKeyPlots;
  parallel_ = new ParallelCoordinates;
  auto* plots = new QSplitter(Qt::Horizontal);
  plots->addWidget(keyPlots_);
  plots->addWidget(parallel_);
  plots->setStretchFactor(0, 3), plots->setStretchFactor(1, 2);
  table_ = new QTableWidget;
  table_->setObjectName(QStringLiteral("sweepTrials"));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  importance_ = new QLabel;
  importance_->setObjectName(QStringLiteral("sweepImportance"));
  importance_->setWordWrap(true);
  importance_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  importance_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  importance_->setMinimumWidth(220);
  auto* lower = new QSplitter(Qt::Horizontal);
  lower->addWidget(table_);
  lower->addWidget(importance_);
  lower->setStretchFactor(0, 4), lower->setStretchFactor(1, 1);
  auto* body = new QSplitter(Qt::Vertical);
  body->addWidget(plots);
  body->addWidget(lower);
  body->setStretchFactor(0, 3), body->setStretchFactor(1, 2);
  top->addWidget(body, 1);
  longer_->setEnabled(false);
}

void SweepView::setDatabase(const QString& path) {
  db_ = path;
  store_.reset();
  current_ = 0;
  fingerprint_.clear();
  picker_->clear();
  refresh();
}

void SweepView::setPollInterval(int ms) { poll_->setInterval(ms); }
void SweepView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  refresh();
  poll_->start();
}
void SweepView::hideEvent(QHideEvent* e) {
  QWidget::hideEvent(e);
  poll_->stop();
}

tokamak::RunStore* SweepView::store() {
  if (store_) return store_.get();
  try {
    store_ = std::make_unique<tokamak::RunStore>(db_.toStdString());
  } catch (const std::exception& e) {
    setMessage(tr("Cannot open the run database: %1").arg(QString::fromUtf8(e.what())), true);
  }
  return store_.get();
}

void SweepView::refresh() {
  tokamak::RunStore* s = store();
  if (!s) return;
  try {
    SweepStore sweeps(*s);
    const std::vector<int64_t> ids = sweeps.sweep_ids();
    if (picker_->count() != int(ids.size())) {  // sweeps are only ever added: a new count is a new sweep
      const QSignalBlocker block(picker_);
      picker_->clear();
      for (auto it = ids.rbegin(); it != ids.rend(); ++it)  // newest first
        picker_->addItem(sweepLabel(readSweep(*s, *it)), qint64(*it));
    }
    // With no sweep, what only a sweep needs gives its room to the line that says how to start one (at 1366 px
    // the picker and two buttons left it a third of its words).
    for (QWidget* w : {static_cast<QWidget*>(picker_), static_cast<QWidget*>(longer_), static_cast<QWidget*>(export_)})
      w->setVisible(!ids.empty());
    if (ids.empty()) {
      state_->setText(tr("No sweeps yet: Run ▸ Sweep… starts one"));
      return;
    }
    if (current_ == 0) current_ = ids.back();
    showSweep(current_);
  } catch (const std::exception& e) {
    setMessage(QString::fromUtf8(e.what()), true);
  }
}

bool SweepView::showSweep(qint64 id) {
  tokamak::RunStore* s = store();
  if (!s) return false;
  try {
    SweepResults r = readSweep(*s, id);
    QString print = QString::number(id);
    for (const SweepTrialRow& t : r.trials)
      print += QStringLiteral("|%1:%2:%3:%4").arg(t.queueId).arg(t.state).arg(t.rung).arg(t.metric, 0, 'g', 17);
    if (id == current_ && print == fingerprint_) return true;  // nothing new: no redraw
    current_ = id, fingerprint_ = print, results_ = std::move(r);
  } catch (const std::exception& e) {
    setMessage(QString::fromUtf8(e.what()), true);
    return false;
  }
  const int index = picker_->findData(id);
  if (index >= 0) picker_->setCurrentIndex(index);
  state_->setText(results_.queued + results_.running == 0
                      ? tr("all %1 ended").arg(results_.ended)
                      : tr("%1 queued · %2 running").arg(results_.queued).arg(results_.running));
  state_->setToolTip(
      tr("Ranked by %1 (%2 is better)").arg(results_.metric, results_.maximize ? tr("higher") : tr("lower")));
  keyPlots_->setResults(results_);
  parallel_->setResults(results_);
  fillSweepTable(table_, results_);
  importance_->setText(importanceHtml(results_));
  longer_->setEnabled(!results_.trials.isEmpty() && std::isfinite(results_.trials.front().metric));
  return true;
}

QString SweepView::importanceText() const { return importance_->text(); }
QString SweepView::message() const {
  return message_->isVisible() || !message_->isHidden() ? message_->text() : QString();
}

void SweepView::setMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #b00020") : QString());
  message_->setVisible(!text.isEmpty());
}

void SweepView::askTrainLonger() {
  if (results_.trials.isEmpty()) return;
  const nlohmann::json c = nlohmann::json::parse(results_.trials.front().configJson.toStdString(), nullptr, false);
  const qint64 steps = c.is_object() ? c["train"].value("steps", int64_t{1000}) : 1000;
  bool ok = false;
  const int more = QInputDialog::getInt(
      this, tr("Train the best longer"),
      tr("%1 trained %2 steps. Train a new run of it for:").arg(results_.trials.front().name).arg(steps),
      int(steps * 4), 1, 1000000000, 100, &ok);
  if (ok) trainBestLonger(more);
}

bool SweepView::trainBestLonger(qint64 steps) {
  if (process_ || results_.trials.isEmpty() || !std::isfinite(results_.trials.front().metric) || steps < 1)
    return false;
  const SweepTrialRow& best = results_.trials.front();
  nlohmann::json config = nlohmann::json::parse(best.configJson.toStdString(), nullptr, false);
  if (!config.is_object()) return false;
  const QString name = QStringLiteral("%1-longer-%2").arg(best.name).arg(steps);
  config["train"]["steps"] = steps;  // everything else is the best trial's, byte for byte
  config["name"] = name.toStdString();
  const QString tokamak = tokamakFrontPath();
  if (tokamak.isEmpty()) {
    setMessage(tr("the tokamak program was not found beside tokamak-engine (hint: build it with scripts/build.sh)"),
               true);
    return false;
  }
  const QString dir = QString::fromStdString(data_dir()) + QStringLiteral("/sweeps");
  QDir().mkpath(dir);
  QTemporaryFile file(dir + QStringLiteral("/.longer-XXXXXX.json"));
  file.setAutoRemove(false);
  if (!file.open() || file.write(QByteArray::fromStdString(config.dump(2))) < 0 || !file.flush()) {
    setMessage(tr("cannot write %1: %2").arg(file.fileName(), file.errorString()), true);
    return false;
  }
  configFile_ = file.fileName();
  file.close();
  QStringList args{QStringLiteral("queue"),    QStringLiteral("add"),
                   QStringLiteral("--config"), configFile_,
                   QStringLiteral("--name"),   name,
                   QStringLiteral("--json")};
  if (!db_.isEmpty()) args << QStringLiteral("--db") << db_;
  process_ = new ChildProcess(this);
  connect(process_, &ChildProcess::finished, this, [this](const QString& error) {
    if (!process_) return;
    ChildProcess* p = process_;
    process_ = nullptr;
    p->deleteLater();
    QFile::remove(configFile_);
    configFile_.clear();
    const QJsonObject out = p->result();
    const qint64 id = out.value(QStringLiteral("id")).toInteger();
    if (error.isEmpty() && id > 0) {
      setMessage(tr("Queued %1 (queue item %2): it starts when the queue reaches it")
                     .arg(out.value("name").toString())
                     .arg(id));
      return Q_EMIT trainQueued(id, out.value(QStringLiteral("name")).toString());
    }
    setMessage(tr("Could not queue the run: %1").arg(error.isEmpty() ? tr("tokamak queue add gave no id") : error),
               true);
    Q_EMIT trainQueued(0, {});
  });
  process_->start(tokamak, args);
  return true;
}

QString SweepView::exportTable(const QString& format, const QString& path, bool replace) const {
  return writeSweepTable(results_, format, path, replace);
}

QString SweepView::exportPlots(const QString& path, QStringList* written, bool replace,
                               const QStringList& replaceKeys) const {
  return saveSweepPlots(keyPlots_->plots(), results_, parallel_->plot(), path, written, replace, replaceKeys);
}

}  // namespace tokamak::ui
