// SetupPanel: the form, setup files and ladders, and the problem list (see setup_panel.h).
#include "ui/setup/setup_panel.h"
#include "ui/common/qt_helpers.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/config/hf_config.h"
#include "engine/base/plan/memory_estimate.h"
#include "engine/base/util/files.h"
#include "ui/device/batch_finder.h"
#include "ui/device/device_info.h"
#include "ui/remote/where_box.h"
#include "ui/setup/dataset_box.h"
#include "ui/setup/key_bindings.h"
#include "ui/setup/model_box.h"
#include "ui/setup/section_columns.h"
#include "ui/common/save_dialog.h"
#include "ui/setup/setup_files.h"
#include "ui/setup/speedrun_box.h"
#include "ui/setup/switches_box.h"

namespace tokamak::ui {

SetupPanel::SetupPanel(QWidget* parent) : QWidget(parent) {
  keys_ = new KeyBindings(this);
  dataset_ = new DatasetBox;
  model_ = new ModelBox(keys_);
  switches_ = new SwitchesBox(keys_);
  finder_ = new BatchFinder(this);

  auto* files = new QWidget;
  files->setObjectName("setupFiles");
  auto* filesRow = new QHBoxLayout(files);
  filesRow->setContentsMargins(0, 0, 0, 0);
  auto addButton = [&](const QString& text, const QString& name, void (SetupPanel::*slot)()) {
    auto* b = new QPushButton(text);
    b->setObjectName(name);
    connect(b, &QPushButton::clicked, this, slot);
    filesRow->addWidget(b);
  };
  addButton(tr("Save setup…"), "saveSetup", &SetupPanel::saveSetupAs);
  addButton(tr("Load setup…"), "loadSetup", &SetupPanel::loadSetupFrom);
  auto* ladder = new QPushButton(tr("Open ladder…"));
  ladder->setObjectName("openLadder");
  ladder->setToolTip(tr("A ladder from experiments/: the base setup and one rung of speed-ups on top"));
  connect(ladder, &QPushButton::clicked, this, [this] { openLadder(); });
  filesRow->addWidget(ladder);
  filesRow->addStretch(1);

  // Where is a line of the window's toolbar (MainWindow places it), not a section: the dock's height goes to
  // what is trained and how fast.
  where_ = new WhereBox;
  // What to train in the left column, how fast in the right one when the dock is wide enough for two; in one
  // column the speed-ups come right after the model, before the training numbers, so they are never far.
  sections_ = new SectionColumns;
  sections_->setObjectName("setupSections");
  sections_->addSection(files, 0);
  sections_->addSection(dataset_, 0);
  sections_->addSection(model_, 0);
  sections_->addSection(switches_, 1);
  sections_->addSection(speedrun_ = new SpeedrunBox(keys_), 1);
  sections_->addSection(trainingBox(), 0);
  form_ = sections_->widget();

  problemList_ = new QListWidget;
  problemList_->setObjectName("problems");
  problemList_->setWordWrap(true);
  problemList_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(sections_, 1);
  layout->addWidget(new QLabel(tr("Problems")));
  layout->addWidget(problemList_);

  refresh_ = new QTimer(this);
  refresh_->setSingleShot(true);
  refresh_->setInterval(0);
  connect(refresh_, &QTimer::timeout, this, &SetupPanel::refreshNow);
  connect(keys_, &KeyBindings::changed, this, &SetupPanel::scheduleRefresh);
  connect(dataset_, &DatasetBox::pathChanged, this, &SetupPanel::scheduleRefresh);
  // A host's data paths are its own; its datasets come with "Test connection" (ui/remote/where_box.h).
  auto hostChanged = [this] { dataset_->setHost(where_->host(), where_->datasets()); };
  connect(where_, &WhereBox::changed, this, [this, hostChanged] {
    if (where_->host() != dataset_->host()) hostChanged();
  });
  connect(where_, &WhereBox::tested, this, hostChanged);
  hostChanged();
  connect(model_, &ModelBox::startFromWeightsClicked, this, &SetupPanel::chooseWeights);
  connect(model_, &ModelBox::randomInitClicked, this, &SetupPanel::useRandomInit);
  connect(finder_, &BatchFinder::finished, this, [this](qint64 largest, const QString& error) {
    findBatch_->setText(tr("Find largest batch"));
    if (largest > 0) keys_->setValue("train.batch_size", QString::number(largest)), scheduleRefresh();
    if (!error.isEmpty()) QMessageBox::warning(this, tr("Find largest batch"), error);
  });
  setConfig(Config{});
}

SetupPanel::~SetupPanel() {
  if (where_ && !where_->parent()) delete where_.data();  // never placed (the panel alone); placed, its toolbar owns it
}

WhereBox* SetupPanel::whereBox() const { return where_.data(); }

QWidget* SetupPanel::trainingBox() {
  auto* box = new QGroupBox(tr("Training"));
  auto* form = new QFormLayout(box);
  auto* device = new QComboBox;
  const DeviceInfo& info = deviceInfo();
  device->addItem(tr("CPU — %1").arg(info.cpuName), "cpu");
  for (int i = 0; i < info.gpuCount(); ++i)
    device->addItem(tr("GPU %1 — %2").arg(i).arg(info.gpuNames[i]), QString("cuda:%1").arg(i));
  if (info.gpuCount() > 1) device->addItem(tr("All %1 GPUs (set Multi-GPU below)").arg(info.gpuCount()), "cuda");
  // A processor's or a GPU's name is as long as its maker likes: it must not widen the column (at 1366 px it
  // alone folded the setup into one column, the switches below the fold). The list shows the names whole.
  device->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  device->setMinimumContentsLength(14);
  device->view()->setMinimumWidth(device->view()->sizeHintForColumn(0) + 2 * device->view()->frameWidth());
  keys_->bind("device", device);
  form->addRow(tr("Device"), device);

  auto* batch = spin_box(1, 1 << 20);
  keys_->bind("train.batch_size", batch);
  findBatch_ = new QPushButton(tr("Find largest batch"));
  findBatch_->setObjectName("findLargestBatch");
  connect(findBatch_, &QPushButton::clicked, this, &SetupPanel::findLargestBatch);
  form->addRow(tr("Batch size"), batch);
  form->addRow(QString(), findBatch_);  // under the batch, not beside it: the column stays narrow enough for two

  auto* steps = spin_box(1, 100000000);
  keys_->bind("train.steps", steps);
  form->addRow(tr("Steps"), steps);
  form->addRow(tr("Target val loss"), targetRow(keys_));
  auto* lr = new QLineEdit;
  keys_->bind("optimizer.lr", lr);
  form->addRow(tr("Learning rate"), lr);
  auto* warmup = spin_box(0, 100000000);
  keys_->bind("schedule.warmup_steps", warmup);
  form->addRow(tr("Warm-up steps"), warmup);
  auto* evalEvery = spin_box(0, 100000000);
  keys_->bind("eval.every", evalEvery);
  form->addRow(tr("Eval every"), evalEvery);
  auto* sampleEvery = spin_box(-1, 100000000);
  keys_->bind("sample.every", sampleEvery);
  form->addRow(tr("Sample every"), sampleEvery);
  auto* ckptEvery = spin_box(0, 100000000);
  keys_->bind("checkpoint.every", ckptEvery);
  form->addRow(tr("Checkpoint every"), ckptEvery);
  auto* threads = spin_box(0, 1024);
  keys_->bind("threads", threads);
  form->addRow(tr("CPU threads"), threads);
  auto* name = new QLineEdit;
  name->setPlaceholderText(tr("derived from model and switches"));
  keys_->bind("name", name);
  form->addRow(tr("Run name"), name);

  resume_ = new QLabel;
  resume_->setObjectName("resumeFrom");
  resume_->setWordWrap(true);
  clearResume_ = new QPushButton(tr("Start fresh"));
  connect(clearResume_, &QPushButton::clicked, this, &SetupPanel::clearResume);
  auto* resumeRow = new QHBoxLayout;
  resumeRow->addWidget(resume_, 1);
  resumeRow->addWidget(clearResume_);
  form->addRow(resumeRow);
  return box;
}

Config SetupPanel::config() const {
  Config c = base_;
  keys_->apply(c);
  c.data.path = dataset_->path().toStdString();
  return c;
}

void SetupPanel::setConfig(const Config& config) {
  base_ = config;
  keys_->load(config);
  dataset_->setJsonlField(config.data.jsonl_field);
  dataset_->setPath(QString::fromStdString(config.data.path));
  refreshNow();
  Q_EMIT configChanged();
}

void SetupPanel::clearResume() {
  base_.checkpoint.resume.clear();
  scheduleRefresh();
}

QString SetupPanel::startFromWeights(const QString& path) {
  Config c = config();
  try {
    c.model = hf_weights_config(path.toStdString(), c.model);
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  c.model.init_from = path.toStdString();
  c.checkpoint.resume.clear();  // a resumed run takes its weights from the checkpoint, which would win
  setConfig(c);
  return {};
}

void SetupPanel::showWeights(const Config& c) {
  const QString path = QString::fromStdString(c.model.init_from);
  if (path != weightsPath_) {  // the file's count is read once per choice, not on every keystroke
    weightsPath_ = path;
    weightsParameters_ = -1;
    try {
      if (!path.isEmpty()) weightsParameters_ = hf_weights_parameters(c.model.init_from);
    } catch (const std::exception&) {  // config_problems() names what is wrong with the file
    }
  }
  qint64 model = -1;
  if (weightsParameters_ >= 0 && c.model.n_head > 0 && c.model.n_embd % c.model.n_head == 0) {
    Config unpadded = c;  // the file holds vocab_size rows; the model pads them
    unpadded.model.vocab_pad_multiple = 1;
    model = count_parameters(parameter_shape(unpadded.model));
  }
  model_->showWeights(path, weightsParameters_, model);
}

void SetupPanel::useRandomInit() {
  base_.model.init_from.clear();
  scheduleRefresh();
}

void SetupPanel::chooseWeights() {
  const QString path = QFileDialog::getExistingDirectory(this, tr("Start from weights: a Hugging Face GPT-2 folder"));
  if (path.isEmpty()) return;
  const QString error = startFromWeights(path);
  if (!error.isEmpty()) QMessageBox::warning(this, tr("Start from weights"), error);
}

void SetupPanel::setEditable(bool editable) {
  // Disabling the parent keeps each switch's own availability: re-enabling restores exactly that.
  form_->setEnabled(editable);
  if (where_) where_->setEnabled(editable);
}

int SetupPanel::widthFor(int columns) const {
  const QMargins m = layout()->contentsMargins();
  return sections_->widthFor(columns) + m.left() + m.right();
}

void SetupPanel::showMeasuredPeak(qint64 bytes, const QString& device) { model_->showMeasuredPeak(bytes, device); }

void SetupPanel::scheduleRefresh() {
  if (!refresh_->isActive()) refresh_->start();
}

void SetupPanel::refreshNow() {
  refresh_->stop();
  Config c = base_;
  QStringList problems = keys_->apply(c);
  c.data.path = dataset_->path().toStdString();
  const int gpus = deviceInfo().gpuCount();
  for (const std::string& p : config_problems(c, gpus)) problems << QString::fromStdString(p);
  const QString data = dataset_->problem();
  if (!data.isEmpty()) problems << data;
  problems.removeDuplicates();

  model_->showEstimate(c);
  switches_->updateAvailability(c, gpus);
  speedrun_->updateAvailability(c, gpus);
  const bool cuda = QString::fromStdString(c.device).startsWith("cuda");
  findBatch_->setEnabled(cuda);  // also while searching: the button cancels then
  findBatch_->setToolTip(cuda ? tr("Trains two steps at batch 1, 2, 4, … until the GPU runs out of memory")
                              : tr("Needs a CUDA device: on the CPU memory is not what limits the batch"));
  resume_->setVisible(!c.checkpoint.resume.empty());
  clearResume_->setVisible(!c.checkpoint.resume.empty());
  resume_->setText(tr("Resumes from %1").arg(QString::fromStdString(c.checkpoint.resume)));
  showWeights(c);

  problemList_->clear();
  if (problems.isEmpty()) problemList_->addItem(tr("None: ready to start"));
  for (const QString& p : problems) {
    auto* item = new QListWidgetItem(style()->standardIcon(QStyle::SP_MessageBoxWarning), p);
    problemList_->addItem(item);
  }
  // As tall as its lines, up to four: "ready to start" takes one line, and the setup gets the rest.
  int rows = 0;
  for (int i = 0; i < std::min(problemList_->count(), 4); ++i) rows += problemList_->sizeHintForRow(i);
  problemList_->setFixedHeight(rows + 2 * problemList_->frameWidth() + 2);
  const bool changed = problems != problems_;
  problems_ = problems;
  if (changed) Q_EMIT problemsChanged(problems_.isEmpty());
  Q_EMIT configChanged();
}

void SetupPanel::saveSetupAs() {
  const SavePath to = askSavePath(this, tr("Save setup"), QString(), tr("Setup (*.json)"), QStringLiteral("json"));
  if (to.path.isEmpty()) return;
  QString error;
  if (!saveSetup(to.path, config(), &error, to.replace)) QMessageBox::warning(this, tr("Save setup"), error);
}

void SetupPanel::loadSetupFrom() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load setup"), QString(), tr("Setup (*.json)"));
  if (path.isEmpty()) return;
  Config c;
  QString error;
  if (!loadSetup(path, &c, &error)) return void(QMessageBox::warning(this, tr("Load setup"), error));
  setConfig(c);
}

void SetupPanel::openLadder(const QString& given) {
  QString path = given;
  if (path.isEmpty())
    path = QFileDialog::getOpenFileName(this, tr("Open ladder"), QString::fromStdString(presets_dir("ladders")),
                                        tr("Ladder (*.json)"));
  if (path.isEmpty()) return;
  QString name, error;
  QStringList rungs;
  QList<Config> configs;
  if (!readLadder(path, &name, &rungs, &configs, &error))
    return void(QMessageBox::warning(this, tr("Open ladder"), error));
  bool ok = false;
  const QString rung = QInputDialog::getItem(this, tr("Open ladder"), tr("Rung of %1").arg(name), rungs, 0, false, &ok);
  if (ok) setConfig(configs.at(static_cast<int>(rungs.indexOf(rung))));
}

void SetupPanel::findLargestBatch() {
  if (finder_->isRunning()) return finder_->cancel();
  findBatch_->setText(tr("Searching… (click to cancel)"));
  finder_->start(config());
}

}  // namespace tokamak::ui
