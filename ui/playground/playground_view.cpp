// PlaygroundView (see playground_view.h).
#include "ui/playground/playground_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QShowEvent>
#include <QSpinBox>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "ui/common/child_process.h"

namespace tokamak::ui {

PlaygroundView::PlaygroundView(QWidget* parent) : QWidget(parent) {
  prompt_ = new QPlainTextEdit(tr("The hacker"));
  prompt_->setObjectName("playgroundPrompt");
  prompt_->setPlaceholderText(tr("Text for the model to continue"));
  prompt_->setMaximumHeight(70);
  temperature_ = new QDoubleSpinBox;
  temperature_->setRange(0.05, 2.0), temperature_->setSingleStep(0.05), temperature_->setValue(0.8);
  temperature_->setToolTip(tr("Divides the logits: below 1 sharper, above 1 flatter"));
  topK_ = new QSpinBox;
  topK_->setRange(0, 50257), topK_->setValue(40), topK_->setSpecialValueText(tr("all"));
  topK_->setToolTip(tr("Sample from the k most likely tokens (1: always the most likely, greedy)"));
  topP_ = new QDoubleSpinBox;
  topP_->setRange(0.01, 1.0), topP_->setSingleStep(0.05), topP_->setValue(1.0);
  topP_->setToolTip(tr("Sample from the fewest most likely tokens whose probabilities reach p (1: no cut)"));
  tokens_ = new QSpinBox;
  tokens_->setRange(1, 1024), tokens_->setValue(64);
  seed_ = new QSpinBox;
  seed_->setRange(0, 2147483647), seed_->setValue(1337);
  seed_->setToolTip(tr("The same seed, prompt and settings give the same text; both sides use it"));
  sideBySide_ = new QCheckBox(tr("Side by side"));
  sideBySide_->setToolTip(tr("Run the same prompt, settings and seed on a second checkpoint at the same time"));
  generate_ = new QPushButton(tr("Generate"));
  generate_->setDefault(true);
  stop_ = new QPushButton(tr("Stop"));
  message_ = new QLabel;
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  QHBoxLayout* settings = buildSettingsRow();
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(sideBySide_);
  buttons->addStretch(1);
  buttons->addWidget(stop_);
  buttons->addWidget(generate_);

  auto* sides = new QSplitter(Qt::Horizontal);
  sides->addWidget(buildSide(0));
  right_ = buildSide(1);
  sides->addWidget(right_);
  right_->hide();

  QWidget* keptBox = buildKeptBox();
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(sides);
  split->addWidget(keptBox);
  split->setStretchFactor(0, 3), split->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(new QLabel(tr("&Prompt")));
  layout->addWidget(prompt_);
  layout->addLayout(settings);
  layout->addLayout(buttons);
  layout->addWidget(message_);
  layout->addWidget(split, 1);
  qobject_cast<QLabel*>(layout->itemAt(0)->widget())->setBuddy(prompt_);

  connect(sideBySide_, &QCheckBox::toggled, right_, &QWidget::setVisible);
  connect(generate_, &QPushButton::clicked, this, &PlaygroundView::generate);
  connect(stop_, &QPushButton::clicked, this, &PlaygroundView::stop);
  connect(kept_, &QTreeWidget::currentItemChanged, this, &PlaygroundView::showKept);
  updateButtons();
}

QHBoxLayout* PlaygroundView::buildSettingsRow() {
  auto* settings = new QHBoxLayout;
  auto addSetting = [&](const QString& label, QWidget* w) {
    auto* l = new QLabel(label);
    l->setBuddy(w);
    settings->addWidget(l);
    settings->addWidget(w);
  };
  addSetting(tr("&Temperature"), temperature_);
  addSetting(tr("Top-&k"), topK_);
  addSetting(tr("Top-&p"), topP_);
  addSetting(tr("T&okens"), tokens_);
  addSetting(tr("S&eed"), seed_);
  settings->addStretch(1);
  return settings;
}

QWidget* PlaygroundView::buildKeptBox() {
  kept_ = new QTreeWidget;
  kept_->setObjectName("playgroundKept");
  kept_->setHeaderLabels({tr("When"), tr("Step"), tr("Prompt"), tr("Settings")});
  kept_->setRootIsDecorated(false);
  kept_->header()->setSectionResizeMode(2, QHeaderView::Stretch);
  kept_->setToolTip(tr("Every try on the left-hand run, kept with it in the run store: pick one to see its text"));
  auto* keptBox = new QWidget;
  auto* keptLayout = new QVBoxLayout(keptBox);
  keptLayout->setContentsMargins(0, 0, 0, 0);
  keptLayout->addWidget(new QLabel(tr("Kept with the run")));
  keptLayout->addWidget(kept_);
  return keptBox;
}

QWidget* PlaygroundView::buildSide(int i) {
  Side& s = sides_[i];
  s.run = new QComboBox;
  s.run->setObjectName(QString("playgroundRun%1").arg(i));
  s.run->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  s.run->setMinimumContentsLength(18);
  s.step = new QComboBox;
  s.step->setToolTip(tr("The checkpoint: the run's state at that step"));
  s.output = new QPlainTextEdit;
  s.output->setReadOnly(true);
  s.output->setObjectName(QString("playgroundOutput%1").arg(i));
  s.job = new ChildProcess(this);
  auto* pick = new QHBoxLayout;
  pick->addWidget(s.run, 1);
  pick->addWidget(s.step);
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(pick);
  layout->addWidget(s.output, 1);
  connect(s.run, &QComboBox::currentIndexChanged, this, [this, i] {
    fillSteps(i);
    if (i == 0) fillKept();
  });
  connect(s.job, &ChildProcess::jsonLine, this, [this, i](const QJsonObject& j) {
    if (j.value("event").toString() != QLatin1String("token")) return;
    Side& side = sides_[i];
    ++side.events;
    QPlainTextEdit* out = side.output;
    const bool atEnd = out->verticalScrollBar()->value() == out->verticalScrollBar()->maximum();
    out->moveCursor(QTextCursor::End);
    out->insertPlainText(j.value("text").toString());
    if (atEnd) out->verticalScrollBar()->setValue(out->verticalScrollBar()->maximum());
  });
  connect(s.job, &ChildProcess::finished, this, [this, i](const QString& error) { onSideFinished(i, error); });
  return box;
}

void PlaygroundView::setDatabase(const QString& path) {
  db_ = path;
  loaded_ = false;
  if (isVisible()) refresh();
}

void PlaygroundView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (!loaded_) refresh();
}

QString PlaygroundView::message() const { return message_->text(); }

bool PlaygroundView::isGenerating() const { return sides_[0].job->isRunning() || sides_[1].job->isRunning(); }

void PlaygroundView::refresh() {
  loaded_ = true;
  const std::string db = db_.isEmpty() ? default_db_path() : db_.toStdString();
  QList<QPair<QString, QString>> runs;  // label, uid: the runs whose newest checkpoint is on this computer
  try {
    if (path_exists(db)) {
      RunStore store(db);
      for (const RunListing& l : store.list_runs(200)) {
        const auto checkpoints = store.checkpoints(l.run.id);
        if (checkpoints.empty() || !QFileInfo::exists(QString::fromStdString(checkpoints.back().path))) continue;
        runs.append({QString("#%1 %2 (%3)")
                         .arg(l.run.id)
                         .arg(QString::fromStdString(l.run.name), QString::fromStdString(l.run.status)),
                     QString::fromStdString(l.run.uid)});
      }
    }
  } catch (const std::exception& e) {
    message_->setText(tr("Cannot read the run store: %1").arg(QString::fromUtf8(e.what())));
    return;
  }
  for (int i = 0; i < 2; ++i) {
    const QString was = sides_[i].run->currentData().toString();
    QSignalBlocker block(sides_[i].run);
    sides_[i].run->clear();
    for (const auto& [label, uid] : runs) sides_[i].run->addItem(label, uid);
    const int at = sides_[i].run->findData(was);
    sides_[i].run->setCurrentIndex(at >= 0 ? at : (i == 1 && runs.size() > 1 ? 1 : 0));
    fillSteps(i);
  }
  fillKept();
  message_->setText(runs.isEmpty() ? tr("No run here has a checkpoint yet: train one (checkpoints are saved at the "
                                        "end of a run and every checkpoint.every steps), then pick it here.")
                                   : QString());
  updateButtons();
}

void PlaygroundView::fillSteps(int i) {
  Side& s = sides_[i];
  const qint64 was = s.step->currentData().toLongLong();
  QSignalBlocker block(s.step);
  s.step->clear();
  const QString uid = s.run->currentData().toString();
  if (uid.isEmpty()) return;
  try {
    RunStore store(db_.isEmpty() ? default_db_path() : db_.toStdString());
    const auto checkpoints = store.checkpoints(store.resolve(uid.toStdString()));
    for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it)  // newest first
      if (s.step->findData(qint64(it->step)) < 0 && QFileInfo::exists(QString::fromStdString(it->path)))
        s.step->addItem(tr("step %1").arg(it->step), qint64(it->step));
  } catch (const std::exception& e) {
    message_->setText(QString::fromUtf8(e.what()));
  }
  const int at = s.step->findData(was);
  if (at >= 0) s.step->setCurrentIndex(at);
}

bool PlaygroundView::pick(int side, const QString& uid, qint64 step) {
  if (!loaded_) refresh();
  const int at = sides_[side].run->findData(uid);
  if (at < 0) return false;
  sides_[side].run->setCurrentIndex(at);
  if (step <= 0) return true;
  const int s = sides_[side].step->findData(step);
  if (s < 0) return false;
  sides_[side].step->setCurrentIndex(s);
  return true;
}

void PlaygroundView::fillKept() {
  kept_->clear();
  const QString uid = sides_[0].run->currentData().toString();
  if (uid.isEmpty()) return;
  try {
    RunStore store(db_.isEmpty() ? default_db_path() : db_.toStdString());
    const auto plays = store.plays(store.resolve(uid.toStdString()));
    for (auto it = plays.rbegin(); it != plays.rend(); ++it) {  // newest first
      const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(it->options_json)).object();
      auto* item =
          new QTreeWidgetItem(kept_, {QDateTime::fromSecsSinceEpoch(qint64(it->created)).toString("MM-dd hh:mm:ss"),
                                      QString::number(it->step), QString::fromStdString(it->prompt).section('\n', 0, 0),
                                      tr("t %1 · k %2 · p %3 · %4 tokens · seed %5")
                                          .arg(o.value("temperature").toDouble())
                                          .arg(o.value("top_k").toInteger())
                                          .arg(o.value("top_p").toDouble())
                                          .arg(o.value("tokens").toInteger())
                                          .arg(o.value("seed").toInteger())});
      item->setData(0, Qt::UserRole, QString::fromStdString(it->text));
      item->setData(2, Qt::UserRole, QString::fromStdString(it->prompt));
    }
  } catch (const std::exception& e) {
    message_->setText(QString::fromUtf8(e.what()));
  }
}

void PlaygroundView::showKept() {
  QTreeWidgetItem* item = kept_->currentItem();
  if (!item || isGenerating()) return;
  sides_[0].output->setPlainText(item->data(0, Qt::UserRole).toString());
}

void PlaygroundView::generate() {
  if (isGenerating()) return;
  const int n = sideBySide_->isChecked() ? 2 : 1;
  for (int i = 0; i < n; ++i)
    if (sides_[i].run->currentData().toString().isEmpty() || sides_[i].step->currentIndex() < 0) {
      message_->setText(tr("Pick a run with a checkpoint on the %1 first").arg(i == 0 ? tr("left") : tr("right")));
      return;
    }
  message_->setText(n == 2 ? tr("Generating on both checkpoints…") : tr("Generating…"));
  for (int i = 0; i < n; ++i) {
    Side& s = sides_[i];
    s.events = 0;
    s.output->clear();
    QStringList args{"generate",
                     "--run",
                     s.run->currentData().toString(),
                     "--step",
                     QString::number(s.step->currentData().toLongLong()),
                     "--prompt",
                     prompt_->toPlainText(),
                     "--tokens",
                     QString::number(tokens_->value()),
                     "--temperature",
                     QString::number(temperature_->value()),
                     "--top-k",
                     QString::number(topK_->value()),
                     "--top-p",
                     QString::number(topP_->value()),
                     "--seed",
                     QString::number(seed_->value()),
                     "--device",
                     "cpu",
                     "--json",
                     "--stream",
                     "--keep"};
    if (!db_.isEmpty()) args << "--db" << db_;
    s.job->startEngine(args);
  }
  updateButtons();
}

void PlaygroundView::stop() {
  for (Side& s : sides_)
    if (s.job->isRunning()) s.job->cancel();
}

void PlaygroundView::onSideFinished(int i, const QString& error) {
  if (!error.isEmpty())
    message_->setText(error == QLatin1String("cancelled") ? tr("Stopped") : tr("Failed: %1").arg(error));
  if (isGenerating()) return;
  if (error.isEmpty() && !message_->text().startsWith(tr("Failed")))
    message_->setText(tr("Kept with the run (%1)").arg(sideBySide_->isChecked() ? tr("both sides") : tr("left")));
  fillKept();
  updateButtons();
  Q_EMIT finished();
}

void PlaygroundView::updateButtons() {
  const bool busy = isGenerating();
  generate_->setEnabled(!busy && sides_[0].run->count() > 0);
  stop_->setEnabled(busy);
}

}  // namespace tokamak::ui
