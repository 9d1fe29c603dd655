// DatasetBox: the data source of a run (default corpus, a text file, a folder of text files, token shards)
// and its token count. Counting tokenizes the text the first time (cached after that), so it runs on a
// background thread with a progress bar and a cancel button; the GUI never waits for it.
#pragma once
#include <string>
#include <QGroupBox>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "engine/base/data/dataset_list.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QThread;
class QTimer;

namespace tokamak::ui {

class DatasetCatalog;

class DatasetBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit DatasetBox(QWidget* parent = nullptr);
  ~DatasetBox() override;

  QString path() const;  // "default" or what the user chose: the value of data.path
  void setPath(const QString& path);
  // data.jsonl_field: which field of a JSON-lines file holds the text (the token count reads it too).
  void setJsonlField(const std::string& field) { jsonlField_ = field; }
  // Why the path cannot be used ("" when it can): shown with the config problems, keeps Start disabled.
  QString problem() const;
  QString tokenSummary() const;  // the last count's one-line description, "" before it is known
  bool isCounting() const { return counter_ != nullptr; }
  // Where the run trains: "" = this computer; else an SSH host, whose data paths are its own (not checked or
  // counted here) and whose DATASETS (`tokamak datasets` there, from "Test connection") fill "On the host".
  void setHost(const QString& host, const std::vector<tokamak::DatasetListing>& datasets = {});
  QString host() const { return host_; }
  // The Hub catalog row ("Get…"): this computer's only; hidden while a host is chosen.
  DatasetCatalog* catalog() const { return catalog_; }

 public Q_SLOTS:
  void countTokens();
  void cancelCount();

 Q_SIGNALS:
  void pathChanged();
  void countFinished(bool ok);

 private:
  std::string jsonlField_ = "text";
  void kindChanged();
  void browse();
  void progressed(qulonglong done, qulonglong total);
  void counted(const QString& summary, const QString& error);
  void pickHostDataset(int index);

  QComboBox* kind_;
  DatasetCatalog* catalog_;
  QLabel* catalogLabel_;
  QComboBox* hostData_;  // the host's datasets (shown only for a host)
  QLabel* hostLabel_;
  QString host_;
  std::vector<tokamak::DatasetListing> hostDatasets_;
  QLineEdit* path_;
  QPushButton* browse_;
  QPushButton* count_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* tokens_;
  QTimer* debounce_;
  QThread* counter_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancelFlag_;
  QString summary_;
  bool loading_ = false;
};

}  // namespace tokamak::ui
