// DatasetBox: choose a data source, count its tokens off the GUI thread (see dataset_box.h).
#include "ui/setup/dataset_box.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QTimer>

#include "engine/base/data/dataset.h"
#include "ui/setup/dataset_catalog.h"
#include "ui/setup/key_bindings.h"

namespace tokamak::ui {
namespace {
enum Kind { kDefault, kTextFile, kFolder, kShards };
}

DatasetBox::DatasetBox(QWidget* parent) : QGroupBox(tr("Dataset"), parent) {
  kind_ = new QComboBox;
  kind_->setObjectName("datasetKind");
  kind_->addItem(tr("Default corpus (The Jargon File)"));
  kind_->addItem(tr("Text file"));
  kind_->addItem(tr("Folder of text files"));
  kind_->addItem(tr("Token shards (.bin, folder or glob)"));
  kind_->setItemData(kShards, tr("llm.c token shards; FineWeb's come from the Hub with Get…"), Qt::ToolTipRole);
  path_ = new QLineEdit;
  path_->setObjectName("data.path");
  path_->setToolTip(keyTip("data.path"));  // the dataset box writes the key itself (kind + path), unbound
  path_->setPlaceholderText(tr("path"));
  browse_ = new QPushButton(tr("Browse…"));
  count_ = new QPushButton(tr("Count tokens"));
  count_->setToolTip(tr("Tokenizes the text once (cached afterwards) and shows how many tokens it holds"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setObjectName("cancelCount");
  progress_ = new QProgressBar;
  tokens_ = new QLabel;
  tokens_->setObjectName("tokenCount");
  tokens_->setWordWrap(true);
  tokens_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_->hide();
  cancel_->hide();

  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(path_, 1);
  pathRow->addWidget(browse_);
  auto* countRow = new QHBoxLayout;
  countRow->addWidget(count_);
  countRow->addWidget(progress_, 1);
  countRow->addWidget(cancel_);
  hostData_ = new QComboBox;
  hostData_->setObjectName("hostDatasets");
  hostData_->setToolTip(
      tr("What the host has ready to train on: its default corpus, text it has tokenized, "
         "token shards in its data folder's datasets/ (docs/REMOTE.md)"));
  hostLabel_ = new QLabel(tr("On the host"));
  auto* form = new QFormLayout(this);
  form->addRow(hostLabel_, hostData_);
  hostLabel_->hide(), hostData_->hide();
  catalog_ = new DatasetCatalog;
  catalogLabel_ = new QLabel(tr("From the Hub"));
  form->addRow(catalogLabel_, catalog_);
  form->addRow(tr("Source"), kind_);
  form->addRow(tr("Path"), pathRow);
  form->addRow(countRow);
  form->addRow(tokens_);

  // Typing a path counts it once the typing stops, not on every key.
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(600);
  connect(debounce_, &QTimer::timeout, this, [this] {
    if (problem().isEmpty()) countTokens();
  });
  connect(kind_, &QComboBox::currentIndexChanged, this, &DatasetBox::kindChanged);
  connect(path_, &QLineEdit::textChanged, this, [this] {
    summary_.clear();
    tokens_->clear();
    if (!loading_) debounce_->start();
    Q_EMIT pathChanged();
  });
  connect(browse_, &QPushButton::clicked, this, &DatasetBox::browse);
  connect(hostData_, &QComboBox::activated, this, &DatasetBox::pickHostDataset);
  connect(catalog_, &DatasetCatalog::chosen, this, [this](const QString& dir) {
    setPath(dir);
    countTokens();
  });
  connect(count_, &QPushButton::clicked, this, &DatasetBox::countTokens);
  connect(cancel_, &QPushButton::clicked, this, &DatasetBox::cancelCount);
  kindChanged();
}

DatasetBox::~DatasetBox() {
  // The counting thread refers to nothing of this widget, but it must not outlive the application.
  if (counter_) {
    *cancelFlag_ = true;
    counter_->wait();
  }
}

QString DatasetBox::path() const {
  return kind_->currentIndex() == kDefault ? QString("default") : path_->text().trimmed();
}

void DatasetBox::setPath(const QString& p) {
  loading_ = true;
  if (p.isEmpty() || p == "default") {
    kind_->setCurrentIndex(kDefault);
  } else {
    QFileInfo fi(p);
    const bool shards =
        p.endsWith(".bin") || p.contains('*') || (fi.isDir() && !QDir(p).entryList({"*.bin"}, QDir::Files).isEmpty());
    kind_->setCurrentIndex(shards ? kShards : fi.isDir() ? kFolder : kTextFile);
    path_->setText(p);
  }
  loading_ = false;
  Q_EMIT pathChanged();
}

QString DatasetBox::problem() const {
  if (kind_->currentIndex() == kDefault) return {};
  const QString p = path_->text().trimmed();
  if (p.isEmpty()) return tr("data.path is empty: choose a file or folder, or the default corpus");
  if (p.contains('*') || !host_.isEmpty()) return {};  // a glob (the engine expands it), or the host's path
  if (!QFileInfo::exists(p)) return tr("data.path '%1' does not exist: choose an existing file or folder").arg(p);
  return {};
}

QString DatasetBox::tokenSummary() const { return summary_; }

void DatasetBox::setHost(const QString& host, const std::vector<tokamak::DatasetListing>& datasets) {
  host_ = host;
  hostDatasets_ = datasets;
  hostData_->clear();
  if (datasets.empty()) hostData_->addItem(tr("Test the connection to list the host's datasets"));
  else hostData_->addItem(tr("%n dataset(s) on %1", nullptr, int(datasets.size())).arg(host));
  for (const tokamak::DatasetListing& d : datasets)
    hostData_->addItem(QString::fromStdString(d.name + " — " + d.description), QString::fromStdString(d.path));
  hostLabel_->setVisible(!host.isEmpty());
  hostData_->setVisible(!host.isEmpty());
  kindChanged();
}

void DatasetBox::pickHostDataset(int index) {
  if (index < 1 || index > int(hostDatasets_.size())) return;
  const tokamak::DatasetListing& d = hostDatasets_[index - 1];
  loading_ = true;  // the host's path: nothing to count here
  kind_->setCurrentIndex(d.kind == "default" ? kDefault : d.kind == "shards" ? kShards : kTextFile);
  if (d.kind != "default") path_->setText(QString::fromStdString(d.path));
  loading_ = false;
  summary_ = QString::fromStdString(d.description);
  tokens_->setText(tr("on %1: %2").arg(host_, summary_));
  Q_EMIT pathChanged();
}

void DatasetBox::kindChanged() {
  // The Hub's datasets are token shards, and this computer's (docs/DATASETS.md: --host fetches on a host):
  // the row shows with "Token shards", or while a download goes on, and costs the first window no height.
  const bool hub =
      host_.isEmpty() && (kind_->currentIndex() == kShards || !catalog_->downloads()->downloads().isEmpty());
  catalogLabel_->setVisible(hub);
  catalog_->setVisible(hub);
  const bool own = kind_->currentIndex() != kDefault;
  path_->setEnabled(own);
  browse_->setEnabled(own && host_.isEmpty());  // a file dialog shows this computer's files, not the host's
  count_->setEnabled(host_.isEmpty() && !counter_);
  summary_.clear();
  tokens_->clear();
  if (!loading_) {
    Q_EMIT pathChanged();
    debounce_->start();
  }
}

void DatasetBox::browse() {
  QString chosen;
  switch (kind_->currentIndex()) {
    case kTextFile:
      chosen = QFileDialog::getOpenFileName(this, tr("Text file"), path_->text());
      break;
    case kFolder:
      chosen = QFileDialog::getExistingDirectory(this, tr("Folder of text files"), path_->text());
      break;
    case kShards:
      chosen = QFileDialog::getOpenFileName(this, tr("Token shard"), path_->text(), tr("llm.c shards (*.bin)"));
      break;
    default:
      return;
  }
  if (!chosen.isEmpty()) path_->setText(chosen);
}

void DatasetBox::countTokens() {
  if (counter_ || !problem().isEmpty() || !host_.isEmpty()) return;  // a host's data are counted there
  const std::string source = path().toStdString();
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  cancelFlag_ = cancel;
  QPointer<DatasetBox> self(this);
  counter_ = QThread::create([self, source, cancel, field = jsonlField_] {
    QString summary, error;
    try {
      PreparedDataset d = prepare_dataset(
          source,
          [&](uint64_t done, uint64_t total) {
            if (self)
              QMetaObject::invokeMethod(
                  self,
                  [self, done, total] {
                    if (self) self->progressed(done, total);
                  },
                  Qt::QueuedConnection);
            return !cancel->load();
          },
          field);
      summary = QString::fromStdString(d.description);
      if (d.val_tokens > 0) summary += tr(" (+ %L1 validation tokens)").arg(d.val_tokens);
    } catch (const std::exception& e) {
      error = cancel->load() ? tr("counting cancelled") : QString::fromUtf8(e.what());
    } catch (...) {  // a tokenizer library's own exception type: a QThread body that throws ends the studio
      error = cancel->load() ? tr("counting cancelled") : tr("counting failed: an error that is no std::exception");
    }
    if (self)
      QMetaObject::invokeMethod(
          self,
          [self, summary, error] {
            if (self) self->counted(summary, error);
          },
          Qt::QueuedConnection);
  });
  connect(counter_, &QThread::finished, counter_, &QObject::deleteLater);
  count_->setEnabled(false);
  progress_->setRange(0, 0);  // busy until the first progress report says how much there is
  progress_->show();
  cancel_->show();
  tokens_->setText(tr("counting…"));
  counter_->start();
}

void DatasetBox::cancelCount() {
  if (cancelFlag_) *cancelFlag_ = true;
}

void DatasetBox::progressed(qulonglong done, qulonglong total) {
  if (total == 0) return;
  progress_->setRange(0, 1000);
  progress_->setValue(static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)));
}

void DatasetBox::counted(const QString& summary, const QString& error) {
  counter_ = nullptr;  // deletes itself once finished
  progress_->hide();
  cancel_->hide();
  count_->setEnabled(true);
  summary_ = summary;
  tokens_->setText(error.isEmpty() ? summary : error);
  Q_EMIT countFinished(error.isEmpty());
}

}  // namespace tokamak::ui
