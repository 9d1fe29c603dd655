// DatasetCatalog: the catalog row of the dataset picker and its Get… dialog (see dataset_catalog.h).
#include "ui/setup/dataset_catalog.h"
#include "ui/common/qt_helpers.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tokamak::ui {
namespace {

// How many train shards to fetch, with the tokens and the disk they take; 0 when the user declines.
int askShards(QWidget* parent, const CatalogEntry& e) {
  QDialog d(parent);
  d.setWindowTitle(QObject::tr("Get %1").arg(e.name));
  auto* shards = new QSpinBox;
  shards->setObjectName("getShards");
  shards->setRange(1, e.trainShards);
  shards->setValue(qMin(qMax(e.trainPresent, 2), e.trainShards));  // 2 shards: enough for small models
  auto* need = new QLabel;
  need->setWordWrap(true);
  auto update = [&] {
    const int n = shards->value();
    // Every shard but the last is shard_bytes long; the val shard comes too. What is here is not fetched again.
    const qint64 total = (n + 1) * e.shardBytes;
    need->setText(QObject::tr("%L1 train tokens (+ the validation shard): %2 on disk, about %3 still to fetch")
                      .arg(n * e.shardTokens)
                      .arg(data_size(total), data_size(qMax<qint64>(0, total - e.bytesPresent))));
  };
  QObject::connect(shards, &QSpinBox::valueChanged, &d, update);
  update();
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(QObject::tr("Get"));
  QObject::connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  auto* form = new QFormLayout(&d);
  form->addRow(new QLabel(QObject::tr("%1 (%2): %3").arg(e.name, e.repo, e.about)));
  form->addRow(QObject::tr("Train shards (of %1)").arg(e.trainShards), shards);
  form->addRow(need);
  form->addRow(new QLabel(QObject::tr("Into %1. The download goes on when the studio closes.").arg(e.path)));
  form->addRow(buttons);
  return d.exec() == QDialog::Accepted ? shards->value() : 0;
}

}  // namespace

DatasetCatalog::DatasetCatalog(QWidget* parent) : QWidget(parent), get_(new DatasetGet(this)) {
  list_ = new QComboBox;
  list_->setObjectName("datasetCatalog");
  list_->setToolTip(
      tr("Token-shard datasets on the Hugging Face Hub (docs/DATASETS.md), and how much of each "
         "this computer has; choose one that is here to train on it"));
  list_->addItem(tr("listing…"));
  // Entries name their sizes and can be long; the setup's column sets the width, not they.
  list_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  list_->setMinimumContentsLength(12);
  getButton_ = new QPushButton(tr("Get…"));
  getButton_->setObjectName("getDataset");
  getButton_->setToolTip(tr("Download shards of this dataset from the Hub (resumable; goes on if the studio closes)"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setObjectName("cancelGet");
  cancel_->setToolTip(tr("Stop the download; what came stays for the next Get…"));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  status_ = new QLabel;
  status_->setObjectName("getStatus");
  status_->setWordWrap(true);
  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(list_, 1);
  row->addWidget(getButton_);
  auto* progressRow = new QHBoxLayout;
  progressRow->addWidget(progress_, 1);
  progressRow->addWidget(cancel_);
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->addLayout(row);
  column->addLayout(progressRow);
  column->addWidget(status_);

  connect(list_, &QComboBox::currentIndexChanged, this, [this] {
    status_->clear();  // the last word was about another entry
    showCurrent();
  });
  connect(list_, &QComboBox::activated, this, &DatasetCatalog::activated);
  connect(getButton_, &QPushButton::clicked, this, &DatasetCatalog::askAndGet);
  connect(cancel_, &QPushButton::clicked, this, &DatasetCatalog::cancelGet);
  connect(get_, &DatasetGet::catalogChanged, this, &DatasetCatalog::fill);
  connect(get_, &DatasetGet::catalogFailed, this, [this](const QString& why) {
    list_->setItemText(0, tr("no catalog"));
    status_->setText(why);
    status_->setVisible(true);
  });
  connect(get_, &DatasetGet::progressed, this, [this](const QString& name) {
    if (name == currentName()) showCurrent();
  });
  connect(get_, &DatasetGet::finished, this, [this](const QString& name, const QString& error) {
    if (name != currentName()) return;
    showCurrent();
    status_->setText(error.isEmpty() ? tr("%1: every file is in place").arg(name) : name + ": " + error);
    status_->setVisible(true);
  });
  showCurrent();
  get_->refreshCatalog();
}

QString DatasetCatalog::currentName() const { return list_->currentData().toString(); }

void DatasetCatalog::select(const QString& name) {
  const int i = list_->findData(name);
  if (i >= 0) list_->setCurrentIndex(i);
}

void DatasetCatalog::fill() {
  const QString keep = currentName();
  const QSignalBlocker quiet(list_);
  list_->clear();
  for (const CatalogEntry& e : get_->catalog()) {
    list_->addItem(e.name + " — " + e.state(), e.name);
    list_->setItemData(list_->count() - 1, e.repo + ": " + e.about, Qt::ToolTipRole);
  }
  const QStringList getting = get_->downloads();
  // What an earlier studio is fetching is what the user wants to see first.
  const QString show = !keep.isEmpty() ? keep : getting.isEmpty() ? QString() : getting.first();
  if (list_->findData(show) >= 0) list_->setCurrentIndex(list_->findData(show));
  showCurrent();
}

void DatasetCatalog::showCurrent() {
  const QString name = currentName();
  const CatalogEntry* e = get_->entry(name);
  const bool getting = get_->isGetting(name);
  // A narrow column cuts the entry's text: its tooltip says it whole.
  if (e) list_->setToolTip(list_->currentText() + "\n" + e->repo + ": " + e->about);
  getButton_->setEnabled(e && !getting && !e->present());
  cancel_->setVisible(getting);
  progress_->setVisible(getting);
  if (getting) {
    const DownloadState s = get_->state(name);
    progress_->setValue(s.total > 0 ? int(1000.0 * double(s.done) / double(s.total)) : 0);
    status_->setText(tr("fetching %1: %2").arg(name, s.total > 0 ? s.text() : tr("starting…")));
  }
  status_->setVisible(!status_->text().isEmpty());  // one line less in the setup while there is nothing to say
}

void DatasetCatalog::activated(int) {
  const CatalogEntry* e = get_->entry(currentName());
  if (e && e->usable() && !get_->isGetting(e->name)) Q_EMIT chosen(e->path);
}

void DatasetCatalog::askAndGet() {
  const CatalogEntry* e = get_->entry(currentName());
  if (!e) return;
  const CatalogEntry copy = *e;  // the catalog may be listed again while the dialog is open
  if (const int n = askShards(this, copy); n > 0)
    if (const QString why = getShards(copy.name, n); !why.isEmpty())
      QMessageBox::warning(this, tr("Get %1").arg(copy.name), why);
}

QString DatasetCatalog::getShards(const QString& name, int shards) {
  const QString why = get_->start(name, shards);
  select(name);
  showCurrent();
  return why;
}

void DatasetCatalog::cancelGet() { get_->cancel(currentName()); }

}  // namespace tokamak::ui
