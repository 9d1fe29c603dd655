// The Sweep… dialog (see sweep_dialog.h).
#include "ui/sweep/sweep_dialog.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QCompleter>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryFile>
#include <QThreadPool>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "engine/base/config/config.h"
#include "engine/fleet/queue/sweep.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/output_path.h"
#include "ui/device/device_info.h"
#include "ui/common/child_process.h"
#include "ui/common/programs.h"

namespace tokamak::ui {

// One swept key: the key, then its values as a list or as a range.
class SweepAxisRow : public QWidget {
 public:
  SweepAxisRow(const QStringList& keys, const SweepAxis& a, const std::function<void()>& changed) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    key = new QComboBox;
    key->setEditable(true);
    key->addItems(keys);
    key->setEditText(a.key);
    key->completer()->setFilterMode(Qt::MatchContains);
    key->setMinimumContentsLength(16);
    key->setToolTip(tr("The config key to sweep (tokamak config --defaults lists them)"));
    kind = new QComboBox;
    kind->addItems({tr("values"), tr("range")});
    kind->setCurrentIndex(a.range ? 1 : 0);
    values = new QLineEdit(a.values.join(QStringLiteral(", ")));
    values->setPlaceholderText(tr("adamw, muon  or  1e-3, 3e-3"));
    min = new QLineEdit(QString::number(a.min, 'g', 6));
    max = new QLineEdit(QString::number(a.max, 'g', 6));
    min->setPlaceholderText(tr("min")), max->setPlaceholderText(tr("max"));
    min->setMaximumWidth(80), max->setMaximumWidth(80);
    count = new QSpinBox;
    count->setRange(1, 1000);
    count->setValue(a.count);
    count->setPrefix(QStringLiteral("×"));
    count->setToolTip(tr("How many values on the range (grid search)"));
    scale = new QComboBox;
    scale->addItems({QStringLiteral("log"), QStringLiteral("linear")});
    scale->setCurrentIndex(a.log ? 0 : 1);
    remove = new QToolButton;
    remove->setText(QStringLiteral("✕"));
    remove->setToolTip(tr("Do not sweep this key"));
    for (QWidget* w : std::initializer_list<QWidget*>{key, kind, values, min, max, count, scale, remove})
      row->addWidget(w, w == values ? 1 : 0);
    const auto showKind = [this] {
      const bool r = kind->currentIndex() == 1;
      values->setVisible(!r);
      for (QWidget* w : std::initializer_list<QWidget*>{min, max, count, scale}) w->setVisible(r);
    };
    showKind();
    connect(kind, &QComboBox::currentIndexChanged, this, showKind);
    connect(key, &QComboBox::editTextChanged, this, changed);
    connect(kind, &QComboBox::currentIndexChanged, this, changed);
    connect(scale, &QComboBox::currentIndexChanged, this, changed);
    connect(count, &QSpinBox::valueChanged, this, changed);
    for (QLineEdit* e : {values, min, max}) connect(e, &QLineEdit::textChanged, this, changed);
  }
  SweepAxis axis() const {
    SweepAxis a;
    a.key = key->currentText().trimmed();
    a.range = kind->currentIndex() == 1;
    a.values = splitValues(values->text());
    a.min = min->text().toDouble(), a.max = max->text().toDouble();
    a.count = count->value();
    a.log = scale->currentIndex() == 0;
    return a;
  }
  QComboBox *key, *kind, *scale;
  QLineEdit *values, *min, *max;
  QSpinBox* count;
  QToolButton* remove;
};

SweepDialog::SweepDialog(const std::string& baseJson, QWidget* parent) : QDialog(parent), base_(baseJson) {
  setWindowTitle(tr("Sweep"));
  setObjectName(QStringLiteral("sweepDialog"));
  for (const KeyDoc& d : config_keys())
    if (d.key != "name" && d.key != "checkpoint.resume") keys_ << QString::fromStdString(d.key);
  replanTimer_ = new QTimer(this);
  replanTimer_->setObjectName(QStringLiteral("replanTimer"));
  replanTimer_->setSingleShot(true);
  replanTimer_->setInterval(200);
  connect(replanTimer_, &QTimer::timeout, this, &SweepDialog::replanInBackground);
  build();
  SweepForm f;  // a start that plans at once: the learning rate over two decades
  f.axes << SweepAxis{QStringLiteral("optimizer.lr"), true, {}, 3e-4, 3e-3, 4, true};
  setForm(f);
}

SweepDialog::~SweepDialog() {
  if (!process_) return;
  process_->disconnect(this);
  process_->waitForFinished(30000);  // the sweep's one transaction: let it land rather than kill it mid-way
  if (!tempFile_.isEmpty()) QFile::remove(tempFile_);
}

void SweepDialog::build() {
  auto* top = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  name_ = new QLineEdit;
  name_->setObjectName(QStringLiteral("sweepName"));
  form->addRow(tr("Name"), name_);
  baseLabel_ = new QLabel(tr("Base: the current setup"));
  baseLabel_->setWordWrap(true);
  form->addRow(tr("Base"), baseLabel_);
  top->addLayout(form);
  auto* keysBox = new QWidget;
  axesLayout_ = new QVBoxLayout(keysBox);
  axesLayout_->setContentsMargins(0, 0, 0, 0);
  top->addWidget(new QLabel(tr("<b>Keys to sweep</b> (grid: the first key outermost)")));
  top->addWidget(keysBox);
  auto* addKey = new QPushButton(tr("Add key"));
  connect(addKey, &QPushButton::clicked, this, [this] {
    addAxisRow(SweepAxis{QStringLiteral("optimizer.name"), false, {"adamw", "muon"}});
    scheduleReplan();
  });
  auto* search = new QHBoxLayout;
  method_ = new QComboBox;
  method_->addItems({QStringLiteral("grid"), QStringLiteral("random")});
  count_ = new QSpinBox, seed_ = new QSpinBox;
  count_->setRange(1, 10000), seed_->setRange(0, 1 << 30);
  count_->setPrefix(tr("points: ")), seed_->setPrefix(tr("seed: "));
  seeds_ = new QLineEdit;
  seeds_->setPlaceholderText(tr("train.seed values, e.g. 1, 2"));
  for (QWidget* w : std::initializer_list<QWidget*>{addKey, new QLabel(tr("Method")), method_, count_, seed_,
                                                    new QLabel(tr("Seeds")), seeds_})
    search->addWidget(w, w == seeds_ ? 1 : 0);
  top->addLayout(search);
  top->addLayout(buildRankRow());
  summary_ = new QLabel;
  summary_->setObjectName(QStringLiteral("sweepPlanSummary"));
  problemLabel_ = new QLabel;
  problemLabel_->setObjectName(QStringLiteral("sweepProblem"));
  problemLabel_->setStyleSheet(QStringLiteral("color: #b00020"));
  problemLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  trials_ = new QListWidget;
  trials_->setObjectName(QStringLiteral("sweepTrials"));
  top->addWidget(summary_);
  top->addWidget(trials_, 1);
  top->addWidget(problemLabel_);
  top->addLayout(buildButtonRow());
  connectReplan();
  resize(820, 560);
}

QHBoxLayout* SweepDialog::buildRankRow() {
  auto* rank = new QHBoxLayout;
  metric_ = new QComboBox, direction_ = new QComboBox;
  metric_->addItems(
      {QStringLiteral("best_val_loss"), QStringLiteral("final_val_loss"), QStringLiteral("time_to_target")});
  direction_->addItems({QStringLiteral("min"), QStringLiteral("max")});
  asha_ = new QCheckBox(tr("Early stopping (ASHA)"));
  asha_->setToolTip(tr("Stop the worst trials at rungs min_steps, ×η, ×η²…; the best go on (docs/SWEEPS.md)"));
  minSteps_ = new QSpinBox, eta_ = new QSpinBox;
  minSteps_->setRange(1, 100000000), eta_->setRange(2, 100);
  minSteps_->setPrefix(tr("min_steps ")), eta_->setPrefix(tr("η "));
  for (QWidget* w :
       std::initializer_list<QWidget*>{new QLabel(tr("Metric")), metric_, direction_, asha_, minSteps_, eta_})
    rank->addWidget(w);
  rank->addStretch(1);
  return rank;
}

QHBoxLayout* SweepDialog::buildButtonRow() {
  auto* buttons = new QHBoxLayout;
  auto* open = new QPushButton(tr("Open sweep file…"));
  connect(open, &QPushButton::clicked, this, &SweepDialog::chooseFile);
  start_ = new QPushButton(tr("Start"));
  start_->setDefault(true);
  start_->setToolTip(tr("Queue every trial on this computer (tokamak sweep) and start the queue worker"));
  connect(start_, &QPushButton::clicked, this, &SweepDialog::start);
  auto* cancel = new QPushButton(tr("Cancel"));
  connect(cancel, &QPushButton::clicked, this, &QDialog::reject);
  buttons->addWidget(open);
  buttons->addStretch(1);
  buttons->addWidget(start_);
  buttons->addWidget(cancel);
  return buttons;
}

void SweepDialog::connectReplan() {
  const auto changed = [this] { scheduleReplan(); };
  connect(name_, &QLineEdit::textChanged, this, changed);
  connect(seeds_, &QLineEdit::textChanged, this, changed);
  for (QComboBox* c : {method_, metric_, direction_}) connect(c, &QComboBox::currentIndexChanged, this, changed);
  for (QSpinBox* s : {count_, seed_, minSteps_, eta_}) connect(s, &QSpinBox::valueChanged, this, changed);
  connect(asha_, &QCheckBox::toggled, this, changed);
  const auto enable = [this] {
    count_->setEnabled(method_->currentIndex() == 1), seed_->setEnabled(method_->currentIndex() == 1);
    minSteps_->setEnabled(asha_->isChecked()), eta_->setEnabled(asha_->isChecked());
  };
  connect(method_, &QComboBox::currentIndexChanged, this, enable);
  connect(asha_, &QCheckBox::toggled, this, enable);
  enable();
}

SweepAxisRow* SweepDialog::addAxisRow(const SweepAxis& axis) {
  auto* row = new SweepAxisRow(keys_, axis, [this] { scheduleReplan(); });
  connect(row->remove, &QToolButton::clicked, this, [this, row] { removeAxisRow(row); });
  axesLayout_->addWidget(row);
  rows_ << row;
  return row;
}

void SweepDialog::removeAxisRow(SweepAxisRow* row) {
  rows_.removeAll(row);
  row->deleteLater();
  scheduleReplan();
}

SweepForm SweepDialog::form() const {
  SweepForm f;
  f.name = name_->text().trimmed();
  for (const SweepAxisRow* r : rows_) f.axes << r->axis();
  f.random = method_->currentIndex() == 1;
  f.count = count_->value(), f.seed = seed_->value();
  for (const QString& s : splitValues(seeds_->text())) f.seeds << s.toLongLong();
  f.metric = metric_->currentText();
  f.maximize = direction_->currentIndex() == 1;
  f.asha = asha_->isChecked();
  f.minSteps = minSteps_->value(), f.eta = eta_->value();
  return f;
}

void SweepDialog::setForm(const SweepForm& f) {
  const QSignalBlocker blockName(name_);
  name_->setText(f.name);
  for (SweepAxisRow* r : rows_) delete r;
  rows_.clear();
  for (const SweepAxis& a : f.axes) addAxisRow(a);
  method_->setCurrentIndex(f.random ? 1 : 0);
  count_->setValue(f.count), seed_->setValue(int(f.seed));
  QStringList seeds;
  for (qint64 s : f.seeds) seeds << QString::number(s);
  seeds_->setText(seeds.join(QStringLiteral(", ")));
  metric_->setCurrentText(f.metric);
  direction_->setCurrentIndex(f.maximize ? 1 : 0);
  asha_->setChecked(f.asha);
  minSteps_->setValue(int(f.minSteps)), eta_->setValue(int(f.eta));
  replan();
}

void SweepDialog::setDatabase(const QString& path) { db_ = path; }

std::string SweepDialog::sweepFile() const { return sweepFileText(form(), base_); }

bool SweepDialog::openFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    showProblem(tr("%1: cannot be read (%2)").arg(path, file.errorString()));
    return false;
  }
  SweepForm f;
  std::string base;
  const QString why = sweepFormFromFile(file.readAll().toStdString(), &f, &base);
  if (!why.isEmpty()) {
    showProblem(QStringLiteral("%1: %2").arg(path, why));
    return false;
  }
  base_ = base;
  baseLabel_->setText(tr("Base: the \"base\" of %1").arg(QFileInfo(path).fileName()));
  setForm(f);
  return true;
}

void SweepDialog::chooseFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open sweep file"),
                                                    QString::fromStdString(presets_dir("sweeps")),
                                                    tr("Sweep files (*.json)"));
  if (!path.isEmpty()) openFile(path);
}

void SweepDialog::scheduleReplan() { replanTimer_->start(); }

void SweepDialog::showProblem(const QString& problem) {
  problem_ = problem;
  problemLabel_->setText(problem);
  start_->setEnabled(problem.isEmpty() && !process_);
}

SweepDialog::PlanView SweepDialog::planOf(const std::string& file, const std::string& source, int gpus) {
  PlanView v;
  try {
    const SweepPlan plan = plan_sweep(file, source, gpus);
    for (const SweepTrial& t : plan.trials) v.names << QString::fromStdString(t.name);
    const int64_t steps = plan.trials.empty() ? 0 : plan.trials.front().config.train.steps;
    for (int64_t r : asha_rungs(plan.asha, steps)) v.rungs << r;
    QStringList rungText;
    for (qint64 r : v.rungs) rungText << QString::number(r);
    v.summary =
        tr("%n trial(s), %1, ranked by %2 (%3); each trains %4 steps", nullptr, int(v.names.size()))
            .arg(QString::fromStdString(plan.method), QString::fromStdString(plan.metric.name),
                 plan.metric.maximize ? tr("max") : tr("min"))
            .arg(steps) +
        (v.rungs.isEmpty() ? QString()
                           : tr("; ASHA η=%1 stops them at rungs %2").arg(plan.asha.eta).arg(rungText.join(", ")));
  } catch (const std::exception& e) {
    v.summary = tr("Nothing is queued until every trial is valid.");
    // One line: the engine's error names the key, the trial and the fix.
    v.problem = QString::fromUtf8(e.what()).simplified();
  }
  return v;
}

void SweepDialog::showPlan(const PlanView& v) {
  names_ = v.names, rungs_ = v.rungs;
  trials_->clear();
  trials_->addItems(names_);
  summary_->setText(v.summary);
  showProblem(v.problem);
}

void SweepDialog::replan() {
  replanTimer_->stop();
  ++generation_;  // a plan still being worked out in the background is of an older form
  showPlan(planOf(sweepFile(), planSource(), deviceInfo().gpuCount()));
}

// An edit's plan is worked out on a thread of the pool: a sweep of thousands of trials validates every one of
// them, which froze the window while the user typed. Only the newest edit's plan is shown.
void SweepDialog::replanInBackground() {
  const int generation = ++generation_;
  const std::string file = sweepFile(), source = planSource();
  const int gpus = deviceInfo().gpuCount();
  QPointer<SweepDialog> self(this);
  QThreadPool::globalInstance()->start([self, generation, file, source, gpus] {
    PlanView view;
    try {  // planOf says its problems in the view; this is for what it does not foresee (a pool thread that
           // throws ends the studio)
      view = planOf(file, source, gpus);
    } catch (const std::exception& e) {
      view.problem = QString::fromUtf8(e.what());
    } catch (...) {
      view.problem = "the plan could not be made";
    }
    // qApp outlives the dialog: the dialog itself is looked at on the GUI thread only.
    QMetaObject::invokeMethod(
        qApp,
        [self, generation, view] {
          if (self && self->generation_ == generation) self->showPlan(view);
        },
        Qt::QueuedConnection);
  });
}

std::string SweepDialog::planSource() const { return form().name.isEmpty() ? "sweep" : form().name.toStdString(); }

bool SweepDialog::start() {
  replan();
  if (!problem_.isEmpty() || process_) return false;
  const QString tokamak = tokamakFrontPath();
  if (tokamak.isEmpty()) {
    showProblem(tr("the tokamak program was not found beside tokamak-engine (hint: build it with scripts/build.sh)"));
    return false;
  }
  // Written first under a temporary name in the sweeps folder; renamed into the sweep's own folder once the
  // store has given the sweep its id, so a sweep that was not queued leaves no file behind.
  const QString dir = QString::fromStdString(data_dir()) + QStringLiteral("/sweeps");
  QDir().mkpath(dir);
  QTemporaryFile temp(dir + QStringLiteral("/.sweep-XXXXXX.json"));
  temp.setAutoRemove(false);
  if (!temp.open() || temp.write(QByteArray::fromStdString(sweepFile())) < 0 || !temp.flush()) {
    showProblem(tr("cannot write the sweep file in %1: %2").arg(dir, temp.errorString()));
    return false;
  }
  tempFile_ = temp.fileName();
  temp.close();
  QStringList args{QStringLiteral("sweep"), tempFile_, QStringLiteral("--json")};
  if (!db_.isEmpty()) args << QStringLiteral("--db") << db_;
  process_ = new ChildProcess(this);
  connect(process_, &ChildProcess::finished, this, &SweepDialog::childEnded);
  start_->setEnabled(false);
  summary_->setText(tr("Queuing the sweep…"));
  process_->start(tokamak, args);
  return true;
}

void SweepDialog::childEnded() {
  if (!process_) return;
  ChildProcess* p = process_;
  process_ = nullptr;
  p->deleteLater();
  const QJsonObject out = p->result();
  if (!p->error().isEmpty() || !out.contains(QStringLiteral("sweep_id"))) {
    QFile::remove(tempFile_);
    tempFile_.clear();
    const QString why = p->error().isEmpty() ? tr("tokamak sweep gave no sweep id") : p->error();
    showProblem(why);
    return Q_EMIT failed(why);
  }
  const qint64 id = out.value(QStringLiteral("sweep_id")).toInteger();
  const QString name = out.value(QStringLiteral("name")).toString();
  QString why;
  const QString file = keepSweepFile(tempFile_, name, id, &why);
  tempFile_.clear();
  showProblem(why);
  Q_EMIT started(id, name, file);
  if (why.isEmpty()) accept();  // else the dialog stays open to say why the sweep, queued, has no file
}

// Moves the written sweep file into data_dir()/sweeps/NAME-ID/sweep.json; its path, or "" with WHY set. The name is
// the user's: made one path component (a '/' or ".." would leave the sweeps folder), and the folder goes through the
// rule for outputs (output_path.h): one that holds anything, an earlier sweep's file under a reset store's ids
// included, is never written into.
QString SweepDialog::keepSweepFile(const QString& temp, const QString& name, qint64 id, QString* why) {
  const std::string folder = data_dir() + "/sweeps/" + safe_file_name(name.toStdString()) + "-" + std::to_string(id);
  const std::string file = folder + "/sweep.json";
  try {
    check_output_folder(folder, {"sweep.json"}, {"a sweep", {".json"}, false, {}, "move that folder away"});
    make_dirs(folder);
    // rename(2) puts the file in place in one step; the check above has made sure nothing is there to replace.
    if (::rename(QFile::encodeName(temp).constData(), file.c_str()) == 0) return QString::fromStdString(file);
    throw Error("cannot move the sweep file to '" + file + "': " + std::strerror(errno), "check that folder's permissions");
  } catch (const Error& e) {
    QFile::remove(temp);
    *why = tr("the sweep was queued (id %1), but its file was not kept: %2").arg(id).arg(QString::fromStdString(e.what()));
    return {};
  }
}

}  // namespace tokamak::ui
